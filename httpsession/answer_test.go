package httpsession_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/httpsession"
	"github.com/mcpsup/mcpsup/mcptest"
)

// countingBase counts the bytes read from every answer's body, as they
// came off the connection (before any decoding by the Transport).
type countingBase struct {
	base http.RoundTripper
	n    atomic.Int64
}

func (c *countingBase) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(r)
	if err == nil {
		resp.Body = &countingBody{ReadCloser: resp.Body, n: &c.n}
	}
	return resp, err
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// hostile is a fixture: a real go-sdk server behind mcptest's gateway and
// one wire session on it, its answer bytes counted.
type hostile struct {
	srv  *mcptest.Server
	sess *httpsession.Session
	read *countingBase
}

func newHostile(t *testing.T, mode mcptest.Mode, cfg httpsession.Config) *hostile {
	t.Helper()
	srv, err := mcptest.NewServer(mcptest.Options{Mode: mode})
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	read := &countingBase{base: srv.HTTPClient().Transport}
	era := httpsession.Era2025
	if mode == mcptest.Sessionless2026 {
		era = httpsession.Era20260728
	}
	sess, err := httpsession.Open(context.Background(), httpsession.Options{
		Endpoint:   srv.URL(),
		HTTPClient: &http.Client{Transport: read},
		Era:        era,
		Stream:     httpsession.StreamOff,
		Wire:       cfg,
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sess.Close() })
	return &hostile{srv: srv, sess: sess, read: read}
}

// call calls RecordTool with id and returns the error annotated with the
// call's wire facts, the verdict, and the answer bytes read for it.
func (h *hostile) call(t *testing.T, id string) (classify.Verdict, int64, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ctx = httpsession.WithExchange(ctx)
	before := h.read.n.Load()
	res, err := h.sess.ClientSession().CallTool(ctx, &mcp.CallToolParams{Name: mcptest.RecordTool, Arguments: mcptest.IDArgs{ID: id}})
	read := h.read.n.Load() - before
	if err == nil && res.IsError {
		err = errors.New("tool error")
	}
	err = httpsession.Annotate(ctx, err)
	return classify.Classify(context.Background(), err), read, err
}

// requireAlive checks that the session survived: a plain call succeeds on
// it, one initialize and no DELETE ever reached the server.
func (h *hostile) requireAlive(t *testing.T) {
	t.Helper()
	h.srv.Gateway().Clear()
	v, _, err := h.call(t, "after")
	require.NoError(t, err, "the session serves the next call (verdict %v)", v)
	assert.Equal(t, 1, h.srv.Log().Count("initialize"), "no new session")
	assert.Zero(t, h.srv.Log().CountVerb(http.MethodDelete), "no DELETE")
	assert.Equal(t, 1, h.srv.Invocations(mcptest.RecordTool, "after"))
}

// answerCase is one hostile answer to a tools/call.
type answerCase struct {
	name    string
	action  mcptest.Action
	class   classify.Class
	maxRead int64 // bytes of the answer read at most; 0: not checked
}

func (c answerCase) run(t *testing.T, cfg httpsession.Config) {
	h := newHostile(t, mcptest.Stateful2025, cfg)
	h.srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Verb: http.MethodPost, Method: "tools/call"}, Action: c.action})
	v, read, err := h.call(t, "x")
	if c.class == classify.None {
		require.NoError(t, err)
	} else {
		require.Error(t, err)
		assert.Equal(t, c.class, v.Class, "verdict %v", v)
	}
	if c.maxRead > 0 {
		t.Logf("answer bytes read: %d", read)
		assert.LessOrEqual(t, read, c.maxRead, "answer bytes read")
	}
	h.requireAlive(t)
}

func json200(body string) mcptest.Action { return mcptest.JSONBody(body) }

