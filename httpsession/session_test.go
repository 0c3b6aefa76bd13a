package httpsession_test

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"weak"

	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/httpsession"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestOpenWithEraHintSendsNoDiscover(t *testing.T) {
	g, url := newServer(t, nil)
	s := open(t, url, httpsession.Options{Era: httpsession.Era2025, Stream: httpsession.StreamOff})
	callEcho(t, s.ClientSession())
	assert.Zero(t, g.count("POST", "server/discover"))
	assert.Equal(t, 1, g.count("POST", "initialize"))
	assert.Equal(t, "2025-11-25", s.ProtocolVersion())
	assert.NotEmpty(t, s.ID())
	assert.Equal(t, s.ClientSession().ID(), s.ID())
}

func TestOpenWithoutHintTriesDiscoverFirst(t *testing.T) {
	g, url := newServer(t, nil)
	s, err := httpsession.Open(context.Background(), httpsession.Options{Endpoint: url, Stream: httpsession.StreamOff})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	callEcho(t, s.ClientSession())
	assert.Equal(t, 1, g.count("POST", "server/discover"))
}

func TestCloseSendsDeleteDetachDoesNot(t *testing.T) {
	g, url := newServer(t, nil)
	s := open(t, url, httpsession.Options{Stream: httpsession.StreamOff})
	require.NoError(t, s.Detach())
	assert.Zero(t, g.count("DELETE", ""))

	s2 := open(t, url, httpsession.Options{Stream: httpsession.StreamOff})
	require.NoError(t, s2.Close())
	assert.Equal(t, 1, g.count("DELETE", ""))
}

func TestResumeBlindSendsNoInitialize(t *testing.T) {
	g, url := newServer(t, nil)
	st := blindState(t, url)
	before := len(g.requests())

	s, err := httpsession.Resume(context.Background(), httpsession.Options{Endpoint: url}, st)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	assert.True(t, s.Blind())
	assert.Nil(t, s.InitializeResult())
	assert.Equal(t, st.SessionID, s.ID())

	tools, err := s.ClientSession().ListTools(context.Background(), nil)
	require.NoError(t, err)
	require.Len(t, tools.Tools, 1)
	callEcho(t, s.ClientSession())
	require.Eventually(t, func() bool { return g.count("GET", "") >= 1 }, 5*time.Second, 5*time.Millisecond)

	after := g.requests()[before:]
	require.NotEmpty(t, after)
	for _, r := range after {
		assert.NotEqual(t, "initialize", r.Method)
		assert.NotEqual(t, "notifications/initialized", r.Method)
		assert.Equal(t, st.SessionID, r.SessionID, "%s %s", r.Verb, r.Method)
		assert.Equal(t, st.ProtocolVersion, r.ProtocolVersion, "%s %s", r.Verb, r.Method)
	}
	assert.Equal(t, 1, g.count("POST", "initialize"), "only the first session's handshake")
}

func TestResumeKnownUsesPersistedCapabilities(t *testing.T) {
	g, url := newServer(t, nil)
	first := open(t, url, httpsession.Options{Stream: httpsession.StreamOff})
	st := first.ResumeState()
	require.NotNil(t, st.InitializeResult)
	require.NoError(t, first.Detach())

	s, err := httpsession.Resume(context.Background(), httpsession.Options{Endpoint: url, Stream: httpsession.StreamOff}, st)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	assert.False(t, s.Blind())
	require.NotNil(t, s.InitializeResult().Capabilities.Tools)
	assert.Equal(t, "test-server", s.InitializeResult().ServerInfo.Name)
	callEcho(t, s.ClientSession())
	assert.Equal(t, 1, g.count("POST", "initialize"))
}

func TestResumeDiscoveryResultOf20260728Server(t *testing.T) {
	// go-sdk serves the 2026-07-28 protocol on a stateless handler only.
	g, url := newServer(t, &mcp.StreamableHTTPOptions{Stateless: true})
	first, err := httpsession.Open(context.Background(), httpsession.Options{Endpoint: url, Era: httpsession.Era20260728})
	require.NoError(t, err)
	t.Cleanup(func() { _ = first.Close() })
	st := first.ResumeState()
	require.Equal(t, "2026-07-28", st.ProtocolVersion)
	require.Empty(t, st.SessionID)
	require.NoError(t, first.Close())
	require.Equal(t, 1, g.count("POST", "server/discover"))

	s, err := httpsession.Resume(context.Background(), httpsession.Options{Endpoint: url}, st)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	callEcho(t, s.ClientSession())
	assert.Equal(t, 1, g.count("POST", "server/discover"), "the resume reused the persisted result")
	assert.Zero(t, g.count("POST", "initialize"))
	assert.Equal(t, "test-server", s.InitializeResult().ServerInfo.Name)
}

