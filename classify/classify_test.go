package classify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// noCaller is the nil context Classify accepts when no caller's context is at
// hand.
var noCaller context.Context

// ctxKind selects the caller's context handed to Classify.
type ctxKind int

const (
	noCtx   ctxKind = iota // nil: no caller context at hand
	liveCtx                // the caller still waits
	doneCtx                // the caller gave up
)

func callerCtx(t *testing.T, k ctxKind) context.Context {
	switch k {
	case liveCtx:
		return t.Context()
	case doneCtx:
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		return ctx
	}
	return nil
}

const (
	s1Body       = `{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"Method not found"}}`
	s2Body       = `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}`
	s2BodyNoID   = `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}`
	paramsBody   = `{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Invalid params"}}`
	htmlBody     = `<html><body>Access denied</body></html>`
	insufficient = `Bearer realm="x", error="insufficient_scope", scope="a b"`
)

func refused() error {
	return &url.Error{Op: "Post", URL: "http://127.0.0.1:1", Err: &net.OpError{Op: "dial", Net: "tcp",
		Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}
}

func reset() error {
	return &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
}

type classCase struct {
	name string
	err  error
	ctx  ctxKind
	want Class
	// Facts checked when set.
	status     int
	code       int64
	retryAfter time.Duration
	sessionID  bool
}

func classCases() []classCase {
	return []classCase{
		// canceled
		{name: "context.Canceled, no ctx", err: context.Canceled, want: Canceled},
		{name: "context.Canceled %w, no ctx", err: fmt.Errorf("calling %q: %w", "tools/call", context.Canceled), want: Canceled},
		{name: "context.Canceled, caller done", err: context.Canceled, ctx: doneCtx, want: Canceled},
		{name: "any error, caller done", err: wire(500, true, "", sdkRejectedChain("tools/call", "Internal Server Error")), ctx: doneCtx, want: Canceled, status: 500},
		{name: "deadline, caller done", err: context.DeadlineExceeded, ctx: doneCtx, want: Canceled},
		{name: "context.Canceled, caller live: not the caller", err: fmt.Errorf("x: %w", context.Canceled), ctx: liveCtx, want: Transport},

		// unauthorized
		{name: "401", err: wire(401, true, "", sdkTextChain("tools/call", "Unauthorized")), want: Unauthorized, status: 401},
		{name: "403 insufficient_scope", err: &HTTPError{Exchange: Exchange{Status: 403, WWWAuthenticate: insufficient}}, want: Unauthorized, status: 403},
		{name: "403 insufficient_scope unquoted", err: &HTTPError{Exchange: Exchange{Status: 403, WWWAuthenticate: `Bearer error=insufficient_scope`}}, want: Unauthorized},

		// method-not-found
		{name: "*jsonrpc.Error -32601", err: &jsonrpc.Error{Code: -32601, Message: "Method not found"}, want: MethodNotFound, code: -32601},
		{name: "-32601 in go-sdk chain", err: sdkRPCChain("resources/templates/list", -32601, "Method not found", "Bad Request"), want: MethodNotFound, code: -32601},
		{name: "-32601 embedded in text", err: fmt.Errorf("Error POSTing to endpoint: %s", s1Body), want: MethodNotFound, code: -32601},
		{name: "-32601 in a 404 body with session id", err: wire(404, true, s1Body, nil), want: MethodNotFound, status: 404, code: -32601},

		// session-expired
		{name: "mcp.ErrSessionMissing", err: mcp.ErrSessionMissing, want: SessionExpired},
		{name: "mcp.ErrSessionMissing as go-sdk wraps it", err: fmt.Errorf("calling %q: %w", "tools/list", fmt.Errorf("sending %q: failed to connect (session ID: %v): %w", "tools/list", "abc", mcp.ErrSessionMissing)), want: SessionExpired},
		{name: "404 with session id", err: wire(404, true, "not found", nil), want: SessionExpired, status: 404, sessionID: true},
		{name: "S2 400 null-id -32000 with session id", err: wire(400, true, s2Body, sdkTextChain("tools/call", "Bad Request")), want: SessionExpired, status: 400, code: -32000, sessionID: true},
		{name: "S2 400 absent-id -32000 with session id", err: wire(400, true, s2BodyNoID, nil), want: SessionExpired, status: 400, code: -32000},

		// rate-limited
		{name: "429 + Retry-After", err: &HTTPError{Exchange: Exchange{Status: 429, RetryAfter: 30 * time.Second, Body: "slow down"}, Err: sdkRejectedChain("tools/call", "Too Many Requests")}, want: RateLimited, status: 429, retryAfter: 30 * time.Second},

		// forbidden
		{name: "403 HTML", err: wire(403, true, htmlBody, sdkTextChain("tools/call", "Forbidden")), want: Forbidden, status: 403},
		{name: "403 invalid_token", err: &HTTPError{Exchange: Exchange{Status: 403, WWWAuthenticate: `Bearer error="invalid_token"`}}, want: Forbidden},
		{name: "403 scope word inside another param", err: &HTTPError{Exchange: Exchange{Status: 403, WWWAuthenticate: `Bearer error_description="error=\"insufficient_scope\""`}}, want: Forbidden},

		// server-error
		{name: "500", err: wire(500, true, "boom", sdkRejectedChain("tools/call", "Internal Server Error")), want: ServerError, status: 500},
		{name: "502", err: wire(502, true, "", nil), want: ServerError, status: 502},
		{name: "bare -32005 (go-sdk 5xx/429 without wire facts)", err: sdkRejectedChain("tools/call", "Service Unavailable"), want: ServerError},

		// application
		{name: "*jsonrpc.Error -32602", err: &jsonrpc.Error{Code: -32602, Message: "Invalid params"}, want: Application, code: -32602},
		{name: "-32602 in go-sdk chain", err: sdkRPCChain("tools/call", -32602, "Invalid params", "Bad Request"), want: Application, code: -32602},
		{name: "400 plain text", err: wire(400, true, "bad", sdkTextChain("tools/call", "Bad Request")), want: Application, status: 400},
		{name: "404 without session id", err: wire(404, false, "not found", nil), want: Application, status: 404},
		{name: "404 with session id answering by id", err: wire(404, true, paramsBody, nil), want: Application, status: 404, code: -32602},
		{name: "404 with session id, go-sdk decoded a body with id", err: wire(404, true, "", sdkRPCChain("tools/call", -32602, "Invalid params", "Not Found")), want: Application, status: 404},
		{name: "413", err: wire(413, true, "too big", nil), want: Application, status: 413},
		{name: "S2 body without session id", err: wire(400, false, s2Body, nil), want: Application, status: 400, code: -32000},
		{name: "S2 body on a 500", err: wire(500, true, s2Body, nil), want: ServerError, status: 500},
		{name: "200 with a JSON-RPC error", err: wire(200, true, paramsBody, nil), want: Application, status: 200},
		{name: "embedded -32601 beside EOF", err: errors.Join(io.EOF, fmt.Errorf("Error POSTing to endpoint: %s", s1Body)), want: MethodNotFound},
		{name: "embedded null-id -32000", err: fmt.Errorf("Error POSTing to endpoint: %s", s2Body), want: Application, code: -32000},
		{name: "1xx", err: wire(101, true, "", nil), want: Application},

		// protocol
		{name: "*json.SyntaxError", err: fmt.Errorf("failed to decode response: %w", syntaxError()), want: Protocol},
		{name: "200 malformed", err: &HTTPError{Exchange: Exchange{Status: 200, ContentType: "text/html", Malformed: true}}, want: Protocol, status: 200},

		// timeout
		{name: "context.DeadlineExceeded, no ctx", err: context.DeadlineExceeded, want: Timeout},
		{name: "context.DeadlineExceeded, caller live", err: fmt.Errorf("x: %w", context.DeadlineExceeded), ctx: liveCtx, want: Timeout},
		{name: "net.Error timeout", err: netErr{timeout: true}, want: Timeout},
		{name: "os.ErrDeadlineExceeded", err: os.ErrDeadlineExceeded, want: Timeout},
		{name: "url.Error around a timeout, under -32005", err: fmt.Errorf("%w: %w", rejected, &url.Error{Op: "Post", Err: netErr{timeout: true}}), want: Timeout},
		{name: "ETIMEDOUT", err: &net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ETIMEDOUT)}, want: Timeout},
		{name: "200 exchange, then our deadline", err: &HTTPError{Exchange: Exchange{Status: 200, ContentType: "text/event-stream"}, Err: context.DeadlineExceeded}, want: Timeout, status: 200},

		// transport
		{name: "ECONNREFUSED", err: syscall.ECONNREFUSED, want: Transport},
		{name: "ECONNREFUSED as go-sdk wraps it", err: fmt.Errorf("calling %q: %w", "tools/call", fmt.Errorf("sending %q: %w: %w", "tools/call", rejected, refused())), want: Transport},
		{name: "ECONNRESET", err: reset(), want: Transport},
		{name: "io.EOF", err: fmt.Errorf("read: %w", io.EOF), want: Transport},
		{name: "io.ErrUnexpectedEOF", err: io.ErrUnexpectedEOF, want: Transport},
		{name: "mcp.ErrConnectionClosed", err: fmt.Errorf("%w: calling %q: %v", mcp.ErrConnectionClosed, "tools/call", "client is closing"), want: Transport},
		{name: "closed connection text with an embedded body", err: fmt.Errorf("%w: calling %q: %v", mcp.ErrConnectionClosed, "tools/call", s1Body), want: Transport},
		{name: "net.Error not a timeout", err: netErr{timeout: false}, want: Transport},
		{name: "url.Error with an opaque cause (TLS)", err: &url.Error{Op: "Post", Err: errors.New("tls: failed to verify certificate")}, want: Transport},
		{name: "HTTPError without status", err: &HTTPError{Exchange: Exchange{Verb: "POST", Method: "tools/call", SessionIDSent: true}, Err: reset()}, want: Transport, sessionID: true},
		{name: "HTTPError without status, nothing below", err: &HTTPError{Exchange: Exchange{Verb: "POST"}}, want: Transport},

		// unknown
		{name: "opaque", err: errors.New("boom"), want: Unknown},
		{name: "go-sdk status text only", err: sdkTextChain("tools/call", "Bad Request"), want: Unknown},
		{name: "200 exchange, opaque cause", err: &HTTPError{Exchange: Exchange{Status: 200}, Err: errors.New("request terminated without response")}, want: Unknown, status: 200},
		{name: "embedded object that is not JSON-RPC", err: errors.New(`failed: {"error":{"code":-32601}}`), want: Unknown},
		{name: "embedded JSON-RPC with a non-integer code", err: errors.New(`x {"jsonrpc":"2.0","id":1,"error":{"code":"-32601"}}`), want: Unknown},

		// errors.Join trees
		{name: "join: session missing deep in a tree", err: errors.Join(errors.New("a"), fmt.Errorf("b: %w", errors.Join(errors.New("c"), mcp.ErrSessionMissing))), want: SessionExpired},
		{name: "join: -32601 beside -32005", err: errors.Join(rejected, &jsonrpc.Error{Code: -32601}), want: MethodNotFound, code: -32601},
		{name: "join: -32005 beside refused", err: errors.Join(rejected, refused()), want: Transport},
		{name: "multi %w: canceled and deadline", err: fmt.Errorf("%w; %w", context.DeadlineExceeded, context.Canceled), want: Canceled},
	}
}