// TestAnswerIDs: an answer is the answer to its request, or a protocol
// failure of that call, at once, in a JSON body or an event stream.
func TestAnswerIDs(t *testing.T) {
	sse := func(msgs ...string) mcptest.Action {
		var lines []string
		for _, m := range msgs {
			lines = append(lines, mcptest.SSEMessage(m)...)
		}
		return mcptest.SSE(lines...)
	}
	cases := []answerCase{
		{"JSON wrong id", json200(mcptest.BodyWrongID), classify.Protocol, 0},
		{"JSON no result nor error", json200(mcptest.BodyNoResult), classify.Protocol, 0},
		{"JSON null result", json200(mcptest.BodyNullResult), classify.Protocol, 0},
		{"JSON result not an object", json200(`{"jsonrpc":"2.0","id":$ID,"result":[1]}`), classify.Protocol, 0},
		{"JSON result and error", json200(`{"jsonrpc":"2.0","id":$ID,"result":{},"error":{"code":1,"message":"x"}}`), classify.Protocol, 0},
		{"JSON notification in place of the response", json200(mcptest.BodyNotification), classify.Protocol, 0},
		{"JSON batch", json200(`[` + mcptest.BodyToolResult + `]`), classify.Protocol, 0},
		{"JSON string id for a number id", json200(`{"jsonrpc":"2.0","id":"$ID","result":{"content":[]}}`), classify.Protocol, 0},
		{"JSON well-formed", json200(mcptest.BodyToolResult), classify.None, 0},
		{"202 to a call", mcptest.Empty(http.StatusAccepted), classify.Protocol, 0},
		{"SSE wrong id", sse(mcptest.BodyWrongID), classify.Protocol, 0},
		{"SSE null result", sse(mcptest.BodyNullResult), classify.Protocol, 0},
		{"SSE no result", sse(mcptest.BodyNoResult), classify.Protocol, 0},
		{"SSE notification, then the stream ends", sse(mcptest.BodyNotification), classify.Protocol, 0},
		{"SSE notification, then the response", sse(mcptest.BodyNotification, mcptest.BodyToolResult), classify.None, 0},
		{"SSE server request, then the response", sse(`{"jsonrpc":"2.0","id":77,"method":"ping"}`, mcptest.BodyToolResult), classify.None, 0},
		{"SSE priming event, then the response", mcptest.SSE(append([]string{"id: 1", "data:", ""}, mcptest.SSEMessage(mcptest.BodyToolResult)...)...), classify.None, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, httpsession.Config{}) })
	}
}

// TestAnswerAnotherCallsResult: a response carrying the id of another call
// in flight fails the call it answered, and does not complete the other.
func TestAnswerAnotherCallsResult(t *testing.T) {
	for _, shape := range []string{"json", "sse"} {
		t.Run(shape, func(t *testing.T) {
			h := newHostile(t, mcptest.Stateful2025, httpsession.Config{})
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			blocked := make(chan error, 1)
			go func() {
				res, err := h.sess.ClientSession().CallTool(ctx, &mcp.CallToolParams{Name: mcptest.BlockTool, Arguments: mcptest.IDArgs{ID: "b"}})
				if err == nil && (len(res.Content) == 0 || res.IsError) {
					err = errors.New("empty result")
				}
				if err == nil {
					if tc, ok := res.Content[0].(*mcp.TextContent); ok && tc.Text == "not yours" {
						err = errors.New("the blocked call got the other call's answer")
					}
				}
				blocked <- err
			}()
			require.NoError(t, h.srv.WaitBlocked(ctx, "b"))
			action := mcptest.JSONBody(mcptest.BodyPrevCall)
			if shape == "sse" {
				action = mcptest.SSE(mcptest.SSEMessage(mcptest.BodyPrevCall)...)
			}
			h.srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Verb: http.MethodPost, Method: "tools/call"}, Action: action})
			v, _, err := h.call(t, "x")
			require.Error(t, err)
			assert.Equal(t, classify.Protocol, v.Class, "verdict %v", v)
			assert.Contains(t, err.Error(), "not the request's id")
			h.srv.Release("b")
			require.NoError(t, <-blocked, "the blocked call gets its own answer")
			h.requireAlive(t)
		})
	}
}