func TestResumeStateRefused(t *testing.T) {
	cases := []struct {
		name  string
		st    httpsession.ResumeState
		field string
	}{
		{"space in id", httpsession.ResumeState{SessionID: "a b", ProtocolVersion: "2025-11-25"}, "session_id"},
		{"control in id", httpsession.ResumeState{SessionID: "a\x01", ProtocolVersion: "2025-11-25"}, "session_id"},
		{"non-ASCII id", httpsession.ResumeState{SessionID: "é", ProtocolVersion: "2025-11-25"}, "session_id"},
		{"long id", httpsession.ResumeState{SessionID: string(make([]byte, httpsession.MaxSessionIDLen+1)), ProtocolVersion: "2025-11-25"}, "session_id"},
		{"empty version", httpsession.ResumeState{SessionID: "abc"}, "protocol_version"},
		{"malformed version", httpsession.ResumeState{SessionID: "abc", ProtocolVersion: "2025-1-25x"}, "protocol_version"},
		{"unsupported version", httpsession.ResumeState{SessionID: "abc", ProtocolVersion: "2001-01-01"}, "protocol_version"},
		{"2026 with id", httpsession.ResumeState{SessionID: "abc", ProtocolVersion: "2026-07-28", InitializeResult: &mcp.InitializeResult{}}, "session_id"},
		{"2026 blind", httpsession.ResumeState{ProtocolVersion: "2026-07-28"}, "initialize_result"},
		{"version mismatch", httpsession.ResumeState{SessionID: "abc", ProtocolVersion: "2025-11-25", InitializeResult: &mcp.InitializeResult{ProtocolVersion: "2025-06-18"}}, "initialize_result"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := httpsession.Resume(context.Background(), httpsession.Options{Endpoint: "http://127.0.0.1:1"}, c.st)
			require.ErrorIs(t, err, httpsession.ErrInvalidState)
			var se *httpsession.StateError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, c.field, se.Field)
		})
	}
	require.NoError(t, httpsession.ResumeState{ProtocolVersion: "2025-11-25"}.Validate(), "sessionless server")
}

func TestServerSentSessionIDMustBeVisibleASCII(t *testing.T) {
	g, url := newServer(t, nil)
	g.setFault(func(w http.ResponseWriter, r *http.Request, method string, n int) bool {
		if method != "initialize" {
			return false
		}
		rec := &headerRewriter{ResponseWriter: w}
		g.next.ServeHTTP(rec, r)
		return true
	})
	_, err := httpsession.Open(context.Background(), httpsession.Options{Endpoint: url, Era: httpsession.Era2025, Stream: httpsession.StreamOff})
	var se *httpsession.StateError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "Mcp-Session-Id", se.Field)
	assert.Equal(t, classify.Protocol, classify.Classify(context.Background(), err).Class, "%v", err)
	assert.Equal(t, 1, g.count("DELETE", ""), "the session the server created is ended, once")
}

// Streamable HTTP, Session Management: "The session ID ... MUST only contain
// visible ASCII characters (ranging from 0x21 to 0x7E)"; ours are at most
// MaxSessionIDLen bytes. The refusal of one says what was wrong, its length
// or its first bad byte, never the id, and it says so after the redactor's
// pass too: it reads nothing of the text as a session id.
func TestRefusedSessionIDTextSurvivesRedaction(t *testing.T) {
	long := strings.Repeat("a", 4*httpsession.MaxSessionIDLen)
	for id, want := range map[string]string{
		long:     "4096 bytes, more than 1024",
		"bad id": "byte 3 is 0x20, not visible ASCII (0x21-0x7E)",
	} {
		g, url := newServer(t, nil)
		g.setFault(func(w http.ResponseWriter, r *http.Request, method string, n int) bool {
			if method != "initialize" {
				return false
			}
			g.next.ServeHTTP(&headerRewriter{ResponseWriter: w, id: id}, r)
			return true
		})
		_, err := httpsession.Open(context.Background(), httpsession.Options{Endpoint: url, Era: httpsession.Era2025, Stream: httpsession.StreamOff})
		require.Error(t, err)
		var r events.Redactor
		text := r.Text(err.Error())
		assert.Contains(t, text, "invalid Mcp-Session-Id ("+want+")", "%q", text)
		assert.Contains(t, text, "invalid session state: Mcp-Session-Id ("+want+")", "%q", text)
		assert.NotContains(t, text, "sid:", "nothing read as a session id: %q", text)
		assert.NotContains(t, err.Error(), id, "the id is not quoted")
		v := classify.Classify(context.Background(), err)
		assert.Contains(t, r.Verdict(v).Detail, want)
	}
}

