package supervisor_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/supervisor"
)

// refuseVersion answers with 400 and JSON-RPC -32022, as a server that does
// not speak the request's protocol version does (SEP-2575).
func refuseVersion() mcptest.Action {
	return mcptest.JSONRPCError(http.StatusBadRequest, mcptest.RequestID, -32022, "unsupported protocol version")
}

func (e *e2e) version() string {
	e.t.Helper()
	rs := e.sup.ResumeState()
	require.NotNil(e.t, rs)
	return rs.ProtocolVersion
}

// A server/discover refused once falls back to 2025 with an event; the
// fallback holds for Config.HTTP.EraReprobe of new sessions (no discover sent),
// and the first new session after it discovers again and is back on
// 2026-07-28, with an event.
func TestE2EDiscoverRefusedOnceIsReprobedAfterThePeriod(t *testing.T) {
	clock := clockwork.NewFakeClock()
	const reprobe = 10 * time.Minute
	e := newE2E2026(t, mcptest.Options{Tools: 1}, supervisor.Config{Observe: supervisor.ObserveConfig{Clock: clock}, HTTP: supervisor.HTTPConfig{EraReprobe: reprobe}, Limits: supervisor.LimitsConfig{CatalogPollInterval: -1}})
	e.srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Verb: "POST", Method: "server/discover", Occurrence: mcptest.FirstN(1)}, Action: refuseVersion()})
	e.start()
	require.Equal(t, "2025-11-25", e.version(), "fell back")
	evs, err := e.rec.WaitFor(e.ctx, func(evs []events.Event) bool { return countKind(evs, events.KindEraChanged) == 1 })
	require.NoError(t, err)
	require.Equal(t, int64(-32022), e.eventsOf(events.KindEraChanged)[0].RPCCode, "%v", evs)
	require.Equal(t, 1, e.srv.Log().Count("server/discover"))
	require.Equal(t, 1, e.srv.Log().Count("initialize"))

	// Within the period a new session does not probe.
	e.sup.Reconnect()
	require.Eventually(t, func() bool { return e.sup.SessionsOpened() == 2 && e.sup.State() == supervisor.Ready }, e2eTimeout, 5*time.Millisecond)
	require.Equal(t, 1, e.srv.Log().Count("server/discover"), "no probe within the period")
	require.Equal(t, 2, e.srv.Log().Count("initialize"))

	clock.Advance(reprobe)
	e.sup.Reconnect()
	require.Eventually(t, func() bool { return e.sup.SessionsOpened() == 3 && e.sup.State() == supervisor.Ready }, e2eTimeout, 5*time.Millisecond)
	require.Equal(t, 2, e.srv.Log().Count("server/discover"), "probed again")
	require.Equal(t, 2, e.srv.Log().Count("initialize"), "no fallback: the server answered")
	require.Equal(t, "2026-07-28", e.version())
	_, err = e.rec.WaitFor(e.ctx, func(evs []events.Event) bool { return countKind(evs, events.KindEraChanged) == 2 })
	require.NoError(t, err)
	require.Equal(t, "2026-07-28", e.eventsOf(events.KindEraChanged)[1].EraTo)
	require.NoError(t, e.call("on-2026"))
}

// A 502 to server/discover is an outage, not a refusal: the handshake is
// retried on the backoff and the session is 2026-07-28; no initialize is
// ever sent.
func TestE2EDiscover502StaysOn2026(t *testing.T) {
	e := newE2E2026(t, mcptest.Options{Tools: 1}, fastStream(supervisor.Config{}))
	e.srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Verb: "POST", Method: "server/discover", Occurrence: mcptest.FirstN(1)},
		Action: mcptest.PlainText(http.StatusBadGateway, "Bad Gateway")})
	e.start()
	require.Equal(t, "2026-07-28", e.version())
	require.Equal(t, 2, e.srv.Log().Count("server/discover"), "retried")
	require.Zero(t, e.srv.Log().Count("initialize"), "never taken for 2025")
	require.Empty(t, e.eventsOf(events.KindEraChanged))
	require.NoError(t, e.call("after-502"))
}

// A connection reset on server/discover is retried the same way.
func TestE2EDiscoverResetStaysOn2026(t *testing.T) {
	e := newE2E2026(t, mcptest.Options{Tools: 1}, fastStream(supervisor.Config{}))
	e.srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Verb: "POST", Method: "server/discover", Occurrence: mcptest.FirstN(2)}, Action: mcptest.Reset()})
	e.start()
	require.Equal(t, "2026-07-28", e.version())
	require.Zero(t, e.srv.Log().Count("initialize"))
}

