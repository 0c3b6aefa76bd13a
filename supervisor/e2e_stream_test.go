package supervisor_test

import (
	"context"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/supervisor"
)

// fastStream shortens the stream keeper's and the hostility rule's spans so
// the S5 tests take a second, not a minute.
func fastStream(cfg supervisor.Config) supervisor.Config {
	cfg.Stream.Keeper = supervisor.StreamKeeper{Span: 200 * time.Millisecond, InitialBackoff: 20 * time.Millisecond, MaxBackoff: 50 * time.Millisecond}
	cfg.Stream.HostileRule = supervisor.HostileRule{Threshold: 3}
	cfg.Recovery.Backoff = supervisor.Backoff{InitialInterval: 10 * time.Millisecond, MaxInterval: 50 * time.Millisecond}
	return cfg
}

// eventsOf returns the events of kind that e's supervisor emitted for
// what it took before the call, every one of them delivered.
func (e *e2e) eventsOf(kind events.Kind) []events.Event {
	supervisor.FlushEvents(e.sup)
	return eventsOf(e.rec, kind)
}

func eventsOf(rec *events.Recorder, kind events.Kind) []events.Event {
	var out []events.Event
	for _, e := range rec.Events() {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// S5: a gateway that closes every GET at once is found GET-hostile; the
// session is kept, and no GET and no reconnect follow.
func TestE2ES5GETHostileGatewayKeepsTheSession(t *testing.T) {
	e := newE2E(t, mcptest.Options{Tools: 1}, fastStream(supervisor.Config{}))
	e.srv.Gateway().Add(mcptest.GETHostile())
	e.start()

	require.Eventually(t, func() bool { return len(e.eventsOf(events.KindStreamDisabled)) == 1 },
		e2eTimeout, 5*time.Millisecond, "the auto rule marks the server GET-hostile")
	disabled := e.eventsOf(events.KindStreamDisabled)[0]
	require.Equal(t, "get-hostile", disabled.Why, "the rule that fired, typed")
	require.Empty(t, disabled.Detail)
	require.Equal(t, uint64(1), e.sup.Generation(), "no session lost")
	require.True(t, e.sup.ResumeState().StandaloneStream.Off)
	gets := e.srv.Log().CountVerb("GET")
	for i := range 5 {
		require.NoError(t, e.call(string(rune('a'+i))))
	}
	require.Equal(t, gets, e.srv.Log().CountVerb("GET"), "the held stream sends no GET")
	require.Equal(t, uint64(1), e.sup.Generation())
	require.Equal(t, 1, e.srv.Log().Count("initialize"))

	// The next session does not open the stream at all.
	e.srv.ExpireAll()
	require.Error(t, e.call("expired"))
	require.NoError(t, e.call("next"))
	require.Equal(t, uint64(2), e.sup.Generation())
	require.Equal(t, gets, e.srv.Log().CountVerb("GET"), "the stream stays off for the new session")
}

// A server without a standalone stream answers the first GET 405: the
// session's push stream is declined, an event says so, no GET follows, the
// catalog is polled, and the next session asks again.
func TestE2EStandaloneGETDeclinedIsAnEvent(t *testing.T) {
	e := newE2E(t, mcptest.Options{Tools: 1}, fastStream(supervisor.Config{Limits: supervisor.LimitsConfig{CatalogPollInterval: 50 * time.Millisecond}}))
	e.srv.Gateway().Add(mcptest.RejectGET(http.StatusMethodNotAllowed))
	e.start()
	_, err := e.rec.WaitFor(e.ctx, func(evs []events.Event) bool { return countKind(evs, events.KindStreamDeclined) == 1 })
	require.NoError(t, err)
	declined := e.eventsOf(events.KindStreamDeclined)[0]
	require.Equal(t, uint64(1), declined.Generation)
	require.Equal(t, 405, declined.HTTPStatus)
	require.Equal(t, "text/plain", declined.ContentType)
	require.Empty(t, e.eventsOf(events.KindStreamDisabled), "a declined stream is no hostility")

	e.srv.AddTool("polled")
	e.waitTool("polled", "the catalog is polled")
	require.Equal(t, 1, e.srv.Log().CountVerb("GET"), "declined: not sent again")

	e.srv.ExpireAll()
	require.Error(t, e.call("expired"))
	require.NoError(t, e.call("next"))
	_, err = e.rec.WaitFor(e.ctx, func(evs []events.Event) bool { return countKind(evs, events.KindStreamDeclined) == 2 })
	require.NoError(t, err, "the next session asks again")
	require.Equal(t, uint64(2), e.eventsOf(events.KindStreamDeclined)[1].Generation)
	require.Equal(t, 2, e.srv.Log().CountVerb("GET"))
}

// S5's healthy case: a proxy that cuts the idle stream more often than
// go-sdk's MaxRetries neither costs the session nor marks the server hostile.
func TestE2ES5IdleCuttingProxyIsNotHostile(t *testing.T) {
	e := newE2E(t, mcptest.Options{Tools: 1}, fastStream(supervisor.Config{}))
	e.srv.Gateway().Add(mcptest.IdleCut(300 * time.Millisecond))
	e.start()

	require.NoError(t, e.srv.Log().WaitVerb(e.ctx, "GET", 7), "more cuts than go-sdk's MaxRetries (5)")
	require.Empty(t, e.eventsOf(events.KindStreamDisabled))
	require.Equal(t, supervisor.Ready, e.sup.State())
	require.Equal(t, uint64(1), e.sup.Generation())
	require.NoError(t, e.call("still-here"))
	require.Equal(t, 1, e.srv.Log().Count("initialize"))
}

// A server restart while no call runs is noticed through the standalone
// stream: one new session, catalog refreshed.
func TestE2ERestartWhileIdleNoticedByTheStream(t *testing.T) {
	e := newE2E(t, mcptest.Options{Tools: 1}, fastStream(supervisor.Config{}))
	e.start()
	// The stream's first GET must have been answered by the old server: a
	// first GET answered with the new server's plain 404 means "no stream
	// here" (wire.StreamAttempt.Declined), and nothing would notice the
	// restart. Logged is not enough: the gateway logs a request before the
	// server has it.
	require.NoError(t, e.srv.Log().WaitFunc(e.ctx, 1, func(x mcptest.Entry) bool {
		return x.Verb == "GET" && x.Status == http.StatusOK
	}))
	e.srv.AddTool("late-tool")
	require.NoError(t, e.srv.Restart())

	require.Eventually(t, func() bool {
		c := e.sup.Catalog()
		return e.sup.State() == supervisor.Ready && e.sup.Generation() == 2 && c.Generation == 2
	}, e2eTimeout, 5*time.Millisecond, "state %s gen %d", e.sup.State(), e.sup.Generation())
	require.Contains(t, e.sup.Catalog().ToolNames(), "late-tool")
	require.Equal(t, 2, e.sup.SessionsOpened())
	require.Equal(t, 2, e.srv.Log().Count("initialize"))
}

// With the stream off, the keepalive ping finds the dead session.
func TestE2ERestartWhileIdleNoticedByKeepalive(t *testing.T) {
	cfg := fastStream(supervisor.Config{Stream: supervisor.StreamConfig{Policy: supervisor.StreamOff}, Recovery: supervisor.RecoveryConfig{KeepAlive: 50 * time.Millisecond}})
	e := newE2E(t, mcptest.Options{Tools: 1}, cfg)
	e.start()
	require.NoError(t, e.srv.Restart())

	require.Eventually(t, func() bool {
		return e.sup.State() == supervisor.Ready && e.sup.Generation() == 2
	}, e2eTimeout, 5*time.Millisecond, "state %s gen %d", e.sup.State(), e.sup.Generation())
	require.Zero(t, e.srv.Log().CountVerb("GET"), "the stream is off")
	require.Zero(t, e.srv.Log().CountVerb("DELETE"), "the dead session is detached, not deleted")
	require.NoError(t, e.call("after"))
}

// No HTTP status (connection reset), on the call, on the ping that verifies
// the session and on the next handshake: one new session after backoff; the
// reset call never ran.
func TestE2EConnectionResetThenServerBack(t *testing.T) {
	e := newE2E(t, mcptest.Options{Tools: 1}, fastStream(supervisor.Config{Stream: supervisor.StreamConfig{Policy: supervisor.StreamOff}}))
	e.start()
	rule := mcptest.Rule{Match: mcptest.Match{Verb: "POST", Occurrence: mcptest.FirstN(3)}, Action: mcptest.Reset()}
	e.srv.Gateway().Add(rule)

	err := e.call("reset")
	var ce *supervisor.CallError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, "transport", ce.Verdict.Class.String(), "verdict %s", ce.Verdict)
	require.Equal(t, supervisor.OutcomeUnknown, ce.Delivery)

	require.NoError(t, e.call("back"))
	require.Equal(t, 2, e.sup.SessionsOpened())
	settle(t, e.ctx, e.sup, e.rec, supervisor.Ready)
	require.Len(t, e.eventsOf(events.KindRetryScheduled), 1, "the reset handshake was retried once")
	require.Zero(t, e.srv.Invocations(mcptest.RecordTool, "reset"))
	require.Equal(t, 1, e.srv.Invocations(mcptest.RecordTool, "back"))
}

// notifications/tools/list_changed re-lists the catalog on the same session.
func TestE2EListChangedRelists(t *testing.T) {
	e := newE2E(t, mcptest.Options{Tools: 1}, fastStream(supervisor.Config{}))
	e.start()
	require.NoError(t, e.srv.Log().WaitVerb(e.ctx, "GET", 1), "the stream is open to carry the notification")
	e.srv.AddTool("added-later")
	require.Eventually(t, func() bool { return len(e.eventsOf(events.KindCatalogChanged)) == 2 },
		e2eTimeout, 5*time.Millisecond)
	changed := e.eventsOf(events.KindCatalogChanged)
	require.Equal(t, []string{"added-later"}, changed[1].Added)
	require.Contains(t, e.sup.Catalog().ToolNames(), "added-later")
	require.Equal(t, uint64(1), e.sup.Generation())
}

// A list_changed sent while the standalone stream is down is lost by a server
// without an event store; when the stream comes back the catalog is re-listed.
func TestE2EListChangedDuringAStreamGapIsNotLost(t *testing.T) {
	cfg := fastStream(supervisor.Config{})
	cfg.Stream.Keeper.InitialBackoff = 300 * time.Millisecond
	e := newE2E(t, mcptest.Options{Tools: 1}, cfg)
	cut := mcptest.GETHostile()
	cut.Match.Occurrence = mcptest.First()
	e.srv.Gateway().Add(cut)
	e.start()
	require.NoError(t, e.srv.Log().WaitVerb(e.ctx, "GET", 1))
	e.srv.AddTool("added-in-gap") // nobody listens: the notification is lost

	require.Eventually(t, func() bool { return e.sup.Catalog().Tool("added-in-gap") != nil },
		e2eTimeout, 5*time.Millisecond, "the catalog learns of the tool once the stream is back")
	require.Equal(t, uint64(1), e.sup.Generation())
	_, err := e.sup.CallTool(e.ctx, &mcp.CallToolParams{Name: "added-in-gap", Arguments: map[string]any{}})
	require.NoError(t, err)
}

// A keepalive ping answered 401 (a credential that expired) keeps the
// session: no DELETE, no new session; calls still go out on it. The pings
// run on a fake clock, each tick once the last ping's answer was judged
// (its debug line): on the real clock a loaded machine made pings outlast
// their bound, the interval, and two in a row ended the session.
func TestE2EKeepalive401KeepsTheSession(t *testing.T) {
	clock := clockwork.NewFakeClock()
	kept := make(chan struct{}, 8)
	logger := slog.New(logLine{msg: "mcpsup: keepalive ping failed; the session is kept", seen: kept})
	cfg := supervisor.Config{Stream: supervisor.StreamConfig{Policy: supervisor.StreamOff}, Recovery: supervisor.RecoveryConfig{KeepAlive: time.Hour}, Observe: supervisor.ObserveConfig{Clock: clock, Logger: logger}, Limits: supervisor.LimitsConfig{CatalogPollInterval: -1}}
	e := newE2E(t, mcptest.Options{Tools: 1}, cfg)
	e.srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Verb: "POST", Method: "ping"},
		Action: mcptest.PlainText(401, "token expired")})
	e.start()

	require.NoError(t, clock.BlockUntilContext(e.ctx, 1), "the keepalive's ticker, the only timer")
	for i := range 3 {
		clock.Advance(time.Hour)
		select {
		case <-kept:
		case <-e.ctx.Done():
			t.Fatalf("ping %d was not judged", i+1)
		}
	}
	require.Equal(t, 3, e.srv.Log().Count("ping"), "pings keep going after a 401")
	require.Zero(t, e.srv.Log().CountVerb("DELETE"))
	require.Equal(t, supervisor.Ready, e.sup.State())
	require.Equal(t, uint64(1), e.sup.Generation())
	require.NoError(t, e.call("after"))
	require.Equal(t, 1, e.srv.Log().Count("initialize"))
}

// logLine is a slog.Handler that signals seen each time a record with
// message msg is handled, dropping the signal when seen is full.
type logLine struct {
	msg  string
	seen chan<- struct{}
}

func (l logLine) Enabled(context.Context, slog.Level) bool { return true }
func (l logLine) Handle(_ context.Context, r slog.Record) error {
	if r.Message == l.msg {
		select {
		case l.seen <- struct{}{}:
		default:
		}
	}
	return nil
}
func (l logLine) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l logLine) WithGroup(string) slog.Handler      { return l }