// headerRewriter replaces the session id with id ("bad id" when empty).
type headerRewriter struct {
	http.ResponseWriter
	id    string
	wrote bool
}

func (h *headerRewriter) WriteHeader(code int) {
	if !h.wrote {
		h.wrote = true
		h.Header().Set("Mcp-Session-Id", cmp.Or(h.id, "bad id"))
	}
	h.ResponseWriter.WriteHeader(code)
}

func (h *headerRewriter) Write(b []byte) (int, error) {
	if !h.wrote {
		h.WriteHeader(http.StatusOK)
	}
	return h.ResponseWriter.Write(b)
}

func (h *headerRewriter) Flush() {
	if !h.wrote {
		h.WriteHeader(http.StatusOK)
	}
	if f, ok := h.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// TestRewriteKeepsSession: answers go-sdk would treat as fatal cost only the
// request they answer (failure story S4).
func TestRewriteKeepsSession(t *testing.T) {
	cases := []struct {
		name      string
		method    string
		stateless bool
		status    int
		ct, body  string
		class     classify.Class
		maxJSON   int
	}{
		{"403 HTML", "tools/call", false, 403, "text/html", "<html>denied</html>", classify.Forbidden, 0},
		{"400 plain", "tools/call", false, 400, "text/plain", "bad request", classify.Application, 0},
		{"413", "tools/call", false, 413, "text/plain", "too large", classify.Application, 0},
		{"422 no body", "tools/call", false, 422, "", "", classify.Application, 0},
		{"404 without session id", "tools/call", true, 404, "text/plain", "not found", classify.Application, 0},
		{"200 text/html", "tools/call", false, 200, "text/html", "<html>login</html>", classify.Protocol, 0},
		{"200 undecodable JSON", "tools/call", false, 200, "application/json", "{not json", classify.Protocol, 0},
		{"400 plain on prompts/get", "prompts/get", false, 400, "text/plain", "no", classify.Application, 0},
		{"403 HTML on tools/list", "tools/list", false, 403, "text/html", "<html/>", classify.Forbidden, 0},
		{"200 JSON over MaxJSONBody", "tools/call", false, 200, "application/json",
			`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 256) + `"}]}}`, classify.Protocol, 128},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, url := newServer(t, &mcp.StreamableHTTPOptions{Stateless: c.stateless})
			s := open(t, url, httpsession.Options{Stream: httpsession.StreamOff, Wire: httpsession.Config{MaxJSONBody: c.maxJSON}})
			cs := s.ClientSession()
			g.setFault(func(w http.ResponseWriter, r *http.Request, method string, n int) bool {
				if method != c.method || n > 0 {
					return false
				}
				writeFault(w, c.status, c.ct, c.body, nil)
				return true
			})
			ctx := httpsession.WithExchange(context.Background())
			var err error
			switch c.method {
			case "tools/call":
				_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
			case "prompts/get":
				_, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet"})
			case "tools/list":
				_, err = cs.ListTools(ctx, nil)
			}
			require.Error(t, err, "go-sdk failed this request only, with the rewritten answer")
			assert.Contains(t, err.Error(), "HTTP "+strconv.Itoa(c.status), "go-sdk's text of the rewritten answer is kept")
			var facts *classify.HTTPError
			require.ErrorAs(t, err, &facts, "the error carries the wire facts (FactsMiddleware)")
			var rpcErr *jsonrpc.Error
			assert.False(t, errors.As(err, &rpcErr), "the verdict rests on the server's answer, not the rewrite")
			annotated := httpsession.Annotate(ctx, err)
			assert.Same(t, err, annotated, "an error that carries facts is not annotated twice")
			v := classify.Classify(ctx, annotated)
			assert.Equal(t, c.class, v.Class, "verdict %v", v)
			assert.Equal(t, c.status, v.HTTPStatus)
			assert.Equal(t, c.method, v.Method)

			callEcho(t, cs)
			_, err = cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "greet"})
			require.NoError(t, err)
			assert.Equal(t, 1, g.count("POST", "initialize"), "no new handshake")
			x, ok := httpsession.LastExchange(ctx)
			require.True(t, ok)
			assert.True(t, x.Rewritten)
			assert.Equal(t, c.status, x.Status)
		})
	}
}

