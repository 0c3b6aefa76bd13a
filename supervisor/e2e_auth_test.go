package supervisor_test

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
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/supervisor"
)

// tokenGate is a gateway rule refusing, with 401 and a Bearer challenge,
// every request that lacks the current token.
type tokenGate struct {
	gw *mcptest.Gateway
	id mcptest.RuleID

	mu      sync.Mutex
	valid   string
	earlier int // refusals of the rules rotated away
}

func gateTokens(gw *mcptest.Gateway, valid string) *tokenGate {
	g := &tokenGate{gw: gw, valid: valid}
	g.id = gw.Add(g.rule(valid))
	return g
}

func (g *tokenGate) rule(valid string) mcptest.Rule {
	h := http.Header{"Www-Authenticate": {`Bearer error="invalid_token"`}, "Content-Type": {"text/plain"}}
	return mcptest.Rule{Name: "token gate",
		Match:  mcptest.Match{Header: mcptest.HeaderMatch{Name: "Authorization", Value: "Bearer " + valid, Not: true}},
		Action: mcptest.Respond(http.StatusUnauthorized, h, []byte("token expired"))}
}

// rotate makes the current token expire: only next passes from now on.
func (g *tokenGate) rotate(next string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.valid = next
	g.earlier += g.gw.Fired(g.id)
	g.gw.Replace(g.id, g.rule(next))
}

func (g *tokenGate) current() string { g.mu.Lock(); defer g.mu.Unlock(); return g.valid }
func (g *tokenGate) refused() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.earlier + g.gw.Fired(g.id)
}

// refresher is a host's auth.OAuthHandler: a bearer token it renews on 401
// (here from the gate, as a refresh grant would from the token endpoint),
// unless it has no way to (refuse).
type refresher struct {
	gate *tokenGate

	mu         sync.Mutex
	token      string
	refuse     bool
	authorized int
}

func (r *refresher) TokenSource(context.Context) (oauth2.TokenSource, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return oauth2.StaticTokenSource(&oauth2.Token{AccessToken: r.token}), nil
}

func (r *refresher) Authorize(_ context.Context, _ *http.Request, resp *http.Response) error {
	_ = resp.Body.Close()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.authorized++
	if r.refuse {
		return errors.New("refresh token revoked")
	}
	r.token = r.gate.current()
	return nil
}

func (r *refresher) setRefuse(v bool) { r.mu.Lock(); r.refuse = v; r.mu.Unlock() }
func (r *refresher) count() int       { r.mu.Lock(); defer r.mu.Unlock(); return r.authorized }

// An expired token on a call, on a re-dial of the standalone stream and on
// a keepalive ping is renewed by the host's OAuth handler and the request
// sent again: the session at the server is the one it was (no initialize,
// no DELETE), and every answer arrives.
func TestE2EExpiredTokenRenewedWithoutCostingTheSession(t *testing.T) {
	srv, err := mcptest.NewServer(mcptest.Options{Tools: 2})
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	gate := gateTokens(srv.Gateway(), "t1")
	// The first standalone stream ends at once: the keeper re-dials after
	// its backoff, on the fake clock.
	srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Verb: http.MethodGet, Occurrence: mcptest.First()}, Action: mcptest.StreamThenClose()})
	h := &refresher{gate: gate, token: "t1"}
	clock := clockwork.NewFakeClock()
	const every = time.Hour
	sup := mustNew(t, supervisor.Config{
		Endpoint: srv.URL(),
		Name:     t.Name(),
		HTTP: supervisor.HTTPConfig{
			HTTPClient:   srv.HTTPClient(),
			OAuthHandler: h,
		},
		Observe:  supervisor.ObserveConfig{Clock: clock},
		Recovery: supervisor.RecoveryConfig{KeepAlive: every},
		Stream: supervisor.StreamConfig{
			Policy: supervisor.StreamOn,
			Keeper: supervisor.StreamKeeper{InitialBackoff: time.Second},
		},
	})
	sup.Start()
	require.NoError(t, sup.WaitForState(ctx, supervisor.Ready))
	sessions := srv.SessionIDs()
	require.Len(t, sessions, 1)
	require.NoError(t, srv.Log().WaitVerb(ctx, http.MethodGet, 1))

	// A call.
	gate.rotate("t2")
	_, err = sup.CallTool(ctx, callRecord("call"))
	require.NoError(t, err)
	assert.Equal(t, 1, gate.refused())
	assert.Equal(t, 1, h.count())

	// The stream's re-dial.
	gate.rotate("t3")
	require.NoError(t, clock.BlockUntilContext(ctx, 2)) // the keepalive's ticker and the keeper's backoff
	clock.Advance(time.Second)
	require.NoError(t, srv.Log().WaitVerb(ctx, http.MethodGet, 3), "the cut, the refused and the authorized GET")
	assert.Equal(t, 2, gate.refused())
	assert.Equal(t, 2, h.count())
	// The stream is back after a gap: the catalog is re-listed.
	require.NoError(t, srv.Log().WaitCount(ctx, "tools/list", 2))

	// A keepalive ping.
	gate.rotate("t4")
	clock.Advance(every)
	require.NoError(t, srv.Log().WaitCount(ctx, "ping", 2), "the refused ping and the authorized one")
	assert.Equal(t, 3, h.count())
	assert.Equal(t, 3, gate.refused())

	_, err = sup.CallTool(ctx, callRecord("after"))
	require.NoError(t, err)
	assert.Equal(t, supervisor.Ready, sup.State())
	assert.Equal(t, sessions, srv.SessionIDs(), "the server's session is the one it was")
	assert.Equal(t, 1, srv.Log().Count("initialize"))
	assert.Zero(t, srv.Log().CountVerb(http.MethodDelete))
	assert.Equal(t, 1, sup.SessionsOpened())
}