// TestAnswerEventStreams: whatever a call's event stream holds, the call
// fails alone (protocol), the session lives, and go-sdk never resumes the
// stream with a GET.
func TestAnswerEventStreams(t *testing.T) {
	const maxEvent = 64 << 10
	cases := []answerCase{
		{"line without a colon", mcptest.SSE("garbage", ""), classify.Protocol, 0},
		{"data not JSON-RPC", mcptest.SSE("data: {not json", ""), classify.Protocol, 0},
		{"data JSON but not JSON-RPC", mcptest.SSE(`data: {"hello":1}`, ""), classify.Protocol, 0},
		{"binary garbage", mcptest.SSE("\x00\xff\xfe:\x01", "", "data: \x00", ""), classify.Protocol, 0},
		{"ends without the response", mcptest.SSE(": keepalive", ""), classify.Protocol, 0},
		{"ends mid-event", mcptest.SSE("data: {\"jsonrpc\":\"2.0\",\"id\":$ID,"), classify.Protocol, 0},
		{"oversized event", mcptest.Large(http.StatusOK, http.Header{"Content-Type": {"text/event-stream"}}, "data: ", 64<<20, 'x'), classify.Protocol, 1 << 20},
		{"oversized line of blanks", mcptest.Large(http.StatusOK, http.Header{"Content-Type": {"text/event-stream"}}, "data:", 64<<20, ' '), classify.Protocol, 1 << 20},
		{"gzip oversized event", mcptest.Gzip(mcptest.Large(http.StatusOK, http.Header{"Content-Type": {"text/event-stream"}}, "data: ", 512<<20, 'x')), classify.Protocol, 1 << 20},
		{"gzip well-formed", mcptest.Gzip(mcptest.SSE(mcptest.SSEMessage(mcptest.BodyToolResult)...)), classify.None, 0},
		{"unknown Content-Encoding", mcptest.Respond(http.StatusOK, http.Header{"Content-Type": {"text/event-stream"}, "Content-Encoding": {"br"}}, []byte("data: x\n\n")), classify.Protocol, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.run(t, httpsession.Config{MaxSSEEvent: maxEvent})
		})
	}
}

// TestAnswerStreamResumed: a call's stream that ends before the response
// after an event id is resumed by the Transport (GET with Last-Event-ID),
// never by go-sdk; a refused or fruitless resumption fails the call alone.
func TestAnswerStreamResumed(t *testing.T) {
	priming := mcptest.SSE("id: 1", "retry: 1", "data:", "")
	cases := []struct {
		name   string
		get    mcptest.Action
		class  classify.Class
		gets   int
		reason string
	}{
		{"resumed with the response", mcptest.SSE(append([]string{"id: 2"}, mcptest.SSEMessage(`{"jsonrpc":"2.0","id":$PREV_ID,"result":{"content":[]}}`)...)...), classify.None, 1, ""},
		{"resumed with a BOM before the response", mcptest.SSE("\xEF\xBB\xBFdata: "+`{"jsonrpc":"2.0","id":$PREV_ID,"result":{"content":[]}}`, ""), classify.None, 1, ""},
		{"refused 400", mcptest.PlainText(http.StatusBadRequest, "no such stream"), classify.Protocol, 1, "resumption of the SSE stream refused: HTTP 400"},
		{"refused 404", mcptest.PlainText(http.StatusNotFound, "gone"), classify.Protocol, 1, "resumption of the SSE stream refused: HTTP 404"},
		{"answered JSON", mcptest.JSONBody(mcptest.BodyToolResult), classify.Protocol, 1, "refused: HTTP 200 OK (application/json)"},
		{"no progress", priming, classify.Protocol, 3, "ended without the response"},
		{"garbage after resuming", mcptest.SSE("garbage"), classify.Protocol, 1, "without a colon"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHostile(t, mcptest.Stateful2025, httpsession.Config{})
			gw := h.srv.Gateway()
			gw.Add(mcptest.Rule{Match: mcptest.Match{Verb: http.MethodPost, Method: "tools/call"}, Action: priming})
			gw.Add(mcptest.Rule{Match: mcptest.Match{Verb: http.MethodGet}, Action: c.get})
			v, _, err := h.call(t, "x")
			if c.class == classify.None {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
				assert.Equal(t, c.class, v.Class, "verdict %v", v)
				assert.Contains(t, err.Error(), c.reason)
			}
			assert.Equal(t, c.gets, h.srv.Log().CountVerb(http.MethodGet), "resumptions")
			for _, e := range h.srv.Log().Entries() {
				if e.Verb == http.MethodGet {
					assert.Equal(t, h.sess.ID(), e.SessionID, "a resumption carries the session id")
				}
			}
			h.requireAlive(t)
		})
	}
}

