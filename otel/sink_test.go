package mcpsupotel_test

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/mcptest"
	mcpsupotel "github.com/mcpsup/mcpsup/otel"
	"github.com/mcpsup/mcpsup/supervisor"
)

// Attribute shorthands.
var (
	server   = mcpsupotel.AttrServer.String
	state    = mcpsupotel.AttrState.String
	from     = mcpsupotel.AttrFrom.String
	to       = mcpsupotel.AttrTo.String
	trigger  = mcpsupotel.AttrTrigger.String
	class    = mcpsupotel.AttrErrorType.String
	delivery = mcpsupotel.AttrDelivery.String
	method   = mcpsupotel.AttrMethod.String
	kind     = mcpsupotel.AttrCatalogKind.String
)

func newSupervisor(t *testing.T, srv *mcptest.Server, cfg supervisor.Config) *supervisor.Supervisor {
	t.Helper()
	cfg.Endpoint, cfg.HTTP.HTTPClient = srv.URL(), srv.HTTPClient()
	sup, err := supervisor.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = sup.Close() })
	return sup
}

// waitEvents waits until rec holds n events matching f. The Observer's sink
// comes before rec in events.Multi, so it has seen them too.
func waitEvents(t *testing.T, ctx context.Context, rec *events.Recorder, n int, f func(events.Event) bool) {
	t.Helper()
	_, err := rec.WaitFor(ctx, func(evs []events.Event) bool {
		c := 0
		for _, e := range evs {
			if f(e) {
				c++
			}
		}
		return c >= n
	})
	require.NoError(t, err)
}

func isTransition(fromS, toS events.State) func(events.Event) bool {
	return func(e events.Event) bool {
		return e.Kind == events.KindTransition && e.From == fromS && e.To == toS
	}
}

// S4: a 500 and a 429 on tools/call are answers: the metrics show two failed
// calls by class, a rate-limit window and one session, no more; a failed
// call moves no state (no transition).
func TestS4Metrics(t *testing.T) {
	h := newHarness(t, mcpsupotel.Options{})
	srv, err := mcptest.NewServer(mcptest.Options{Tools: 1})
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	rec := &events.Recorder{}
	sup := newSupervisor(t, srv, supervisor.Config{Name: "s4", Observe: supervisor.ObserveConfig{Events: events.Multi(h.obs.Sink(), rec)}})
	sup.Start()
	require.NoError(t, sup.WaitForState(ctx, supervisor.Ready))
	waitEvents(t, ctx, rec, 1, isTransition(events.StateConnecting, events.StateReady))

	call := func(id string) error {
		_, err := sup.CallTool(ctx, &mcp.CallToolParams{Name: mcptest.RecordTool, Arguments: mcptest.IDArgs{ID: id}})
		return err
	}
	rule500 := mcptest.ToolCallServerError()
	rule500.Match.Occurrence = mcptest.First()
	srv.Gateway().Add(rule500)
	require.Error(t, call("x500"))
	rule429 := mcptest.ToolCallRateLimited(30 * time.Second)
	rule429.Match.Occurrence = mcptest.First()
	srv.Gateway().Add(rule429)
	require.Error(t, call("x429"))
	require.Error(t, call("in-window"), "refused locally inside the window")
	waitEvents(t, ctx, rec, 2, func(e events.Event) bool { return e.Kind == events.KindCallFailed })

	require.EqualValues(t, 1, h.value("mcpsup.sessions.opened", server("s4")), "0 extra sessions")
	require.EqualValues(t, sup.SessionsOpened(), h.value("mcpsup.sessions.opened", server("s4")))
	require.EqualValues(t, 1, h.value("mcpsup.connection.state", server("s4"), state("ready")))
	require.EqualValues(t, 0, h.value("mcpsup.connection.state", server("s4"), state("connecting")))
	require.EqualValues(t, 1, h.value("mcpsup.connection.transitions", from("idle"), to("connecting"), trigger("started")))
	require.EqualValues(t, 0, h.value("mcpsup.connection.transitions", from("ready")), "no transition out of ready, none within")
	require.EqualValues(t, 1, h.value("mcpsup.calls.failed", server("s4"), method("tools/call"), class("server-error"), delivery("answered")))
	require.EqualValues(t, 1, h.value("mcpsup.calls.failed", server("s4"), method("tools/call"), class("rate-limited"), delivery("answered")))
	require.EqualValues(t, 2, h.value("mcpsup.calls.failed", server("s4")), "the refused call is not a call-failed event")
	require.EqualValues(t, 1, h.value("mcpsup.rate_limit.windows", server("s4")))
	require.EqualValues(t, 3, h.value("mcpsup.catalog.size", server("s4"), kind("tools")), "record, block and one echo tool")
	require.EqualValues(t, 0, h.value("mcpsup.retries.scheduled"))

	m, ok := h.metric("mcpsup.rate_limit.window.duration")
	require.True(t, ok)
	require.Equal(t, "s", m.Unit)

	require.NoError(t, sup.Close())
	require.EqualValues(t, 0, h.value("mcpsup.connection.state", server("s4")), "a closed connection is not counted")
	require.EqualValues(t, 1, h.value("mcpsup.sessions.ended", server("s4")))
}