func TestClassify(t *testing.T) {
	for _, tc := range classCases() {
		t.Run(tc.name, func(t *testing.T) {
			v := Classify(callerCtx(t, tc.ctx), tc.err)
			assert.Equal(t, tc.want, v.Class, "verdict %v; detail %q", v, v.Detail)
			if tc.status != 0 {
				assert.Equal(t, tc.status, v.HTTPStatus)
			}
			if tc.code != 0 {
				assert.True(t, v.RPC.Present)
				assert.Equal(t, tc.code, v.RPC.Code)
			}
			if tc.retryAfter != 0 {
				assert.Equal(t, tc.retryAfter, v.RetryAfter)
			}
			if tc.sessionID {
				assert.True(t, v.SessionIDSent)
			}
			assert.LessOrEqual(t, len(v.Detail), MaxDetail)
		})
	}
}

// TestClassifyCoversEveryClass keeps the table honest: every class appears.
func TestClassifyCoversEveryClass(t *testing.T) {
	seen := map[Class]bool{}
	for _, tc := range classCases() {
		seen[tc.want] = true
	}
	for _, c := range Classes() {
		assert.True(t, seen[c], "no case for %v", c)
	}
	assert.Equal(t, Verdict{}, Classify(context.Background(), nil))
}

// representatives: one error per class that supports only that class.
func representatives() map[Class]error {
	return map[Class]error{
		Canceled:       context.Canceled,
		Unauthorized:   &HTTPError{Exchange: Exchange{Status: 401}},
		MethodNotFound: &jsonrpc.Error{Code: -32601, Message: "Method not found"},
		SessionExpired: mcp.ErrSessionMissing,
		RateLimited:    &HTTPError{Exchange: Exchange{Status: 429, RetryAfter: time.Second}},
		Forbidden:      &HTTPError{Exchange: Exchange{Status: 403}},
		ServerError:    &HTTPError{Exchange: Exchange{Status: 500}},
		Application:    &jsonrpc.Error{Code: -32602, Message: "Invalid params"},
		Protocol:       syntaxError(),
		Timeout:        context.DeadlineExceeded,
		Transport:      syscall.ECONNREFUSED,
		Unknown:        errors.New("opaque"),
	}
}