// TestAnswerBounds: every body is read with a bound, on the wire and
// decoded; past it the request fails alone.
func TestAnswerBounds(t *testing.T) {
	const bound = 64 << 10
	cfg := httpsession.Config{MaxJSONBody: bound, MaxErrorBody: bound}
	big := int64(64 << 20)
	bomb := int64(512 << 20) // gzip: about 519 KiB on the wire
	jsonHdr := http.Header{"Content-Type": {"application/json"}}
	textHdr := http.Header{"Content-Type": {"text/plain"}}
	result := `{"jsonrpc":"2.0","id":$ID,"result":{"content":[{"type":"text","text":"`
	rpcErr := `{"jsonrpc":"2.0","id":$ID,"error":{"code":-32603,"message":"boom"}}`
	limit := int64(2 * bound)
	cases := []answerCase{
		{"JSON over the bound", mcptest.Large(200, jsonHdr, result, big, 'x'), classify.Protocol, limit},
		{"gzip bomb JSON", mcptest.Gzip(mcptest.Large(200, jsonHdr, result, bomb, 'x')), classify.Protocol, limit},
		{"gzip JSON well-formed", mcptest.Gzip(mcptest.JSONBody(mcptest.BodyToolResult)), classify.None, 0},
		{"400 JSON-RPC error then padding", mcptest.Large(400, jsonHdr, rpcErr, big, ' '), classify.Application, limit},
		{"400 JSON-RPC error within the bound", mcptest.Template(400, jsonHdr, rpcErr), classify.Application, 0},
		{"400 plain, large", mcptest.Large(400, textHdr, "", big, 'a'), classify.Application, limit},
		{"403 gzip bomb", mcptest.Gzip(mcptest.Large(403, textHdr, "", bomb, 'a')), classify.Forbidden, limit},
		{"500 large", mcptest.Large(500, textHdr, "", big, 'a'), classify.ServerError, limit},
		{"429 gzip bomb", mcptest.Gzip(mcptest.Large(429, textHdr, "", bomb, 'a')), classify.RateLimited, limit},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, cfg) })
	}
	t.Run("404 with session id, large", func(t *testing.T) {
		h := newHostile(t, mcptest.Stateful2025, cfg)
		h.srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Verb: http.MethodPost, Method: "tools/call"}, Action: mcptest.Large(404, textHdr, "", big, 'a')})
		v, read, err := h.call(t, "x")
		require.Error(t, err)
		assert.Equal(t, classify.SessionExpired, v.Class, "a 404 to a request with a session id: the session is gone")
		assert.LessOrEqual(t, read, limit)
	})
}

