package classify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests classify the errors a real go-sdk v1.8.0 client returns when a
// real go-sdk server's answer to tools/call is replaced by a chosen status and
// body. They record what go-sdk alone reports (no wire facts), which is why
// the wire layer's HTTPError exists.

// answer replaces the server's answer to the faulted method. id is the
// request's JSON-RPC id as raw JSON.
type answer func(w http.ResponseWriter, r *http.Request, id json.RawMessage)

// rig is a go-sdk server behind a handler that answers one JSON-RPC method
// with a chosen fault and passes everything else through.
type rig struct {
	ts     *httptest.Server
	fault  atomic.Pointer[answer]
	faults atomic.Int32 // requests answered by the fault
}

const faultMethod = "tools/call"

func newRig(t *testing.T, stateless bool) *rig {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "real", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: stateless})
	r := &rig{}
	r.ts = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			http.Error(w, "read", http.StatusInternalServerError)
			return
		}
		var msg struct {
			Method string          `json:"method"`
			ID     json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal(body, &msg) // a batch or empty body is passed through
		if f := r.fault.Load(); f != nil && msg.Method == faultMethod {
			r.faults.Add(1)
			(*f)(w, req, msg.ID)
			return
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, req)
	}))
	t.Cleanup(func() {
		r.ts.Close()
		// Sessions the client never ended (no DELETE after a 404 or a dead
		// server) live on in the handler until closed here.
		for ss := range srv.Sessions() {
			_ = ss.Close()
		}
	})
	return r
}

func (r *rig) set(a answer) { r.fault.Store(&a) }
func (r *rig) clear()       { r.fault.Store(nil) }

// connect opens a go-sdk session: a 2025 protocol version so no
// server/discover goes out first, and no standalone GET stream.
func (r *rig) connect(t *testing.T) *mcp.ClientSession {
	t.Helper()
	cs, err := connectTo(t.Context(), r.ts.URL)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func connectTo(ctx context.Context, endpoint string) (*mcp.ClientSession, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "classify-test", Version: "1"}, nil)
	return c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, DisableStandaloneSSE: true, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
}

func callEcho(ctx context.Context, cs *mcp.ClientSession) error {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo"})
	if err == nil && res.IsError {
		return errors.New("tool error")
	}
	return err
}

func status(code int, contentType, body string, headers ...string) answer {
	return func(w http.ResponseWriter, _ *http.Request, _ json.RawMessage) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(code)
		_, _ = io.WriteString(w, body)
	}
}