// TestPrecedence checks every pair of classes, joined both ways and
// multi-wrapped: the class declared first wins (DESIGN.md section 3).
func TestPrecedence(t *testing.T) {
	reps := representatives()
	require.Len(t, reps, len(Classes()))
	for _, a := range Classes() {
		for _, b := range Classes() {
			if a >= b {
				continue
			}
			ea, eb := reps[a], reps[b]
			for name, err := range map[string]error{
				"join a,b":   errors.Join(ea, eb),
				"join b,a":   errors.Join(eb, ea),
				"%w %w":      fmt.Errorf("%w / %w", eb, ea),
				"nested %w":  fmt.Errorf("outer: %w", fmt.Errorf("%w / %w", fmt.Errorf("x: %w", eb), ea)),
				"join of %w": errors.Join(fmt.Errorf("p: %w", eb), errors.Join(errors.New("q"), fmt.Errorf("r: %w", ea))),
			} {
				v := Classify(noCaller, err)
				assert.Equal(t, a, v.Class, "%v vs %v (%s)", a, b, name)
				if h, ok := ea.(*HTTPError); ok {
					assert.Equal(t, h.Status, v.HTTPStatus, "%v vs %v (%s): facts from the winner", a, b, name)
				}
			}
		}
	}
}

// TestRejectedIsWeak: go-sdk's -32005 decides only when nothing else does.
func TestRejectedIsWeak(t *testing.T) {
	reps := representatives()
	for _, c := range Classes() {
		want := c
		if c == Unknown {
			want = ServerError
		}
		assert.Equal(t, want, Classify(noCaller, errors.Join(rejected, reps[c])).Class, "%v beside -32005", c)
	}
}

