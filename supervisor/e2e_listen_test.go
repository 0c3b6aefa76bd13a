package supervisor_test

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/supervisor"
)

// newE2E2026 is newE2E on a 2026-07-28 server (sessionless, server/discover,
// subscriptions/listen).
func newE2E2026(t *testing.T, opts mcptest.Options, cfg supervisor.Config) *e2e {
	t.Helper()
	opts.Mode = mcptest.Sessionless2026
	e := newE2E(t, opts, cfg)
	return e
}

func (e *e2e) listens() int { return e.srv.Log().Count(mcptest.ListenMethod) }

// waitTool waits until the published catalog lists the tool name; why
// names what should have brought it there.
func (e *e2e) waitTool(name, why string) {
	e.t.Helper()
	require.Eventually(e.t, func() bool { return slices.Contains(e.sup.Catalog().ToolNames(), name) },
		e2eTimeout, 10*time.Millisecond, why)
}

// The 2026-07-28 listen stream closed at once, again and again, while
// requests succeed: the hostility rule fires, the listen is no longer sent,
// an event says so, the catalog is polled instead, and no session is lost.
func TestE2EListenHostileGatewayIsDetectedAndPolled(t *testing.T) {
	cfg := fastStream(supervisor.Config{Limits: supervisor.LimitsConfig{CatalogPollInterval: 100 * time.Millisecond}})
	e := newE2E2026(t, mcptest.Options{Tools: 1}, cfg)
	e.srv.Gateway().Add(mcptest.ListenHostile())
	e.start()
	require.Equal(t, "2026-07-28", e.sup.ResumeState().ProtocolVersion)

	// Requests succeed while the listen keeps failing at once.
	require.Eventually(t, func() bool {
		_ = e.call("probe")
		return len(e.eventsOf(events.KindStreamDisabled)) == 1
	}, e2eTimeout, 10*time.Millisecond, "the rule marks the listen hostile")
	require.GreaterOrEqual(t, e.listens(), 3, "the listen was re-sent on the backoff")
	listens := e.listens()

	e.srv.AddTool("late-tool")
	e.waitTool("late-tool", "the catalog is polled")
	require.Equal(t, listens, e.listens(), "no listen once the rule fired")
	require.Equal(t, uint64(1), e.sup.Generation(), "no session lost")
	require.Equal(t, 1, e.sup.SessionsOpened())
	require.Equal(t, supervisor.Ready, e.sup.State())
	require.Zero(t, e.srv.Log().Count("initialize"), "2026: discover only")
}

// A proxy that cuts the idle listen stream neither costs the session nor
// marks the server hostile: the listen is re-sent each time and keeps
// carrying list_changed. (The proxy cuts the first three listens only, so
// that the tool added below cannot fall into a gap between two listens: a
// change in a gap is caught by the re-list after it, at most one per 30 s.)
func TestE2EListenIdleCutIsReopened(t *testing.T) {
	e := newE2E2026(t, mcptest.Options{Tools: 1}, fastStream(supervisor.Config{Limits: supervisor.LimitsConfig{CatalogPollInterval: -1}}))
	cut := mcptest.ListenIdleCut(300 * time.Millisecond)
	cut.Match.Occurrence = mcptest.FirstN(3)
	e.srv.Gateway().Add(cut)
	e.start()

	require.NoError(t, e.srv.Log().WaitCount(e.ctx, mcptest.ListenMethod, 4), "the cut listen is re-sent")
	require.NoError(t, e.srv.Log().WaitFunc(e.ctx, 3, func(x mcptest.Entry) bool { return x.Method == mcptest.ListenMethod && x.Done }),
		"three listens were cut")
	// The fourth listen's answer has begun: the server wrote its headers
	// with the acknowledgement, after registering the subscription.
	require.NoError(t, e.srv.Log().WaitFunc(e.ctx, 4, func(x mcptest.Entry) bool { return x.Method == mcptest.ListenMethod && x.Status == 200 }))
	require.Empty(t, e.eventsOf(events.KindStreamDisabled))
	require.NoError(t, e.call("still-here"))

	lists := e.srv.Log().Count("tools/list")
	e.srv.AddTool("pushed")
	e.waitTool("pushed", "list_changed still arrives on the re-sent listen")
	require.Greater(t, e.srv.Log().Count("tools/list"), lists)
	require.Equal(t, uint64(1), e.sup.Generation())
	require.Equal(t, supervisor.Ready, e.sup.State())
}