// S2: a blind resume the server rejects takes one stale recovery; the
// metrics count its transitions and the sessions it cost.
func TestS2StaleRecoveryMetrics(t *testing.T) {
	h := newHarness(t, mcpsupotel.Options{})
	srv, err := mcptest.NewServer(mcptest.Options{Tools: 3})
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()

	first := newSupervisor(t, srv, supervisor.Config{Name: "first"})
	first.Start()
	require.NoError(t, first.WaitForState(ctx, supervisor.Ready))
	require.NoError(t, first.Detach())
	rs := first.ResumeState()
	require.NotNil(t, rs)
	rs.InitializeResult = nil // blind
	require.NoError(t, srv.Restart())
	srv.Gateway().Add(mcptest.StaleSessionNullID())

	rec := &events.Recorder{}
	sup := newSupervisor(t, srv, supervisor.Config{Name: "s2", Resume: rs, Observe: supervisor.ObserveConfig{Events: events.Multi(h.obs.Sink(), rec)}})
	sup.Start()
	require.NoError(t, sup.WaitForState(ctx, supervisor.Ready))
	waitEvents(t, ctx, rec, 1, isTransition(events.StateStaleRecovering, events.StateReady))

	require.EqualValues(t, 1, h.value("mcpsup.connection.transitions", server("s2"), from("idle"), to("resuming-blind")))
	require.EqualValues(t, 1, h.value("mcpsup.connection.transitions", server("s2"), from("resuming-blind"), to("probing"), trigger("attached")))
	// The stale answer reaches the machine as session-died (the wire layer
	// detached) or discovery-failed (the probe's error), whichever comes
	// first; either way it is entered once.
	require.EqualValues(t, 1, h.value("mcpsup.connection.transitions", server("s2"), from("probing"), to("stale-recovering")), "entered exactly once")
	require.EqualValues(t, 1, h.value("mcpsup.connection.transitions", server("s2"), from("stale-recovering"), to("stale-recovering"), trigger("handshake-succeeded")), "the one handshake, internal")
	require.EqualValues(t, 2, h.value("mcpsup.connection.transitions", server("s2"), to("stale-recovering")))
	require.EqualValues(t, 1, h.value("mcpsup.connection.transitions", server("s2"), from("stale-recovering"), to("ready")))
	require.EqualValues(t, 0, h.value("mcpsup.connection.transitions", server("s2"), to("failed")))
	require.EqualValues(t, 2, h.value("mcpsup.sessions.opened", server("s2")), "the attached session and one new one")
	require.EqualValues(t, sup.SessionsOpened(), h.value("mcpsup.sessions.opened", server("s2")))
	require.EqualValues(t, 1, h.value("mcpsup.sessions.ended", server("s2")), "the stale one")
	require.EqualValues(t, 1, h.value("mcpsup.connection.state", server("s2"), state("ready")))
	require.EqualValues(t, 1, h.value("mcpsup.connection.state", server("s2")), "one live connection")
	require.EqualValues(t, 5, h.value("mcpsup.catalog.size", server("s2"), kind("tools")))
}