func TestFailureStories(t *testing.T) {
	t.Run("S1 400 with -32601 for templates", func(t *testing.T) {
		sdk := sdkRPCChain("resources/templates/list", -32601, "Method not found", "Bad Request")
		for _, err := range []error{sdk, wire(400, true, s1Body, sdk), wire(400, true, s1Body, nil)} {
			v := Classify(t.Context(), err)
			assert.Equal(t, MethodNotFound, v.Class)
			assert.Equal(t, int64(-32601), v.RPC.Code)
			assert.True(t, v.RPC.HasID)
			assert.False(t, v.Reconnects())
			assert.True(t, v.Retries())
		}
		v := Classify(t.Context(), wire(404, true, s1Body, nil))
		assert.Equal(t, MethodNotFound, v.Class, "-32601 in a 404 body is not session expiry")
	})
	t.Run("S2 400 null-id -32000", func(t *testing.T) {
		sdk := sdkTextChain("tools/list", "Bad Request")
		assert.Equal(t, Unknown, Classify(t.Context(), sdk).Class, "go-sdk alone says only Bad Request")
		v := Classify(t.Context(), wire(400, true, s2Body, sdk))
		assert.Equal(t, SessionExpired, v.Class)
		assert.True(t, v.Reconnects())
		assert.False(t, v.RPC.HasID)
		assert.Equal(t, Application, Classify(t.Context(), wire(400, false, s2Body, sdk)).Class, "no session id: not expiry")
	})
	t.Run("S3 cycles", func(t *testing.T) {
		a := &node{msg: "a"}
		b := &node{msg: "b", next: a}
		a.next = b
		assert.Equal(t, Unknown, Classify(noCaller, a).Class)

		withFact := &node{msg: "c", next: mcp.ErrSessionMissing}
		j := &fan{msg: "join"}
		c := &node{msg: "via join", next: j}
		j.kids = []error{c, withFact, errors.Join(c, j)}
		assert.Equal(t, SessionExpired, Classify(noCaller, c).Class)
		assert.Equal(t, SessionExpired, Classify(noCaller, errors.Join(j, c)).Class)

		self := &node{msg: "self"}
		self.next = self
		assert.Equal(t, Unknown, Classify(noCaller, self).Class)
		selfFan := &fan{msg: "self fan"}
		selfFan.kids = []error{selfFan, selfFan, syscall.ECONNRESET}
		assert.Equal(t, Transport, Classify(noCaller, selfFan).Class)
	})
	t.Run("S4 tools/call answers", func(t *testing.T) {
		rl := Classify(t.Context(), &HTTPError{Exchange: Exchange{Verb: "POST", Method: "tools/call", Status: 429, ContentType: "text/plain", RetryAfter: 30 * time.Second, Body: "slow down", SessionIDSent: true}, Err: sdkRejectedChain("tools/call", "Too Many Requests")})
		assert.Equal(t, RateLimited, rl.Class)
		assert.Equal(t, 30*time.Second, rl.RetryAfter)
		assert.Equal(t, "tools/call", rl.Method)
		assert.False(t, rl.Reconnects())

		for _, tc := range []struct {
			err        error
			want       Class
			reconnects bool
		}{
			{wire(500, true, "boom", sdkRejectedChain("tools/call", "Internal Server Error")), ServerError, false},
			{wire(403, true, htmlBody, sdkTextChain("tools/call", "Forbidden")), Forbidden, false},
			{&HTTPError{Exchange: Exchange{Status: 403, WWWAuthenticate: insufficient}}, Unauthorized, false},
			{wire(404, true, "", nil), SessionExpired, true},
			{wire(404, false, "", nil), Application, false},
			{&HTTPError{Exchange: Exchange{Verb: "POST", Method: "tools/call"}, Err: fmt.Errorf("%w: %w", rejected, refused())}, Transport, true},
		} {
			v := Classify(t.Context(), tc.err)
			assert.Equal(t, tc.want, v.Class, "%v", tc.err)
			assert.Equal(t, tc.reconnects, v.Reconnects(), "%v", tc.err)
		}
	})
}