// TestBareGoSDKLosesSessionOn403 shows what the rewrite prevents.
func TestBareGoSDKLosesSessionOn403(t *testing.T) {
	g, url := newServer(t, nil)
	client := mcp.NewClient(&mcp.Implementation{Name: "bare", Version: "v0"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	defer cs.Close()
	g.setFault(func(w http.ResponseWriter, r *http.Request, method string, n int) bool {
		if method != "tools/call" || n > 0 {
			return false
		}
		writeFault(w, 403, "text/html", "<html/>", nil)
		return true
	})
	_, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
	require.Error(t, err)
	_, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
	require.ErrorIs(t, err, mcp.ErrConnectionClosed)
}

func TestTransientStatusAnnotated(t *testing.T) {
	cases := []struct {
		name   string
		status int
		header map[string]string
		class  classify.Class
		retry  time.Duration
	}{
		{"500", 500, nil, classify.ServerError, 0},
		{"429 seconds", 429, map[string]string{"Retry-After": "7"}, classify.RateLimited, 7 * time.Second},
		{"429 date", 429, map[string]string{"Retry-After": "Wed, 21 Oct 2015 07:28:30 GMT"}, classify.RateLimited, 30 * time.Second},
		{"429 far-future date", 429, map[string]string{"Retry-After": "Fri, 31 Dec 9999 23:59:59 GMT"}, classify.RateLimited, classify.MaxRetryAfter},
		{"429 seconds past a year", 429, map[string]string{"Retry-After": "99999999999"}, classify.RateLimited, classify.MaxRetryAfter},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, url := newServer(t, nil)
			clock := clockwork.NewFakeClockAt(time.Date(2015, 10, 21, 7, 28, 0, 0, time.UTC))
			s := open(t, url, httpsession.Options{Stream: httpsession.StreamOff, Wire: httpsession.Config{Clock: clock}})
			g.setFault(func(w http.ResponseWriter, r *http.Request, method string, n int) bool {
				if method != "tools/call" || n > 0 {
					return false
				}
				writeFault(w, c.status, "text/plain", "slow down", c.header)
				return true
			})
			ctx := httpsession.WithExchange(context.Background())
			_, err := s.ClientSession().CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
			require.Error(t, err)
			v := classify.Classify(ctx, httpsession.Annotate(ctx, err))
			assert.Equal(t, c.class, v.Class)
			assert.Equal(t, c.status, v.HTTPStatus)
			assert.Equal(t, c.retry, v.RetryAfter)
			x, _ := httpsession.LastExchange(ctx)
			assert.True(t, x.Rewritten, "the call fails alone with an error response of the conn's")
			assert.Equal(t, "slow down", x.Body)
			callEcho(t, s.ClientSession())
			assert.Equal(t, 1, g.count("POST", "initialize"))
		})
	}
}

func TestSessionExpirySignalsEndTheSession(t *testing.T) {
	cases := []struct {
		name     string
		status   int
		ct, body string
		missing  bool
	}{
		{"404 with session id", 404, "text/plain", "session not found", true},
		{"400 null-id -32000", 400, "application/json",
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}`, false},
		{"400 absent-id -32000", 400, "application/json",
			`{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, url := newServer(t, nil)
			var mu sync.Mutex
			var deletes []httpsession.Exchange
			s := open(t, url, httpsession.Options{Stream: httpsession.StreamOff, Wire: httpsession.Config{OnExchange: func(x httpsession.Exchange) {
				if x.Verb == http.MethodDelete {
					mu.Lock()
					deletes = append(deletes, x)
					mu.Unlock()
				}
			}}})
			g.setFault(func(w http.ResponseWriter, r *http.Request, method string, n int) bool {
				if method != "tools/call" {
					return false
				}
				writeFault(w, c.status, c.ct, c.body, nil)
				return true
			})
			ctx := httpsession.WithExchange(context.Background())
			_, err := s.ClientSession().CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
			require.Error(t, err)
			v := classify.Classify(ctx, httpsession.Annotate(ctx, err))
			assert.Equal(t, classify.SessionExpired, v.Class, "verdict %v", v)
			assert.True(t, v.SessionIDSent)
			x, _ := httpsession.LastExchange(ctx)
			assert.True(t, x.SessionGone)
			if c.missing {
				assert.ErrorIs(t, err, mcp.ErrSessionMissing)
			}
			waitEnded(t, s)
			require.NoError(t, s.Close())
			assert.Zero(t, g.count("DELETE", ""), "a gone session is not deleted on the wire")
			mu.Lock()
			defer mu.Unlock()
			assert.Empty(t, deletes, "a gone session is not deleted")
		})
	}
}