// TestAnswerToNotificationNeverFatal: whatever answers a notification's
// POST, it is recorded and the session lives; its body is read with a bound.
func TestAnswerToNotificationNeverFatal(t *testing.T) {
	const bound = 64 << 10
	textHdr := http.Header{"Content-Type": {"text/plain"}}
	cases := []struct {
		name   string
		action mcptest.Action
		status int
	}{
		{"400 plain", mcptest.PlainText(400, "bad"), 400},
		{"404", mcptest.PlainText(404, "gone?"), 404},
		{"500 large", mcptest.Large(500, textHdr, "", 64<<20, 'a'), 500},
		{"403 gzip bomb", mcptest.Gzip(mcptest.Large(403, textHdr, "", 512<<20, 'a')), 403},
		{"302", mcptest.Redirect(302, "/elsewhere"), 302},
		{"200 with a body", mcptest.JSONBody(mcptest.BodyToolResult), 200},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv, err := mcptest.NewServer(mcptest.Options{})
			require.NoError(t, err)
			t.Cleanup(srv.Close)
			read := &countingBase{base: srv.HTTPClient().Transport}
			seen := make(chan httpsession.Exchange, 16)
			client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "v0"}, nil)
			sess, err := httpsession.Open(context.Background(), httpsession.Options{
				Endpoint: srv.URL(), HTTPClient: &http.Client{Transport: read}, Client: client,
				Era: httpsession.Era2025, Stream: httpsession.StreamOff,
				Wire: httpsession.Config{MaxErrorBody: bound, OnExchange: func(x httpsession.Exchange) {
					if x.Method == "notifications/roots/list_changed" {
						seen <- x
					}
				}},
			})
			require.NoError(t, err)
			defer sess.Close()
			srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Verb: http.MethodPost, Method: "notifications/roots/list_changed"}, Action: c.action})
			before := read.n.Load()
			//lint:ignore SA1019 roots/list_changed is the one client notification a test can send at will
			client.AddRoots(&mcp.Root{URI: "file:///tmp"}) // go-sdk notifies every session
			var x httpsession.Exchange
			select {
			case x = <-seen:
			case <-time.After(20 * time.Second):
				t.Fatal("no notification sent")
			}
			assert.Equal(t, c.status, x.Status, "recorded")
			assert.LessOrEqual(t, read.n.Load()-before, int64(2*bound))
			res, err := sess.ClientSession().CallTool(context.Background(), &mcp.CallToolParams{Name: mcptest.RecordTool, Arguments: mcptest.IDArgs{ID: "after"}})
			require.NoError(t, err, "the session lives")
			require.False(t, res.IsError)
			assert.Equal(t, 1, srv.Log().Count("initialize"))
			assert.Zero(t, srv.Log().CountVerb(http.MethodGet), "no redirect followed")
		})
	}
}

// TestAnswerRedirectsNotFollowed: a 3xx is the answer, naming its status;
// no request goes to the Location, with or without the session id, and a
// 303 never becomes a GET.
func TestAnswerRedirectsNotFollowed(t *testing.T) {
	var elsewhere atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		w.WriteHeader(http.StatusOK)
	}))
	defer other.Close()
	for _, status := range []int{301, 302, 303, 307, 308} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			h := newHostile(t, mcptest.Stateful2025, httpsession.Config{})
			h.srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Verb: http.MethodPost, Method: "tools/call"}, Action: mcptest.Redirect(status, other.URL+"/mcp")})
			v, _, err := h.call(t, "x")
			require.Error(t, err)
			assert.Equal(t, classify.Application, v.Class, "verdict %v", v)
			assert.Equal(t, status, v.HTTPStatus)
			assert.Contains(t, err.Error(), "redirect not followed")
			h.requireAlive(t)
			assert.Zero(t, elsewhere.Load(), "nothing sent to the other origin")
			assert.Zero(t, h.srv.Log().CountVerb(http.MethodGet), "no GET")
		})
	}
	t.Run("DELETE", func(t *testing.T) {
		h := newHostile(t, mcptest.Stateful2025, httpsession.Config{})
		h.srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Verb: http.MethodDelete}, Action: mcptest.Redirect(303, other.URL+"/mcp")})
		require.NoError(t, h.sess.Close())
		assert.Equal(t, 1, h.srv.Log().CountVerb(http.MethodDelete))
		assert.Zero(t, h.srv.Log().CountVerb(http.MethodGet), "the 303 did not become a GET")
		assert.Zero(t, elsewhere.Load())
	})
}