func TestBadInput(t *testing.T) {
	t.Run("nil", func(t *testing.T) {
		assert.Equal(t, Verdict{}, Classify(noCaller, nil))
		assert.Equal(t, None, Classify(callerCtx(t, doneCtx), nil).Class)
	})
	t.Run("Error panics", func(t *testing.T) {
		v := Classify(noCaller, &panicText{})
		assert.Equal(t, Unknown, v.Class)
		assert.Contains(t, v.Detail, "Error panicked")
		assert.Equal(t, SessionExpired, Classify(noCaller, &panicText{next: mcp.ErrSessionMissing}).Class, "facts below still count")
	})
	t.Run("Unwrap panics", func(t *testing.T) {
		assert.Equal(t, Unknown, Classify(noCaller, panicUnwrap{}).Class)
		assert.Equal(t, SessionExpired, Classify(noCaller, errors.Join(panicUnwrap{}, mcp.ErrSessionMissing)).Class)
	})
	t.Run("Timeout panics", func(t *testing.T) {
		assert.Equal(t, Unknown, Classify(noCaller, panicTimeout{}).Class)
	})
	t.Run("non-comparable values", func(t *testing.T) {
		s := sliceErr{parts: []string{"a"}}
		m := mapErr{m: map[string]int{"a": 1}}
		assert.Equal(t, Unknown, Classify(noCaller, s).Class)
		assert.Equal(t, Unknown, Classify(noCaller, m).Class)
		assert.Equal(t, Unknown, Classify(noCaller, errors.Join(s, m, s, m)).Class, "used twice in a join")
		assert.Equal(t, SessionExpired, Classify(noCaller, errors.Join(s, sliceErr{next: mcp.ErrSessionMissing})).Class)
		assert.Equal(t, Unknown, Classify(noCaller, fmt.Errorf("x: %w", sliceErr{next: fmt.Errorf("y: %w", m), parts: []string{"z"}})).Class)
		assert.Equal(t, Transport, Classify(noCaller, errors.Join(s, s, sliceErr{next: io.EOF}, s)).Class)
	})
	t.Run("endless value chain is bounded", func(t *testing.T) {
		var calls int
		assert.Equal(t, Unknown, Classify(noCaller, endless{&calls}).Class)
		assert.LessOrEqual(t, calls, MaxNodes)
	})
	t.Run("long chain is bounded by depth", func(t *testing.T) {
		var err error = mcp.ErrSessionMissing
		for range 10 * MaxDepth {
			err = &node{msg: "wrap", next: err}
		}
		assert.Equal(t, Unknown, Classify(noCaller, err).Class, "the fact lies beyond MaxDepth")
		err = mcp.ErrSessionMissing
		for range MaxDepth {
			err = &node{msg: "wrap", next: err}
		}
		assert.Equal(t, SessionExpired, Classify(noCaller, err).Class, "the fact lies at MaxDepth")
	})
	t.Run("10 MB message", func(t *testing.T) {
		big := strings.Repeat("x", 10<<20)
		v := Classify(noCaller, errors.New(big))
		assert.Equal(t, Unknown, v.Class)
		assert.Len(t, v.Detail, MaxDetail)
		assert.Equal(t, Unknown, Classify(noCaller, errors.New(strings.Repeat(`{"`, 5<<20))).Class)
		assert.Equal(t, MethodNotFound, Classify(noCaller, errors.New(s1Body+big)).Class, "object at the start is read")
		assert.Equal(t, Unknown, Classify(noCaller, errors.New(big+s1Body)).Class, "object past MaxScan is not read")
	})
	t.Run("multi-byte text is cut on a rune boundary", func(t *testing.T) {
		v := Classify(noCaller, errors.New(strings.Repeat("é", MaxDetail)))
		assert.LessOrEqual(t, len(v.Detail), MaxDetail)
		assert.True(t, strings.HasSuffix(v.Detail, "é"))
	})
	t.Run("malformed and deeply nested JSON", func(t *testing.T) {
		deep := `failed: {"jsonrpc":"2.0","id":1,"error":{"code":-32601,"data":` + strings.Repeat("[", 100_000)
		assert.Equal(t, Unknown, Classify(noCaller, errors.New(deep)).Class)
		_, ok := ParseRPCError([]byte(strings.Repeat("[", 100_000)))
		assert.False(t, ok)
		assert.Equal(t, Unknown, Classify(noCaller, errors.New(`x: {"jsonrpc":"2.0","error":{"code":-32601,`)).Class)
	})
	t.Run("nil *HTTPError", func(t *testing.T) {
		var h *HTTPError
		assert.Equal(t, Unknown, Classify(noCaller, h).Class)
		assert.Equal(t, Unknown, Classify(noCaller, fmt.Errorf("x: %w", h)).Class)
		assert.Equal(t, SessionExpired, Classify(noCaller, errors.Join(h, mcp.ErrSessionMissing)).Class)
		assert.NotPanics(t, func() { _ = h.Error(); _ = h.Unwrap(); _ = h.RespondsToRequest() })
	})
}