// A server that answers server/discover with a 5xx every time but serves
// initialize (a 2025-era server that fails unknown methods) still connects:
// after maxDiscoverOutages handshakes go-sdk may fall back.
func TestE2EDiscoverAlways500FallsBackAfterTheBound(t *testing.T) {
	e := newE2E2026(t, mcptest.Options{Tools: 1}, fastStream(supervisor.Config{}))
	e.srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Verb: "POST", Method: "server/discover"},
		Action: mcptest.PlainText(http.StatusInternalServerError, "Internal Server Error")})
	e.start()
	require.Equal(t, "2025-11-25", e.version())
	require.Equal(t, 4, e.srv.Log().Count("server/discover"), "three outages, then the fallback")
	require.Equal(t, 1, e.srv.Log().Count("initialize"))
	require.Len(t, e.eventsOf(events.KindEraChanged), 1)
}

// A live 2026-07-28 session whose server rolled back to 2025 (every
// 2026-07-28 request answered 400 -32022) is not left ready forever: the
// session ends, the next one discovers, falls back to 2025 and serves calls.
func TestE2ELiveRefusalRediscovers(t *testing.T) {
	e := newE2E2026(t, mcptest.Options{Tools: 1}, fastStream(supervisor.Config{Limits: supervisor.LimitsConfig{CatalogPollInterval: -1}}))
	e.start()
	require.Equal(t, "2026-07-28", e.version())

	e.srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Header: mcptest.HeaderMatch{Name: "Mcp-Protocol-Version", Value: "2026-07-28"}}, Action: refuseVersion()})
	require.Error(t, e.call("refused"))
	require.Eventually(t, func() bool {
		return e.sup.State() == supervisor.Ready && e.sup.Generation() == 2
	}, e2eTimeout, 5*time.Millisecond, "state %s gen %d", e.sup.State(), e.sup.Generation())
	require.Equal(t, "2025-11-25", e.version())
	require.NoError(t, e.call("on-2025"))
	require.Equal(t, 1, e.srv.Invocations(mcptest.RecordTool, "on-2025"))
	_, err := e.rec.WaitFor(e.ctx, func(evs []events.Event) bool { return countKind(evs, events.KindEraChanged) == 2 })
	require.NoError(t, err, "the live refusal and the fallback")
	require.Equal(t, 2, e.srv.Log().Count("server/discover"))
}

// KeepAlive works on 2026-07-28 with server/discover (that era has no
// ping): discovers reach the server while the session idles, and one that
// gets no HTTP answer ends the session, which is replaced.
func TestE2EKeepAliveOn2026Discovers(t *testing.T) {
	e := newE2E2026(t, mcptest.Options{Tools: 1}, fastStream(supervisor.Config{Stream: supervisor.StreamConfig{Policy: supervisor.StreamOff}, Recovery: supervisor.RecoveryConfig{KeepAlive: 30 * time.Millisecond}, Limits: supervisor.LimitsConfig{CatalogPollInterval: -1}}))
	e.start()
	require.NoError(t, e.srv.Log().WaitCount(e.ctx, "server/discover", 3), "the keepalive discovers")
	require.Zero(t, e.srv.Log().Count("ping"), "no ping on 2026-07-28")
	require.Equal(t, uint64(1), e.sup.Generation())

	seen := e.srv.Log().Count("server/discover")
	e.srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Verb: "POST", Method: "server/discover", Occurrence: mcptest.FirstN(1)}, Action: mcptest.Reset()})
	require.Eventually(t, func() bool {
		return e.sup.State() == supervisor.Ready && e.sup.Generation() == 2
	}, e2eTimeout, 5*time.Millisecond, "state %s gen %d", e.sup.State(), e.sup.Generation())
	require.Greater(t, e.srv.Log().Count("server/discover"), seen+1, "the reset keepalive, then the new session's handshake")
	require.Equal(t, "2026-07-28", e.version())
	require.NoError(t, e.call("after-keepalive"))
}

// Sessionless sessions are told apart in events by our connection id: no
// hashed empty session id, a new id per session, the same on a session's
// opened and ended events.
func TestE2ESessionlessEventsCarryConnectionIDs(t *testing.T) {
	e := newE2E2026(t, mcptest.Options{Tools: 1}, fastStream(supervisor.Config{Limits: supervisor.LimitsConfig{CatalogPollInterval: -1}}))
	e.start()
	e.sup.Reconnect()
	require.Eventually(t, func() bool { return e.sup.SessionsOpened() == 2 && e.sup.State() == supervisor.Ready }, e2eTimeout, 5*time.Millisecond)
	_, err := e.rec.WaitFor(e.ctx, func(evs []events.Event) bool {
		return countKind(evs, events.KindSessionOpened) == 2 && countKind(evs, events.KindSessionEnded) == 1
	})
	require.NoError(t, err)
	opened, ended := e.eventsOf(events.KindSessionOpened), e.eventsOf(events.KindSessionEnded)
	for _, ev := range append(opened, ended...) {
		require.Empty(t, ev.SessionID, "sessionless: no session id, hashed or not")
		require.Regexp(t, `^conn:[0-9a-f]{8}$`, ev.Connection)
	}
	require.NotEqual(t, opened[0].Connection, opened[1].Connection, "each session its own id")
	require.Equal(t, opened[0].Connection, ended[0].Connection, "the ended event names the session it ends")
}