// A 401 on a call costs that call only: the server still knows the session,
// and the host's refreshed credential serves the next call on it.
func TestUnauthorizedKeepsTheSession(t *testing.T) {
	g, url := newServer(t, nil)
	s := open(t, url, httpsession.Options{Stream: httpsession.StreamOff})
	g.setFault(func(w http.ResponseWriter, r *http.Request, method string, n int) bool {
		if method != "tools/call" || n > 0 {
			return false
		}
		writeFault(w, 401, "text/plain", "no", map[string]string{"WWW-Authenticate": `Bearer realm="x"`})
		return true
	})
	ctx := httpsession.WithExchange(context.Background())
	_, err := s.ClientSession().CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
	require.Error(t, err)
	v := classify.Classify(ctx, httpsession.Annotate(ctx, err))
	assert.Equal(t, classify.Unauthorized, v.Class)
	assert.Equal(t, 401, v.HTTPStatus)
	x, _ := httpsession.LastExchange(ctx)
	assert.True(t, x.Rewritten)
	assert.Equal(t, `Bearer realm="x"`, x.WWWAuthenticate)

	callEcho(t, s.ClientSession())
	assert.Equal(t, 1, g.count("POST", "initialize"), "no new handshake")
	assert.Zero(t, g.count("DELETE", ""), "the server-side session was not deleted")
}

// TestJSONRPCErrorWithIDIsNotRewritten: a JSON-RPC error answering the
// request by id, on a 4xx or a 2xx application/json answer, reaches go-sdk
// as sent and its code reaches the verdict.
func TestJSONRPCErrorWithIDIsNotRewritten(t *testing.T) {
	for _, status := range []int{400, 200} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			g, url := newServer(t, nil)
			s := open(t, url, httpsession.Options{Stream: httpsession.StreamOff})
			g.setFault(func(w http.ResponseWriter, r *http.Request, method string, n int) bool {
				if method != "tools/call" || n > 0 {
					return false
				}
				writeFault(w, status, "application/json", `{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Method not found"}}`, nil)
				return true
			})
			ctx := httpsession.WithExchange(context.Background())
			_, err := s.ClientSession().CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
			require.Error(t, err)
			v := classify.Classify(ctx, httpsession.Annotate(ctx, err))
			assert.Equal(t, classify.MethodNotFound, v.Class)
			x, _ := httpsession.LastExchange(ctx)
			assert.False(t, x.Rewritten)
			assert.False(t, x.Malformed)
			require.True(t, x.RPC.Present, "the body's JSON-RPC error was recorded")
			assert.Equal(t, int64(-32601), x.RPC.Code)
			assert.Equal(t, "2", x.BodyRPCID)
			callEcho(t, s.ClientSession())
		})
	}
}

func TestAnnotateLeavesPlainErrorsAlone(t *testing.T) {
	err := errors.New("boom")
	assert.Same(t, err, httpsession.Annotate(context.Background(), err))
	assert.Same(t, err, httpsession.Annotate(httpsession.WithExchange(context.Background()), err))
	assert.NoError(t, httpsession.Annotate(httpsession.WithExchange(context.Background()), nil))
}