// TestAnswerSessionIDOnlyFromHandshake: an Mcp-Session-Id on a later answer
// is never adopted, for a stateful server or a sessionless one.
func TestAnswerSessionIDOnlyFromHandshake(t *testing.T) {
	for _, mode := range []mcptest.Mode{mcptest.Stateful2025, mcptest.Stateless2025} {
		t.Run(mode.String(), func(t *testing.T) {
			h := newHostile(t, mode, httpsession.Config{})
			first := h.sess.ID()
			h.srv.Gateway().Add(mcptest.Rule{
				Match:  mcptest.Match{Verb: http.MethodPost, Method: "tools/call", Occurrence: mcptest.First()},
				Action: mcptest.WithHeader(mcptest.Pass(), "Mcp-Session-Id", "adopt-me"),
			})
			_, _, err := h.call(t, "x")
			require.NoError(t, err, "the answer itself is fine")
			_, _, err = h.call(t, "y")
			require.NoError(t, err)
			entries := h.srv.Log().Entries()
			last := entries[len(entries)-1]
			assert.Equal(t, first, last.SessionID, "the next request carries the handshake's session id")
			id := httpsession.WireSessionID(h.sess)
			assert.Equal(t, first, id)
		})
	}
}

// TestAnswerInvalidHandshakeSessionID: an invalid session id fails the
// handshake as protocol, and the session the server created is ended.
func TestAnswerInvalidHandshakeSessionID(t *testing.T) {
	for _, id := range []string{"bad id", strings.Repeat("a", httpsession.MaxSessionIDLen+1), "caf\u00e9"} {
		t.Run(id[:min(len(id), 8)], func(t *testing.T) {
			srv, err := mcptest.NewServer(mcptest.Options{})
			require.NoError(t, err)
			t.Cleanup(srv.Close)
			srv.Gateway().Add(mcptest.Rule{
				Match:  mcptest.Match{Verb: http.MethodPost, Method: "initialize"},
				Action: mcptest.WithHeader(mcptest.Pass(), "Mcp-Session-Id", id),
			})
			_, err = httpsession.Open(context.Background(), httpsession.Options{Endpoint: srv.URL(), HTTPClient: srv.HTTPClient(), Era: httpsession.Era2025, Stream: httpsession.StreamOff})
			require.Error(t, err)
			var se *httpsession.StateError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, "Mcp-Session-Id", se.Field)
			assert.Equal(t, classify.Protocol, classify.Classify(context.Background(), err).Class, "%v", err)
			assert.Equal(t, 1, srv.Log().CountVerb(http.MethodDelete), "one DELETE ends the server's session")
			assert.Zero(t, srv.Log().Count("notifications/initialized"), "the handshake went no further")
		})
	}
}

// TestAnswerStreamKeepsConnection: a call's event stream read to its
// response leaves the connection reusable when the server ends the stream
// after it (as go-sdk's does): sequential calls share one connection.
// go-sdk hands the response to the caller before it closes the stream, on
// its own goroutine; each call waits for that close (AfterAnswers), so the
// next one finds the connection back in the pool.
func TestAnswerStreamKeepsConnection(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "v1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo"}, func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	var conns atomic.Int64
	hs := httptest.NewUnstartedServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	hs.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	hs.Start()
	t.Cleanup(func() {
		hs.Close()
		for ss := range srv.Sessions() {
			_ = ss.Close()
		}
	})
	s := open(t, hs.URL, httpsession.Options{HTTPClient: hs.Client(), Stream: httpsession.StreamOff})
	before := conns.Load()
	for range 20 {
		ctx := httpsession.WithExchange(context.Background())
		res, err := s.ClientSession().CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
		require.NoError(t, err)
		require.False(t, res.IsError)
		closed := make(chan struct{})
		httpsession.AfterAnswers(ctx, func() { close(closed) })
		within(t, closed, "the call's stream closed")
	}
	t.Logf("connections opened for 20 calls: %d", conns.Load()-before)
	assert.LessOrEqual(t, conns.Load()-before, int64(1), "20 calls, connections opened")
}

