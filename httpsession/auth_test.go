package httpsession_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/httpsession"
)

// tokenHandler is an auth.OAuthHandler over a token the test rotates:
// Authorize takes the gateway's current token, or fails when refuse is set.
type tokenHandler struct {
	mu         sync.Mutex
	token      string
	authorized int
	refuse     bool
	source     error // TokenSource fails with it when set
	next       func() string
}

func (h *tokenHandler) TokenSource(context.Context) (oauth2.TokenSource, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.source != nil {
		return nil, h.source
	}
	return oauth2.StaticTokenSource(&oauth2.Token{AccessToken: h.token}), nil
}

func (h *tokenHandler) Authorize(_ context.Context, _ *http.Request, resp *http.Response) error {
	_ = resp.Body.Close()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.authorized++
	if h.refuse {
		return errors.New("no refresh token")
	}
	h.token = h.next()
	return nil
}

func (h *tokenHandler) calls() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.authorized
}

// tokenGate makes g answer 401 with a Bearer challenge to any request
// without "Bearer <valid()>", and counts those refusals.
type tokenGate struct {
	mu      sync.Mutex
	valid   string
	refused map[string]int // by verb
}

func (tg *tokenGate) current() string { tg.mu.Lock(); defer tg.mu.Unlock(); return tg.valid }
func (tg *tokenGate) rotate(v string) { tg.mu.Lock(); tg.valid = v; tg.mu.Unlock() }
func (tg *tokenGate) refusals(verb string) int {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	return tg.refused[verb]
}

func (tg *tokenGate) check(w http.ResponseWriter, r *http.Request) bool {
	tg.mu.Lock()
	ok := r.Header.Get("Authorization") == "Bearer "+tg.valid
	if !ok {
		tg.refused[r.Method]++
	}
	tg.mu.Unlock()
	if !ok {
		writeFault(w, 401, "text/plain", "token expired", map[string]string{"WWW-Authenticate": `Bearer error="invalid_token"`})
	}
	return !ok
}

func newTokenGate(valid string) *tokenGate {
	return &tokenGate{valid: valid, refused: map[string]int{}}
}

// TestOAuthHandlerRefreshesEveryRequest: an expired token on a call, on a
// re-dial of the standalone stream and on DELETE is refreshed by the
// handler and the request sent once more: the session at the server is the
// same (one initialize), and every refused credential costs one Authorize.
func TestOAuthHandlerRefreshesEveryRequest(t *testing.T) {
	g, url := newServer(t, nil)
	tg := newTokenGate("t1")
	arrived, proceed := make(chan struct{}), make(chan struct{})
	streamed := make(chan struct{}, 1)
	g.setFault(func(w http.ResponseWriter, r *http.Request, method string, n int) bool {
		if r.Method == http.MethodGet {
			switch n {
			case 0: // ends at once: the keeper re-dials
				writeFault(w, 200, "text/event-stream", "", nil)
				return true
			case 1: // the re-dial waits until its token has expired
				close(arrived)
				<-proceed
			default:
				refused := tg.check(w, r)
				if !refused {
					select {
					case streamed <- struct{}{}:
					default:
					}
				}
				return refused
			}
		}
		return tg.check(w, r)
	})
	h := &tokenHandler{token: "t1", next: tg.current}
	clock := clockwork.NewFakeClock()
	advance(t, clock)
	s := open(t, url, httpsession.Options{Wire: httpsession.Config{OAuthHandler: h, Clock: clock}})
	within(t, arrived, "the re-dial")

	tg.rotate("t2")
	callEcho(t, s.ClientSession())
	assert.Equal(t, 1, h.calls(), "the call's 401 ran one Authorize")
	assert.Equal(t, 1, tg.refusals(http.MethodPost))

	// The re-dial carried t1, which the call's Authorize renewed: refused,
	// it is sent again with t2 without an Authorize of its own; t2 is
	// refused too (t3 now): authorized and sent again.
	tg.rotate("t3")
	close(proceed)
	within(t, streamed, "the authorized re-dial")
	assert.Equal(t, 2, tg.refusals(http.MethodGet))
	assert.Equal(t, 2, h.calls())
	callEcho(t, s.ClientSession())

	tg.rotate("t4")
	require.NoError(t, s.Close())
	assert.Equal(t, 1, tg.refusals(http.MethodDelete), "DELETE was refused once")
	assert.Equal(t, 3, h.calls())
	assert.Equal(t, 1, g.count("POST", "initialize"))
	assert.Equal(t, 2, g.count("DELETE", ""), "the refused DELETE and the authorized one")
}