// A server restart ends the listen stream; it is re-sent, the catalog is
// re-listed after the gap, and a tool added afterwards reaches the catalog
// through the new listen (no polling: CatalogPollInterval -1).
func TestE2EListenReopenedAfterServerRestart(t *testing.T) {
	e := newE2E2026(t, mcptest.Options{Tools: 1}, fastStream(supervisor.Config{Limits: supervisor.LimitsConfig{CatalogPollInterval: -1}}))
	e.start()
	require.NoError(t, e.srv.Log().WaitCount(e.ctx, mcptest.ListenMethod, 1))

	require.NoError(t, e.srv.Restart())
	require.NoError(t, e.srv.Log().WaitCount(e.ctx, mcptest.ListenMethod, 2), "the listen is re-sent after the restart")
	require.NoError(t, e.srv.Log().WaitCount(e.ctx, "tools/list", 2), "re-listed after the gap")

	e.srv.AddTool("after-restart")
	e.waitTool("after-restart", "list_changed on the new listen reaches the catalog")
	require.Equal(t, uint64(1), e.sup.Generation(), "sessionless: nothing to lose")
	require.Equal(t, supervisor.Ready, e.sup.State())
}

// With the stream off, no listen is sent on 2026 either; the catalog is
// polled.
func TestE2EListenOffPolls(t *testing.T) {
	e := newE2E2026(t, mcptest.Options{Tools: 1}, fastStream(supervisor.Config{Stream: supervisor.StreamConfig{Policy: supervisor.StreamOff}, Limits: supervisor.LimitsConfig{CatalogPollInterval: 50 * time.Millisecond}}))
	e.start()
	e.srv.AddTool("polled")
	e.waitTool("polled", "the catalog is polled")
	require.Zero(t, e.listens(), "no listen with the stream off")
}

// A gateway that refuses the listen (404 plain text, as one that routes
// only the request methods answers) declines the push stream: the listen is
// not sent again for the session, and the catalog is polled.
func TestE2EListenDeclinedIsPolled(t *testing.T) {
	e := newE2E2026(t, mcptest.Options{Tools: 1}, fastStream(supervisor.Config{Limits: supervisor.LimitsConfig{CatalogPollInterval: 50 * time.Millisecond}}))
	e.srv.Gateway().Add(mcptest.ListenRejected(http.StatusNotFound))
	e.start()
	e.srv.AddTool("polled")
	e.waitTool("polled", "the catalog is polled")
	require.Equal(t, 1, e.listens(), "declined: not sent again")
	require.Empty(t, e.eventsOf(events.KindStreamDisabled), "a declined stream is no hostility")
	declined := e.eventsOf(events.KindStreamDeclined)
	require.Len(t, declined, 1)
	require.Equal(t, uint64(1), declined[0].Generation)
	require.Equal(t, 404, declined[0].HTTPStatus)
	require.Equal(t, uint64(1), e.sup.Generation())
}

// A 502 to the listen is an outage: it is re-sent on the backoff, never
// declined, and the push works once the gateway lets it through.
func TestE2EListen502IsRetried(t *testing.T) {
	e := newE2E2026(t, mcptest.Options{Tools: 1}, fastStream(supervisor.Config{Limits: supervisor.LimitsConfig{CatalogPollInterval: -1}}))
	rule := mcptest.ListenRejected(http.StatusBadGateway)
	rule.Match.Occurrence = mcptest.FirstN(3)
	e.srv.Gateway().Add(rule)
	e.start()
	require.NoError(t, e.srv.Log().WaitFunc(e.ctx, 1, func(x mcptest.Entry) bool { return x.Method == mcptest.ListenMethod && x.Status == 200 }),
		"re-sent past the 502s")
	require.Equal(t, 4, e.listens())
	e.srv.AddTool("pushed")
	e.waitTool("pushed", "list_changed on the listen that got through")
	require.Empty(t, e.eventsOf(events.KindStreamDisabled))
}