// TestAnswerStreamResumedWithoutMessagesIsBounded: a server that ends a
// call's stream after a priming event, and answers every resumption with
// another priming event whose id differs from the last (ids that go back and
// forth, a retry field of 1 ms), delivers nothing: the resumptions are
// bounded as those without a new id are, and the call fails alone. An
// attempt that hands on a message under a new id is progress.
func TestAnswerStreamResumedWithoutMessagesIsBounded(t *testing.T) {
	const enough = 40 // the GET that finally answers the call
	cases := []struct {
		name    string
		message []string // what each resumption carries after its id
		gets    int
	}{
		{"ids alone", []string{"retry: 1", "data:", ""}, 3},
		{"a notification each", append([]string{"retry: 1"}, mcptest.SSEMessage(mcptest.BodyNotification)...), enough},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHostile(t, mcptest.Stateful2025, httpsession.Config{})
			gw := h.srv.Gateway()
			attempt := func(id string) mcptest.Action { return mcptest.SSE(append([]string{"id: " + id}, c.message...)...) }
			gw.Add(mcptest.Rule{Match: mcptest.Match{Verb: http.MethodPost, Method: "tools/call"}, Action: mcptest.SSE("id: a", "retry: 1", "data:", "")})
			gw.Add(mcptest.Rule{Match: mcptest.Match{Verb: http.MethodGet, Occurrence: mcptest.From(enough)},
				Action: mcptest.SSE(append([]string{"id: z"}, mcptest.SSEMessage(`{"jsonrpc":"2.0","id":$PREV_ID,"result":{"content":[]}}`)...)...)})
			gw.Add(mcptest.Rule{Match: mcptest.Match{Verb: http.MethodGet, Header: mcptest.HeaderMatch{Name: "Last-Event-ID", Value: "a"}}, Action: attempt("b")})
			gw.Add(mcptest.Rule{Match: mcptest.Match{Verb: http.MethodGet, Header: mcptest.HeaderMatch{Name: "Last-Event-ID", Value: "b"}}, Action: attempt("a")})
			v, _, err := h.call(t, "x")
			if c.gets == enough {
				require.NoError(t, err)
			} else {
				require.Error(t, err, "after %d resumptions", h.srv.Log().CountVerb(http.MethodGet))
				assert.Equal(t, classify.Protocol, v.Class, "verdict %v", v)
				assert.Contains(t, err.Error(), "ended without the response")
			}
			assert.Equal(t, c.gets, h.srv.Log().CountVerb(http.MethodGet), "resumptions")
			h.requireAlive(t)
		})
	}
}

// TestAnswerStreamWithABOM: an event stream may start with a UTF-8 byte
// order mark, which the SSE parser strips (WHATWG HTML, server-sent events:
// the UTF-8 decode algorithm strips one leading BOM). Taken for part of the
// first field's name, it cost the first event: the response of a call
// whose stream began with it, and the call.
func TestAnswerStreamWithABOM(t *testing.T) {
	const bom = "\xEF\xBB\xBF"
	for _, c := range []struct {
		name  string
		lines []string
	}{
		{"before the response", append([]string{bom + "data: " + mcptest.BodyToolResult}, "")},
		{"before a priming event", append([]string{bom + "id: 1", "data:", ""}, mcptest.SSEMessage(mcptest.BodyToolResult)...)},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHostile(t, mcptest.Stateful2025, httpsession.Config{})
			h.srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Verb: http.MethodPost, Method: "tools/call"}, Action: mcptest.SSE(c.lines...)})
			v, _, err := h.call(t, "x")
			require.NoError(t, err, "verdict %v", v)
			h.requireAlive(t)
		})
	}
}