// TestOAuthHandlerCannotAuthorize: a handler whose Authorize fails leaves
// the call with the server's 401 (unauthorized, its WWW-Authenticate kept)
// and the session alive: once the credential is good again, the next call
// is answered on the same session.
func TestOAuthHandlerCannotAuthorize(t *testing.T) {
	g, url := newServer(t, nil)
	tg := newTokenGate("t1")
	g.setFault(func(w http.ResponseWriter, r *http.Request, method string, n int) bool { return tg.check(w, r) })
	h := &tokenHandler{token: "t1", next: tg.current}
	var logs syncBuf
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	s := open(t, url, httpsession.Options{Stream: httpsession.StreamOff, Wire: httpsession.Config{OAuthHandler: h, Logger: logger}})

	tg.rotate("t2")
	h.mu.Lock()
	h.refuse = true
	h.mu.Unlock()
	_, err := s.ClientSession().CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
	require.Error(t, err)
	v := classify.Error(err)
	assert.Equal(t, classify.Unauthorized, v.Class, "%v", err)
	assert.Equal(t, 401, v.HTTPStatus)
	assert.Equal(t, 1, h.calls())
	assert.Contains(t, logs.String(), `error="no refresh token"`, "the flow's error, which the 401 cannot carry, is logged")

	h.mu.Lock()
	h.refuse = false
	h.mu.Unlock()
	callEcho(t, s.ClientSession())
	assert.Equal(t, 1, g.count("POST", "initialize"))
	assert.Zero(t, g.count("DELETE", ""))
}

// TestOAuthTokenSourceFails: a token source that fails fails the request
// before it is sent, as unauthorized (classify.ErrCredential).
func TestOAuthTokenSourceFails(t *testing.T) {
	g, url := newServer(t, nil)
	h := &tokenHandler{token: "t1", next: func() string { return "t1" }}
	s := open(t, url, httpsession.Options{Stream: httpsession.StreamOff, Wire: httpsession.Config{OAuthHandler: h}})
	h.mu.Lock()
	h.source = errors.New("keychain locked")
	h.mu.Unlock()
	before := g.count("POST", "tools/call")
	_, err := s.ClientSession().CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
	require.Error(t, err)
	assert.ErrorIs(t, err, classify.ErrCredential)
	assert.Equal(t, classify.Unauthorized, classify.Error(err).Class)
	assert.Equal(t, before, g.count("POST", "tools/call"), "nothing was sent")
}

// TestStreamUnauthorizedPauses: a 401 to a re-dial of the standalone stream,
// without a handler, never ends the session and is not GET-hostile
// evidence: the keeper dials no more until a request of the session is
// answered with a 2xx (the host's client carries a fresh credential), then
// the stream is back on the same session.
func TestStreamUnauthorizedPauses(t *testing.T) {
	g, url := newServer(t, nil)
	tg := newTokenGate("t1")
	gets := make(chan int, 64)
	g.setFault(func(w http.ResponseWriter, r *http.Request, method string, n int) bool {
		if r.Method == http.MethodGet {
			defer func() {
				select {
				case gets <- n:
				default:
				}
			}()
			if n == 0 {
				tg.rotate("t2")                                  // the token expires before the re-dial
				writeFault(w, 200, "text/event-stream", "", nil) // ends at once
				return true
			}
		}
		return tg.check(w, r)
	})
	cred := &bearer{token: "t1"}
	clock := clockwork.NewFakeClock()
	rec := newRecorder(httpsession.HostilityRule{})
	opts := httpsession.Options{HTTPClient: &http.Client{Transport: cred}, Wire: httpsession.Config{Clock: clock}}
	rec.config(&opts.Wire)
	ended := make(chan httpsession.StreamAttempt, 8)
	record := opts.Wire.OnStreamAttempt
	opts.Wire.OnStreamAttempt = func(a httpsession.StreamAttempt) {
		record(a)
		select {
		case ended <- a: // the test reads the first two; the keeper never waits for it
		default:
		}
	}
	advance(t, clock)
	s := open(t, url, opts)
	require.Equal(t, 0, <-gets)
	require.Equal(t, 1, <-gets)
	<-ended
	<-ended
	attempts, hostile := rec.snapshot()
	require.Len(t, attempts, 2)
	assert.True(t, attempts[1].Unauthorized)
	assert.False(t, attempts[1].SessionGone)
	assert.False(t, hostile)

	// While the credential is refused (a call answered 401 too), the keeper
	// dials no more, however far the clock moves.
	_, err := s.ClientSession().CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
	assert.Equal(t, classify.Unauthorized, classify.Error(err).Class)
	cred.set("t2")
	callEcho(t, s.ClientSession())
	require.Equal(t, 2, <-gets, "the stream re-dials after the call got through")
	assert.Equal(t, 1, tg.refusals(http.MethodGet), "no re-dial while refused")
	assert.Equal(t, 1, g.count("POST", "initialize"))
	assert.Zero(t, g.count("DELETE", ""))
}