// TestRequestErrorCarriesTheRecordedExchange: the facts a failed request's
// error carries are the Exchange the Transport recorded and reported, the
// one facts type classify reads, field for field.
func TestRequestErrorCarriesTheRecordedExchange(t *testing.T) {
	g, url := newServer(t, nil)
	var mu sync.Mutex
	var seen []httpsession.Exchange
	s := open(t, url, httpsession.Options{Stream: httpsession.StreamOff, Wire: httpsession.Config{OnExchange: func(x httpsession.Exchange) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, x)
	}}})
	g.setFault(func(w http.ResponseWriter, r *http.Request, method string, n int) bool {
		if method != "tools/call" || n > 0 {
			return false
		}
		writeFault(w, 403, "text/html", "<h1>forbidden</h1>", map[string]string{"Retry-After": "7"})
		return true
	})
	_, err := s.ClientSession().CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
	var he *classify.HTTPError
	require.ErrorAs(t, err, &he)
	mu.Lock()
	last := seen[len(seen)-1]
	mu.Unlock()
	assert.Equal(t, "tools/call", last.Method)
	assert.Equal(t, last, he.Exchange, "the error carries the recorded exchange")
	assert.Equal(t, 403, he.Status)
	assert.Equal(t, 7*time.Second, he.RetryAfter)
	assert.True(t, he.Rewritten, "a 403 to a call is rewritten to keep the session")
	assert.Equal(t, classify.Forbidden, classify.Classify(context.Background(), err).Class)
}

// TestUnsentRequestSaysSo: once go-sdk's connection has failed (a session-gone
// answer), it fails the next call without sending it; that call's error is
// a *classify.NotSentError, which classify takes for a failed connection.
func TestUnsentRequestSaysSo(t *testing.T) {
	g, url := newServer(t, nil)
	s := open(t, url, httpsession.Options{Stream: httpsession.StreamOff})
	g.setFault(func(w http.ResponseWriter, r *http.Request, method string, n int) bool {
		if method != "tools/call" {
			return false
		}
		writeFault(w, 404, "text/plain", "session not found", nil)
		return true
	})
	params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}}
	_, err := s.ClientSession().CallTool(context.Background(), params)
	require.Error(t, err)
	assert.Equal(t, classify.SessionExpired, classify.Classify(context.Background(), err).Class)
	sent := g.count("POST", "tools/call")

	_, err = s.ClientSession().CallTool(context.Background(), params)
	require.Error(t, err)
	assert.Equal(t, sent, g.count("POST", "tools/call"), "the second call was not sent")
	var ns *classify.NotSentError
	require.ErrorAs(t, err, &ns, "%v", err)
	_, hasFacts := errors.AsType[*classify.HTTPError](err)
	assert.False(t, hasFacts, "no exchange, no HTTP facts")
	assert.Equal(t, classify.Transport, classify.Classify(context.Background(), err).Class)
}

// go-sdk keeps the context Connect got for the session's life (its reader's
// root): Open lets go of the caller's once the handshake returned, so a live
// session holds neither a dial's context nor what that carries.
func TestOpenLetsGoOfTheCallersContext(t *testing.T) {
	_, url := newServer(t, nil)
	type key struct{}
	carried := new([256]byte)
	held := weak.Make(carried)
	ctx, cancel := context.WithTimeout(context.WithValue(context.Background(), key{}, carried), time.Minute)
	s, err := httpsession.Open(ctx, httpsession.Options{Endpoint: url, Era: httpsession.Era2025, Stream: httpsession.StreamOff})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	cancel()
	ctx, carried = nil, nil
	callEcho(t, s.ClientSession()) // the live session's connection serves a request of its own
	runtime.GC()
	runtime.GC()
	require.True(t, held.Value() == nil, "the caller's context is still reachable from the session")
}

// A 403 to a call whose insufficient_scope challenge stands in a second
// WWW-Authenticate field line is Unauthorized, as with one line (RFC 9110
// sections 5.3 and 11.6.1; MCP 2025-11-25 basic/authorization, Runtime
// Insufficient Scope Errors): the exchange keeps every line.
func TestInsufficientScopeInASecondChallengeLine(t *testing.T) {
	g, url := newServer(t, nil)
	s := open(t, url, httpsession.Options{Stream: httpsession.StreamOff})
	g.setFault(func(w http.ResponseWriter, r *http.Request, method string, n int) bool {
		if method != "tools/call" || n > 0 {
			return false
		}
		w.Header().Add("WWW-Authenticate", `Basic realm="legacy"`)
		w.Header().Add("WWW-Authenticate", `Bearer error="insufficient_scope", scope="files:write"`)
		writeFault(w, 403, "application/json", `{}`, nil)
		return true
	})
	_, err := s.ClientSession().CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
	var he *classify.HTTPError
	require.ErrorAs(t, err, &he)
	assert.Equal(t, 403, he.Status)
	assert.Equal(t, classify.Unauthorized, classify.Classify(context.Background(), err).Class)
}