// A host that restarts with an expired token resumes its saved session:
// with a handler that renews it, the resume goes through as if nothing
// happened; with one that cannot, the supervisor stops unauthorized,
// with the facts, keeps the resume state, and after new credentials plus
// Reconnect resumes the same session (no initialize).
func TestE2EResumeWithAnExpiredToken(t *testing.T) {
	for _, blind := range []bool{false, true} {
		name := map[bool]string{false: "known", true: "blind"}[blind]
		t.Run(name+"/renewed", func(t *testing.T) {
			e := newE2E(t, mcptest.Options{Tools: 2}, supervisor.Config{})
			rs := persisted(t, e, blind)
			gate := gateTokens(e.srv.Gateway(), "t2") // the saved token t1 expired meanwhile
			h := &refresher{gate: gate, token: "t1"}
			sup, _ := resumeE2E(t, e, rs, supervisor.Config{HTTP: supervisor.HTTPConfig{OAuthHandler: h}})
			sup.Start()
			require.NoError(t, sup.WaitForState(e.ctx, supervisor.Ready), "state %s", sup.State())
			assert.Equal(t, rs.SessionID, sup.ResumeState().SessionID)
			assert.Zero(t, e.srv.Log().Count("initialize"))
			assert.GreaterOrEqual(t, h.count(), 1, "each request refused at once runs its Authorize")
			_, err := sup.CallTool(e.ctx, callRecord("after-resume"))
			require.NoError(t, err)
		})
		t.Run(name+"/reconnected", func(t *testing.T) {
			e := newE2E(t, mcptest.Options{Tools: 2}, supervisor.Config{})
			rs := persisted(t, e, blind)
			sessions := e.srv.SessionIDs()
			gate := gateTokens(e.srv.Gateway(), "t2")
			h := &refresher{gate: gate, token: "t1", refuse: true}
			sup, rec := resumeE2E(t, e, rs, supervisor.Config{HTTP: supervisor.HTTPConfig{OAuthHandler: h}})
			defer func() {
				if t.Failed() {
					for _, ev := range rec.Events() {
						t.Logf("%s %s->%s %s %s %s | %s | %+v", ev.Kind, ev.From, ev.To, ev.Trigger, ev.Guard, ev.Verdict, ev.Verdict.Detail, ev.Lists)
					}
					for _, en := range e.srv.Log().Entries() {
						t.Logf("wire %+v", en)
					}
				}
			}()
			sup.Start()
			require.NoError(t, sup.WaitForState(e.ctx, supervisor.Failed), "state %s", sup.State())
			reason, v := sup.Failure()
			assert.Equal(t, supervisor.ReasonUnauthorized, reason)
			assert.Equal(t, classify.Unauthorized, v.Class)
			assert.Equal(t, 401, v.HTTPStatus)
			require.NotNil(t, sup.ResumeState())
			assert.Equal(t, rs.SessionID, sup.ResumeState().SessionID, "the resume state is kept")
			assert.Zero(t, e.srv.Log().CountVerb(http.MethodDelete))

			h.setRefuse(false) // the host signed in again
			sup.Reconnect()
			require.True(t, sup.WaitForStateChange(e.ctx, supervisor.Failed))
			require.NoError(t, sup.WaitForState(e.ctx, supervisor.Ready), "state %s", sup.State())
			_, err := sup.CallTool(e.ctx, callRecord("after-reconnect"))
			require.NoError(t, err)
			if blind && sup.ResumeState().SessionID != rs.SessionID {
				// The refused blind probes were cut mid-flight, so go-sdk
				// cancels them; a cancellation the server takes after the
				// re-attached session sent its probes (go-sdk numbers
				// requests from 1 in every session) cancels one of them, and
				// the resume falls back to its one stale recovery (DESIGN.md
				// section 7). Rare; anything else is a failure.
				evs, err := rec.WaitFor(e.ctx, func(evs []events.Event) bool {
					if len(evs) == 0 {
						return false
					}
					last := evs[len(evs)-1]
					return last.Kind == events.KindCatalogChanged || last.To == supervisor.Ready
				})
				require.NoError(t, err)
				stale := 0
				for _, ev := range evs {
					if ev.Kind == events.KindTransition && ev.To == supervisor.StaleRecovering {
						stale++
					}
				}
				require.Equal(t, 1, stale, "replaced only through the one stale recovery")
				assert.Equal(t, 1, e.srv.Log().Count("initialize"))
				return
			}
			assert.Equal(t, rs.SessionID, sup.ResumeState().SessionID, "resumed, not replaced")
			assert.Zero(t, e.srv.Log().Count("initialize"))
			assert.Equal(t, sessions, e.srv.SessionIDs())
		})
	}
}