// bearer is a host's credential round-tripper.
type bearer struct {
	mu    sync.Mutex
	token string
}

func (b *bearer) set(t string) { b.mu.Lock(); b.token = t; b.mu.Unlock() }

func (b *bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	b.mu.Lock()
	tok := b.token
	b.mu.Unlock()
	out := req.Clone(req.Context())
	out.Header.Set("Authorization", "Bearer "+tok)
	return http.DefaultTransport.RoundTrip(out)
}

// TestDetachedSessionSendsNoNotification: once detached, a session's
// notifications (go-sdk's notifications/cancelled for the calls it cuts) are
// answered locally: the server-side session may serve a resumed session
// whose request ids start again at the same numbers.
func TestDetachedSessionSendsNoNotification(t *testing.T) {
	g, url := newServer(t, nil)
	s := open(t, url, httpsession.Options{Stream: httpsession.StreamOff})
	require.NoError(t, s.ClientSession().NotifyProgress(context.Background(), &mcp.ProgressNotificationParams{ProgressToken: "a", Progress: 1}))
	assert.Equal(t, 1, g.count("POST", "notifications/progress"))
	httpsession.MarkDetached(s)
	require.NoError(t, s.ClientSession().NotifyProgress(context.Background(), &mcp.ProgressNotificationParams{ProgressToken: "a", Progress: 2}))
	assert.Equal(t, 1, g.count("POST", "notifications/progress"), "answered locally")
	callEcho(t, s.ClientSession())
}

// syncBuf is a bytes.Buffer safe for the logger's concurrent writes.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// hostHandler is an auth.OAuthHandler whose token source and Authorize are
// the test's functions.
type hostHandler struct {
	source    func() (oauth2.TokenSource, error)
	authorize func() error
}

func (h *hostHandler) TokenSource(context.Context) (oauth2.TokenSource, error) { return h.source() }
func (h *hostHandler) Authorize(_ context.Context, _ *http.Request, resp *http.Response) error {
	_ = resp.Body.Close()
	return h.authorize()
}

type tokenFunc func() (*oauth2.Token, error)

func (f tokenFunc) Token() (*oauth2.Token, error) { return f() }