func rpcErrorWithID(code int, msg string) answer {
	return func(w http.ResponseWriter, _ *http.Request, id json.RawMessage) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%q}}`, id, code, msg)
	}
}

func hijackClose(w http.ResponseWriter, _ *http.Request, _ json.RawMessage) {
	c, _, err := http.NewResponseController(w).Hijack()
	if err == nil {
		_ = c.Close()
	}
}

func TestRealGoSDKErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer answer
		// want is the verdict of go-sdk's error alone.
		want Class
		// sessionDies: go-sdk closed the connection, so the next call fails
		// with mcp.ErrConnectionClosed (transport).
		sessionDies bool
		code        int64
	}{
		// Plain-text 400: go-sdk reports only "Bad Request" and kills the
		// connection. No typed fact: unknown.
		{name: "400 plain text", answer: status(400, "text/plain", "bad request"), want: Unknown, sessionDies: true},
		// S1: a JSON-RPC error with the request's id survives as
		// *jsonrpc.Error (status as text only), and the session lives.
		{name: "400 JSON-RPC -32601 with id", answer: rpcErrorWithID(-32601, "Method not found"), want: MethodNotFound, code: -32601},
		{name: "400 JSON-RPC -32602 with id", answer: rpcErrorWithID(-32602, "Invalid params"), want: Application, code: -32602},
		// S2: a null id makes go-sdk treat the body as text: "Bad Request",
		// no code, connection killed. Without wire facts this cannot be told
		// from any other 400.
		{name: "S2 400 JSON-RPC -32000 null id", answer: status(400, "application/json", s2Body), want: Unknown, sessionDies: true},
		{name: "401", answer: status(401, "text/plain", "unauthorized", "WWW-Authenticate", `Bearer realm="x"`), want: Unknown, sessionDies: true},
		{name: "403 HTML", answer: status(403, "text/html", htmlBody), want: Unknown, sessionDies: true},
		// A 404 on a request with a session id is mcp.ErrSessionMissing.
		{name: "404 with session id", answer: status(404, "text/plain", "session not found"), want: SessionExpired, sessionDies: true},
		// 429 and 5xx: a bare -32005, body and Retry-After discarded; the
		// session lives. A 429 cannot be told from a 500.
		{name: "429 text + Retry-After", answer: status(429, "text/plain", "slow down", "Retry-After", "30"), want: ServerError},
		{name: "500", answer: status(500, "text/plain", "boom"), want: ServerError},
		{name: "502", answer: status(502, "text/html", "<html>bad gateway</html>"), want: ServerError},
		// A 200 with an unexpected content type: text only, connection
		// killed.
		{name: "200 text/html", answer: status(200, "text/html", "<html>login</html>"), want: Unknown, sessionDies: true},
		// A 200 JSON body that is not JSON: go-sdk flattens the decode error
		// to text (%v), so the *json.SyntaxError is gone: unknown.
		{name: "200 malformed JSON", answer: status(200, "application/json", "{not json"), want: Unknown, sessionDies: true},
		// An event stream that ends without the response.
		{name: "200 empty event stream", answer: status(200, "text/event-stream", ""), want: Unknown},
		// The connection closed under the request: EOF inside a *url.Error.
		{name: "connection hijacked and closed", answer: hijackClose, want: Transport},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, false)
			cs := r.connect(t)
			require.NoError(t, callEcho(t.Context(), cs), "healthy before the fault")

			r.set(tc.answer)
			err := callEcho(t.Context(), cs)
			require.Error(t, err)
			assert.Equal(t, int32(1), r.faults.Load(), "the fault answered the call")
			v := Classify(t.Context(), err)
			assert.Equal(t, tc.want, v.Class, "go-sdk error %q gave %v", err, v)
			assert.Zero(t, v.HTTPStatus, "go-sdk carries no status code")
			if tc.code != 0 {
				assert.Equal(t, tc.code, v.RPC.Code)
				assert.True(t, v.RPC.HasID)
			}
			if tc.want == SessionExpired {
				assert.ErrorIs(t, err, mcp.ErrSessionMissing)
			}

			r.clear()
			next := callEcho(t.Context(), cs)
			if tc.sessionDies {
				require.ErrorIs(t, next, mcp.ErrConnectionClosed)
				assert.Equal(t, Transport, Classify(t.Context(), next).Class)
			} else {
				assert.NoError(t, next, "the session survived the answer")
			}
		})
	}
}

// TestRealGoSDKErrorsWithWireFacts: the same go-sdk errors, wrapped in the
// HTTP facts the wire layer records, reach the verdicts of DESIGN.md section 3.
func TestRealGoSDKErrorsWithWireFacts(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer answer
		facts  HTTPError
		want   Class
	}{
		{name: "S2 400 null-id -32000 with session id", answer: status(400, "application/json", s2Body),
			facts: HTTPError{Exchange: Exchange{Status: 400, SessionIDSent: true, Body: s2Body}}, want: SessionExpired},
		{name: "401", answer: status(401, "text/plain", "no"), facts: HTTPError{Exchange: Exchange{Status: 401, SessionIDSent: true}}, want: Unauthorized},
		{name: "403 insufficient_scope", answer: status(403, "text/plain", "no", "WWW-Authenticate", insufficient),
			facts: HTTPError{Exchange: Exchange{Status: 403, SessionIDSent: true, WWWAuthenticate: insufficient}}, want: Unauthorized},
		{name: "403 HTML", answer: status(403, "text/html", htmlBody), facts: HTTPError{Exchange: Exchange{Status: 403, SessionIDSent: true, Body: htmlBody}}, want: Forbidden},
		{name: "429 + Retry-After", answer: status(429, "text/plain", "slow", "Retry-After", "30"),
			facts: HTTPError{Exchange: Exchange{Status: 429, SessionIDSent: true, RetryAfter: 30 * time.Second}}, want: RateLimited},
		{name: "400 plain text", answer: status(400, "text/plain", "bad"), facts: HTTPError{Exchange: Exchange{Status: 400, SessionIDSent: true}}, want: Application},
		{name: "200 text/html", answer: status(200, "text/html", "<html>"), facts: HTTPError{Exchange: Exchange{Status: 200, SessionIDSent: true, ContentType: "text/html", Malformed: true}}, want: Protocol},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, false)
			cs := r.connect(t)
			r.set(tc.answer)
			sdkErr := callEcho(t.Context(), cs)
			require.Error(t, sdkErr)

			h := tc.facts
			h.Verb, h.Method, h.Err = "POST", faultMethod, sdkErr
			if b, ok := ParseRPCError([]byte(h.Body)); ok {
				h.RPC, h.BodyRPCID = b.RPCError, b.ID
			}
			v := Classify(t.Context(), fmt.Errorf("supervisor: %w", &h))
			assert.Equal(t, tc.want, v.Class, "%v", v)
			assert.Equal(t, tc.facts.Status, v.HTTPStatus)
			assert.Equal(t, tc.facts.RetryAfter, v.RetryAfter)
			assert.Equal(t, faultMethod, v.Method)
		})
	}
}

// TestRealGoSDK404WithoutSession: a stateless server has no session id, so
// go-sdk reports a 404 as text ("Not Found"), not mcp.ErrSessionMissing; with
// wire facts it is application, which never feeds a reconnect loop.
func TestRealGoSDK404WithoutSession(t *testing.T) {
	r := newRig(t, true)
	cs := r.connect(t)
	require.Empty(t, cs.ID(), "stateless server: no session id")
	r.set(status(404, "text/plain", "not found"))
	err := callEcho(t.Context(), cs)
	require.Error(t, err)
	assert.NotErrorIs(t, err, mcp.ErrSessionMissing)
	assert.Equal(t, Unknown, Classify(t.Context(), err).Class)
	v := Classify(t.Context(), &HTTPError{Exchange: Exchange{Verb: "POST", Method: faultMethod, Status: 404}, Err: err})
	assert.Equal(t, Application, v.Class)
	assert.False(t, v.Reconnects())
}

func TestRealConnectionRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())

	_, err = connectTo(t.Context(), "http://"+addr)
	require.Error(t, err)
	v := Classify(t.Context(), err)
	assert.Equal(t, Transport, v.Class, "connect: %q", err)
	assert.True(t, v.Reconnects())

	// A live session whose server goes away.
	r := newRig(t, false)
	cs := r.connect(t)
	r.ts.Close()
	err = callEcho(t.Context(), cs)
	require.Error(t, err)
	assert.Equal(t, Transport, Classify(t.Context(), err).Class, "call: %q", err)
}

// deadlineCtx is a context whose deadline passes when expire is called: our
// own deadline, without a wall clock.
type deadlineCtx struct {
	context.Context
	once sync.Once
	done chan struct{}
}

func newDeadlineCtx(parent context.Context) *deadlineCtx {
	return &deadlineCtx{Context: parent, done: make(chan struct{})}
}

func (c *deadlineCtx) expire()               { c.once.Do(func() { close(c.done) }) }
func (c *deadlineCtx) Done() <-chan struct{} { return c.done }
func (c *deadlineCtx) Err() error {
	select {
	case <-c.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

// TestRealCanceledAndTimeout: go-sdk returns ctx.Err() for a call whose
// context ends; the caller's context tells who ended it.
func TestRealCanceledAndTimeout(t *testing.T) {
	hold := func(arrived chan<- struct{}) answer {
		return func(w http.ResponseWriter, r *http.Request, _ json.RawMessage) {
			arrived <- struct{}{}
			<-r.Context().Done()
		}
	}
	t.Run("caller canceled", func(t *testing.T) {
		r := newRig(t, false)
		cs := r.connect(t)
		arrived := make(chan struct{}, 1)
		r.set(hold(arrived))
		ctx, cancel := context.WithCancel(t.Context())
		go func() { <-arrived; cancel() }()
		err := callEcho(ctx, cs)
		require.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, Canceled, Classify(ctx, err).Class)
		assert.Equal(t, Transport, Classify(t.Context(), err).Class, "not the live caller's cancel")
	})
	t.Run("our deadline", func(t *testing.T) {
		r := newRig(t, false)
		cs := r.connect(t)
		arrived := make(chan struct{}, 1)
		r.set(hold(arrived))
		callCtx := newDeadlineCtx(t.Context())
		go func() { <-arrived; callCtx.expire() }()
		err := callEcho(callCtx, cs)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, Timeout, Classify(t.Context(), err).Class, "the caller still waits")
		assert.Equal(t, Canceled, Classify(callCtx, err).Class, "the caller's own deadline")
		assert.Equal(t, Timeout, Classify(noCaller, err).Class)
	})
}

// go-sdk's client gives up on a call whose server answers input_required
// round after round (mrtr.mdx; go-sdk v1.8.0 mcp/mrtr.go): protocol, however
// wrapped; another multi-round-trip error of go-sdk's is not.
func TestGoSDKRoundsGiveUpIsProtocol(t *testing.T) {
	for _, err := range []error{
		errors.New("multi-round-trip: exceeded maximum retries (10)"),
		fmt.Errorf("multi-round-trip: exceeded maximum load-shedding retries (%d)", 3),
		&HTTPError{Exchange: Exchange{Verb: "POST", Method: "tools/call", Status: 200}, Err: errors.New("multi-round-trip: exceeded maximum retries (10)")},
	} {
		assert.Equal(t, Protocol, Classify(context.Background(), err).Class, "%v", err)
	}
	for _, err := range []error{
		errors.New("multi-round-trip: unsupported params type *mcp.X"),
		fmt.Errorf("call: %w", errors.New("the server said multi-round-trip: exceeded maximum retries (10)")),
	} {
		assert.Equal(t, Unknown, Classify(context.Background(), err).Class, "%v", err)
	}
}