// A keepalive ping answered 401 with no handler to renew the credential is
// no death: the session is kept (go-sdk's own keepalive would close it, with
// DELETE), and the next call is answered on it.
func TestE2EPingUnauthorizedKeepsTheSession(t *testing.T) {
	srv, err := mcptest.NewServer(mcptest.Options{Tools: 1})
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	clock := clockwork.NewFakeClock()
	sup := mustNew(t, supervisor.Config{
		Endpoint: srv.URL(),
		Name:     t.Name(),
		HTTP:     supervisor.HTTPConfig{HTTPClient: srv.HTTPClient()},
		Observe:  supervisor.ObserveConfig{Clock: clock},
		Recovery: supervisor.RecoveryConfig{KeepAlive: time.Hour},
		Stream:   supervisor.StreamConfig{Policy: supervisor.StreamOff},
		Limits:   supervisor.LimitsConfig{CatalogPollInterval: -1},
	})
	sup.Start()
	require.NoError(t, sup.WaitForState(ctx, supervisor.Ready))
	h := http.Header{"Www-Authenticate": {`Bearer error="invalid_token"`}}
	refused := srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Method: "ping"}, Action: mcptest.Respond(http.StatusUnauthorized, h, nil)})

	// The keepalive's ticker is the only timer (no catalog poll). Each tick
	// waits for its ping to reach the server: a tick sent while the last
	// one is still queued would be lost.
	require.NoError(t, clock.BlockUntilContext(ctx, 1))
	for i := range 2 {
		clock.Advance(time.Hour)
		require.NoError(t, srv.Log().WaitCount(ctx, "ping", i+1))
	}
	assert.Equal(t, 2, srv.Gateway().Fired(refused))
	_, err = sup.CallTool(ctx, callRecord("after"))
	require.NoError(t, err)
	assert.Equal(t, 1, sup.SessionsOpened())
	assert.Zero(t, srv.Log().CountVerb(http.MethodDelete))
	assert.Equal(t, 1, srv.Log().Count("initialize"))
}

// TestE2EOAuthTokenEchoedByTheServerIsMasked: the access token the OAuth
// handler gives every request is a credential the supervisor holds; a
// server that echoes it in an answer's text (a JSON-RPC error message, a
// 401 body) without a credential word the patterns know put it in the
// call's error, the verdict and the call-failed event. It is masked there.
func TestE2EOAuthTokenEchoedByTheServerIsMasked(t *testing.T) {
	const token = "ya29.a0AfH6SMBx3Qk9v"
	srv, err := mcptest.NewServer(mcptest.Options{Tools: 2})
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	gate := gateTokens(srv.Gateway(), token)
	h := &refresher{gate: gate, token: token}
	var mu sync.Mutex
	var logs bytes.Buffer
	logWriter := writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return logs.Write(p) })
	rec := &events.Recorder{}
	sup := mustNew(t, supervisor.Config{
		Endpoint: srv.URL(),
		Name:     t.Name(),
		HTTP: supervisor.HTTPConfig{
			HTTPClient:   srv.HTTPClient(),
			OAuthHandler: h,
		},
		Observe: supervisor.ObserveConfig{
			Events: rec,
			Logger: slog.New(slog.NewTextHandler(logWriter, &slog.HandlerOptions{Level: slog.LevelDebug})),
		},
	})
	sup.Start()
	require.NoError(t, sup.WaitForState(ctx, supervisor.Ready))
	srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Verb: http.MethodPost, Method: "tools/call"},
		Action: mcptest.JSONRPCError(http.StatusOK, mcptest.RequestID, -32603, "access token '"+token+"' may not call this tool")})
	_, err = sup.CallTool(ctx, callRecord("call"))
	require.Error(t, err)
	require.NotContains(t, err.Error(), token)
	var ce *supervisor.CallError
	require.ErrorAs(t, err, &ce)
	require.Contains(t, ce.Verdict.RPC.Message, "may not call this tool", "the message is kept")
	require.NotContains(t, ce.Verdict.RPC.Message, token)
	require.NotContains(t, ce.Verdict.Detail, token)
	supervisor.FlushEvents(sup)
	for _, e := range rec.Events() {
		b, err := e.MarshalJSON()
		require.NoError(t, err)
		require.NotContains(t, string(b), token, "event %s", e.Kind)
	}
	mu.Lock()
	defer mu.Unlock()
	require.NotContains(t, logs.String(), token)
}