// TestOAuthHandlerThatPanicsFailsTheRequestAlone: the host's OAuth handler
// runs on the Transport's goroutines too (the stream keeper's re-dials, a
// resumption of a call's stream), where a panic would end the process, and
// on go-sdk's write path, where it left the connection locked. A panicking
// TokenSource or Token fails the request it serves, unsent, as unauthorized
// (classify.ErrCredential, the panic named), a panicking Authorize as a
// failed one (the refused answer); the session serves the next call once
// the handler works again.
func TestOAuthHandlerThatPanicsFailsTheRequestAlone(t *testing.T) {
	static := func() (oauth2.TokenSource, error) {
		return oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "t1"}), nil
	}
	cases := []struct {
		name      string
		source    func() (oauth2.TokenSource, error)
		authorize func() error
		sent      int // tools/call POSTs that reached the server
	}{
		{"TokenSource", func() (oauth2.TokenSource, error) { panic("keychain gone") }, nil, 0},
		{"Token", func() (oauth2.TokenSource, error) {
			return tokenFunc(func() (*oauth2.Token, error) { panic("keychain gone") }), nil
		}, nil, 0},
		{"Authorize", static, func() error { panic("keychain gone") }, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, url := newServer(t, nil)
			tg := newTokenGate("t1")
			g.setFault(func(w http.ResponseWriter, r *http.Request, method string, n int) bool { return tg.check(w, r) })
			var mu sync.Mutex
			source, authorize := static, func() error { return nil }
			h := &hostHandler{
				source:    func() (oauth2.TokenSource, error) { mu.Lock(); f := source; mu.Unlock(); return f() },
				authorize: func() error { mu.Lock(); f := authorize; mu.Unlock(); return f() },
			}
			s := open(t, url, httpsession.Options{Stream: httpsession.StreamOff, Wire: httpsession.Config{OAuthHandler: h}})
			mu.Lock()
			if c.source != nil {
				source = c.source
			}
			if c.authorize != nil {
				authorize = c.authorize
				tg.rotate("t2") // t1 is refused: Authorize runs
			}
			mu.Unlock()
			before := g.count("POST", "tools/call")
			_, err := s.ClientSession().CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
			require.Error(t, err)
			v := classify.Error(err)
			assert.Equal(t, classify.Unauthorized, v.Class, "%v", err)
			if c.sent == 0 {
				assert.ErrorIs(t, err, classify.ErrCredential)
				assert.Contains(t, err.Error(), "keychain gone")
			} else {
				assert.Equal(t, 401, v.HTTPStatus, "a failed Authorize hands on the refused answer")
			}
			assert.Equal(t, before+c.sent, g.count("POST", "tools/call"))

			mu.Lock()
			source, authorize = static, func() error { return nil }
			mu.Unlock()
			tg.rotate("t1")
			callEcho(t, s.ClientSession())
			assert.Equal(t, 1, g.count("POST", "initialize"))
		})
	}
}

// TestOAuthTokenThatBlocksIsBoundedByTheRequest: oauth2's Token takes no
// context, so a token source that blocks (a keychain prompt, a token
// endpoint that never answers) held the call past its context's end, and
// Close with it. The request ends with its context, named; requests meanwhile
// wait for the one Token under way instead of starting their own; once the
// source answers, the session serves the next call.
func TestOAuthTokenThatBlocksIsBoundedByTheRequest(t *testing.T) {
	g, url := newServer(t, nil)
	var mu sync.Mutex
	blocking := false
	entered, release := make(chan struct{}, 8), make(chan struct{})
	var tokens int
	src := tokenFunc(func() (*oauth2.Token, error) {
		mu.Lock()
		tokens++
		b := blocking
		mu.Unlock()
		if b {
			entered <- struct{}{}
			<-release
		}
		return &oauth2.Token{AccessToken: "t1"}, nil
	})
	h := &hostHandler{source: func() (oauth2.TokenSource, error) { return src, nil }, authorize: func() error { return nil }}
	s := open(t, url, httpsession.Options{Stream: httpsession.StreamOff, Wire: httpsession.Config{OAuthHandler: h}})
	mu.Lock()
	blocking, tokens = true, 0
	mu.Unlock()
	before := g.count("POST", "tools/call")
	for i := range 2 {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		var err error
		go func() {
			defer close(done)
			_, err = s.ClientSession().CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
		}()
		if i == 0 {
			within(t, entered, "the token source")
		}
		cancel()
		within(t, done, "the call's end with its context")
		require.Error(t, err)
		assert.ErrorIs(t, err, context.Canceled)
	}
	mu.Lock()
	assert.Equal(t, 1, tokens, "the second request waited for the Token under way")
	blocking = false
	mu.Unlock()
	close(release)
	assert.Equal(t, before, g.count("POST", "tools/call"), "nothing was sent")
	callEcho(t, s.ClientSession())
}