func TestInsufficientScope(t *testing.T) {
	for h, want := range map[string]bool{
		insufficient:                                                           true,
		`Bearer error="insufficient_scope"`:                                    true,
		`Bearer error=insufficient_scope`:                                      true,
		`Bearer error = "insufficient_scope"`:                                  true,
		`Basic realm="a", Bearer error="insufficient_scope"`:                   true,
		`Negotiate abc==, Bearer error="insufficient_scope"`:                   true,
		`Bearer ERROR="insufficient_scope"`:                                    true,
		`Bearer realm="a, error=\"insufficient_scope\""`:                       false,
		`Bearer error="invalid_token", error_description="insufficient_scope"`: false,
		`Bearer error="Insufficient_Scope"`:                                    false,
		`Bearer`:                                                               false,
		``:                                                                     false,
		`error="insufficient_scope`:                                            true,
		`===,,,   "`:                                                           false,
	} {
		assert.Equal(t, want, InsufficientScope(h), "%q", h)
	}
}

func TestParseRPCError(t *testing.T) {
	for _, tc := range []struct {
		body  string
		ok    bool
		code  int64
		id    string
		hasID bool
	}{
		{s1Body, true, -32601, "3", true},
		{s2Body, true, -32000, "null", false},
		{s2BodyNoID, true, -32000, "", false},
		{`{"jsonrpc":"2.0","id":"a","error":{"code":-32602,"message":"x"}} trailing`, true, -32602, `"a"`, true},
		{`{"id":1,"error":{"code":-32601}}`, false, 0, "", false},
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, false, 0, "", false},
		{`{"jsonrpc":"2.0","id":1,"error":{"message":"no code"}}`, false, 0, "", false},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":1.5}}`, false, 0, "", false},
		// Member names are case-sensitive, as in the wire layer's decoder.
		{`{"jsonrpC":"2.0","error":{"code":-32601}}`, false, 0, "", false},
		{`{"jsonrpc":"2.0","error":{"Code":-32601}}`, false, 0, "", false},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":null}}`, false, 0, "", false},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":5}}`, false, 0, "", false},
		{`{"jsonrpc":"2.0","id":1,"error":null}`, false, 0, "", false},
		{`[` + s1Body + `]`, false, 0, "", false},
		{`<html>`, false, 0, "", false},
		{``, false, 0, "", false},
	} {
		r, ok := ParseRPCError([]byte(tc.body))
		require.Equal(t, tc.ok, ok, "%q", tc.body)
		if !ok {
			assert.Equal(t, BodyRPCError{}, r)
			continue
		}
		assert.Equal(t, tc.code, r.Code, "%q", tc.body)
		assert.Equal(t, tc.id, r.ID, "%q", tc.body)
		assert.Equal(t, tc.hasID, r.HasID, "%q", tc.body)
		assert.True(t, r.Present)
	}
	long := `{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"` + strings.Repeat("m", 4*MaxDetail) + `"}}`
	r, ok := ParseRPCError([]byte(long))
	require.True(t, ok)
	assert.Len(t, r.Message, MaxDetail)
}

func TestHTTPError(t *testing.T) {
	inner := errors.New("inner")
	h := &HTTPError{Exchange: Exchange{Verb: "POST", Method: "tools/call", Status: 429, RetryAfter: 30 * time.Second}, Err: inner}
	assert.ErrorIs(t, fmt.Errorf("x: %w", h), inner)
	var got *HTTPError
	require.ErrorAs(t, fmt.Errorf("x: %w", h), &got)
	assert.Equal(t, "POST tools/call: HTTP 429 (retry after 30s): inner", h.Error())
	assert.Equal(t, "GET: no HTTP answer", (&HTTPError{Exchange: Exchange{Verb: "GET"}}).Error())
	r, ok := ParseRPCError([]byte(s1Body))
	require.True(t, ok)
	assert.Equal(t, `POST resources/templates/list: HTTP 400 JSON-RPC -32601 "Method not found"`,
		(&HTTPError{Exchange: Exchange{Verb: "POST", Method: "resources/templates/list", Status: 400, RPC: r.RPCError}}).Error())

	assert.True(t, (&HTTPError{Exchange: Exchange{RPC: RPCError{Present: true}, BodyRPCID: "3", RequestID: "3"}}).RespondsToRequest())
	assert.True(t, (&HTTPError{Exchange: Exchange{RPC: RPCError{Present: true}, BodyRPCID: "3"}}).RespondsToRequest())
	assert.False(t, (&HTTPError{Exchange: Exchange{RPC: RPCError{Present: true}, BodyRPCID: "4", RequestID: "3"}}).RespondsToRequest())
	assert.False(t, (&HTTPError{Exchange: Exchange{RPC: RPCError{Present: true}, BodyRPCID: "null", RequestID: "3"}}).RespondsToRequest())
	assert.False(t, (&HTTPError{Exchange: Exchange{BodyRPCID: "3"}}).RespondsToRequest())
}

func TestClassPolicies(t *testing.T) {
	reconnects := map[Class]bool{Transport: true, SessionExpired: true}
	noRetry := map[Class]bool{Canceled: true, Unauthorized: true}
	for _, c := range Classes() {
		assert.Equal(t, reconnects[c], c.Reconnects(), "%v", c)
		assert.Equal(t, !noRetry[c], c.Retries(), "%v", c)
		assert.Equal(t, c.Reconnects(), Verdict{Class: c}.Reconnects())
		assert.Equal(t, c.Retries(), Verdict{Class: c}.Retries())
	}
	assert.False(t, None.Retries())
	assert.False(t, None.Reconnects())
	assert.False(t, Class(200).Retries())
}

func TestClassText(t *testing.T) {
	want := []string{"canceled", "unauthorized", "method-not-found", "session-expired", "rate-limited",
		"forbidden", "server-error", "application", "protocol", "timeout", "transport", "unknown"}
	var got []string
	for _, c := range Classes() {
		got = append(got, c.String())
		b, err := c.MarshalText()
		require.NoError(t, err)
		var back Class
		require.NoError(t, back.UnmarshalText(b))
		assert.Equal(t, c, back)
	}
	assert.Equal(t, want, got, "names in precedence order")
	assert.Equal(t, "class(200)", Class(200).String())
	_, err := Class(200).MarshalText()
	assert.Error(t, err)
	var c Class
	assert.Error(t, c.UnmarshalText([]byte("nope")))
}

func TestVerdictString(t *testing.T) {
	v := Verdict{Class: RateLimited, HTTPStatus: 429, RPC: RPCError{Present: true, Code: -32005},
		RetryAfter: 30 * time.Second, Method: "tools/call"}
	assert.Equal(t, "rate-limited (HTTP 429, JSON-RPC -32005, retry after 30s, tools/call)", v.String())
	assert.Equal(t, "transport", Verdict{Class: Transport}.String())
}

// Our own deadline is timeout, the caller's cancellation canceled (DESIGN.md
// section 3): a context whose deadline was made with the cause ErrDeadline
// and ran out says timeout, whatever go-sdk returned for it; a caller that
// gave up says canceled, also above our deadline; the server's answer,
// when one came, still decides first.
func TestOwnDeadlineIsTimeout(t *testing.T) {
	expired := func(parent context.Context) context.Context {
		ctx, cancel := context.WithDeadlineCause(parent, time.Unix(0, 0), ErrDeadline)
		t.Cleanup(cancel)
		return ctx
	}
	own := expired(context.Background())
	require.ErrorIs(t, context.Cause(own), ErrDeadline)
	for name, err := range map[string]error{
		"go-sdk's ctx.Err()":       fmt.Errorf("calling %q: %w", "tools/list", context.DeadlineExceeded),
		"a canceled request":       fmt.Errorf("read: %w", context.Canceled),
		"the cause itself":         fmt.Errorf("list: %w", ErrDeadline),
		"no context fact at all":   errors.New("connection closed"),
		"a reset cut by the bound": &url.Error{Op: "Post", URL: "http://127.0.0.1:1/mcp", Err: syscall.ECONNRESET},
	} {
		assert.Equal(t, Timeout, Classify(own, err).Class, name)
	}
	assert.Equal(t, Timeout, Error(fmt.Errorf("keepalive: %w", ErrDeadline)).Class, "no context: the cause in the error")

	caller, giveUp := context.WithCancel(context.Background())
	under := expired(caller)
	giveUp()
	assert.Equal(t, Timeout, Classify(under, context.DeadlineExceeded).Class, "our deadline came first")
	callerGone, giveUp2 := context.WithCancel(context.Background())
	giveUp2()
	assert.Equal(t, Canceled, Classify(expired(callerGone), context.Canceled).Class, "the caller gave up before our deadline")
	callerDeadline, cancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancel()
	assert.Equal(t, Canceled, Classify(callerDeadline, context.DeadlineExceeded).Class, "the caller's own deadline is the caller giving up")

	answered := &HTTPError{Exchange: Exchange{Verb: "POST", Method: "tools/list", Status: 401}, Err: context.DeadlineExceeded}
	assert.Equal(t, Unauthorized, Classify(own, answered).Class, "an answer outranks the deadline")
}