// TestOAuthRetryAfterAuthorizeTakesTheRenewedToken: requests share the one
// Token call under way, but a request sent again after an Authorize must
// not join a call that started before it, which hands out the token the
// server just refused. Seen as a blind resume failing unauthorized under
// load: its four probes went out at once with an expired token.
func TestOAuthRetryAfterAuthorizeTakesTheRenewedToken(t *testing.T) {
	g, url := newServer(t, nil)
	tg := newTokenGate("t1")
	var mu sync.Mutex
	token, oldFetches := "t1", -1 // counted once the test starts
	entered, release := make(chan struct{}, 1), make(chan struct{})
	h := &hostHandler{
		source: func() (oauth2.TokenSource, error) {
			mu.Lock()
			tok, block := token, false
			if oldFetches >= 0 && tok == "t1" {
				oldFetches++
				block = oldFetches == 2 // the second call's
			}
			mu.Unlock()
			return tokenFunc(func() (*oauth2.Token, error) {
				if block {
					entered <- struct{}{}
					<-release // a fetch of the old token, slow
				}
				return &oauth2.Token{AccessToken: tok}, nil
			}), nil
		},
		authorize: func() error { mu.Lock(); token = tg.current(); mu.Unlock(); return nil },
	}
	s := open(t, url, httpsession.Options{Stream: httpsession.StreamOff, Wire: httpsession.Config{OAuthHandler: h}})
	call := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err := s.ClientSession().CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
		return err
	}

	var second sync.WaitGroup
	var secondErr error
	var once sync.Once
	g.setFault(func(w http.ResponseWriter, r *http.Request, method string, n int) bool {
		if method == "tools/call" && r.Header.Get("Authorization") == "Bearer t1" {
			// Before the first call's 401 is answered, a second call
			// starts fetching the old token, and holds the fetch.
			once.Do(func() {
				second.Go(func() { secondErr = call() })
				within(t, entered, "the second call's token fetch")
			})
		}
		return tg.check(w, r)
	})
	mu.Lock()
	oldFetches = 0
	mu.Unlock()
	tg.rotate("t2")
	require.NoError(t, call(), "the first call, sent again with the renewed token")
	close(release)
	second.Wait()
	require.NoError(t, secondErr, "the second call, refused with the old token, authorized and sent again")
	assert.Equal(t, 2, tg.refusals(http.MethodPost))
}

// TestConcurrentRefusalsAuthorizeOnce: calls sent at once with a token that
// has expired are refused together; the 401s run the handler's Authorize
// once, and every call is sent again with the renewed token; when that
// Authorize fails, every call gets its refused answer (unauthorized) from
// the one failure, none runs another. The MCP authorization spec
// (2025-11-25, basic/authorization.mdx, Token Theft): "For public clients,
// authorization servers MUST rotate refresh tokens", so a second refresh
// racing the first may spend a spent refresh token.
func TestConcurrentRefusalsAuthorizeOnce(t *testing.T) {
	const calls = 8
	for _, fails := range []bool{false, true} {
		t.Run(map[bool]string{false: "renewed", true: "failed"}[fails], func(t *testing.T) {
			g, url := newServer(t, nil)
			tg := newTokenGate("t1")
			h := &tokenHandler{token: "t1", next: tg.current, refuse: fails}
			s := open(t, url, httpsession.Options{Stream: httpsession.StreamOff, Wire: httpsession.Config{OAuthHandler: h}})
			var mu sync.Mutex
			stale := 0
			together := make(chan struct{})
			g.setFault(func(w http.ResponseWriter, r *http.Request, method string, n int) bool {
				if method == "tools/call" && r.Header.Get("Authorization") == "Bearer t1" {
					mu.Lock()
					if stale++; stale == calls {
						close(together)
					}
					mu.Unlock()
					<-together // every call carries the expired token before any is refused
				}
				return tg.check(w, r)
			})
			tg.rotate("t2")
			errs := make([]error, calls)
			var wg sync.WaitGroup
			for i := range calls {
				wg.Go(func() {
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
					defer cancel()
					_, errs[i] = s.ClientSession().CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
				})
			}
			wg.Wait()
			assert.Equal(t, calls, tg.refusals(http.MethodPost), "every call was refused once")
			assert.Equal(t, 1, h.calls(), "one Authorize for one expiry")
			for _, err := range errs {
				if fails {
					assert.Equal(t, classify.Unauthorized, classify.Error(err).Class, "%v", err)
				} else {
					assert.NoError(t, err)
				}
			}
			assert.Equal(t, 1, g.count("POST", "initialize"))
		})
	}
}
