package hub_test

import (
	"context"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/hub"
	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/supervisor"
)

// healthOf returns the named server's health.
func healthOf(t *testing.T, h *hub.Hub, name string) hub.Health {
	t.Helper()
	i := slices.IndexFunc(h.Health(), func(hl hub.Health) bool { return hl.Server == name })
	require.GreaterOrEqual(t, i, 0, "no server %q", name)
	return h.Health()[i]
}

// A call its caller canceled is the caller's, not a failure of the
// server's: Health keeps naming the server's last real failure (here class
// transport, "no HTTP status at all", DESIGN.md section 3), not "canceled".
func TestHealthKeepsTheServerFailureOverACallerCancel(t *testing.T) {
	f := newFixture(t, map[string]mcptest.Options{"down": {Tools: 1}})
	cfg := f.config(nil)
	// One reconnect, then an hour's wait: no retry rewrites Health while
	// the test reads it.
	cfg.Supervisor.Recovery.Backoff = supervisor.Backoff{InitialInterval: time.Hour, MaxInterval: time.Hour, NoJitter: true}
	h := f.hub(cfg)
	f.servers["down"].Close() // its port refuses connections from now on

	_, err := h.CallTool(f.ctx, record("down__record", "1"))
	require.Error(t, err)
	// Both failures reach the hub (the call's and the reconnect's), in
	// either order: Health then names the later one.
	_, err = f.rec.WaitFor(f.ctx, func(evs []events.Event) bool {
		has := func(k events.Kind) bool {
			return slices.ContainsFunc(evs, func(ev events.Event) bool { return ev.Server == "down" && ev.Kind == k })
		}
		return has(events.KindRetryScheduled) && has(events.KindCallFailed)
	})
	require.NoError(t, err)
	before := healthOf(t, h, "down")
	require.Equal(t, classify.Transport, before.Verdict.Class)

	canceled, cancel := context.WithCancel(f.ctx)
	cancel()
	_, err = h.CallTool(canceled, record("down__record", "2"))
	var sce *supervisor.CallError
	require.ErrorAs(t, err, &sce)
	require.Equal(t, classify.Canceled, sce.Verdict.Class, "the caller's error says it gave up")

	after := healthOf(t, h, "down")
	require.Equal(t, before.Verdict, after.Verdict, "the server's failure, not the caller's cancel")
}

// A host that reads Health when an event reaches it sees that event's
// facts there: the hub records a transition's verdict and time before it
// forwards the event, so Health never lags the events a host was told.
func TestHealthHoldsAnEventsFactsWhenTheHostHearsIt(t *testing.T) {
	f := newFixture(t, map[string]mcptest.Options{"down": {Tools: 1}})
	cfg := f.config(nil)
	cfg.Supervisor.Recovery.Backoff = supervisor.Backoff{InitialInterval: time.Hour, MaxInterval: time.Hour, NoJitter: true}
	var hp atomic.Pointer[hub.Hub]
	seen := make(chan hub.Health, 1)
	cfg.Events = events.SinkFunc(func(ev events.Event) {
		f.rec.Emit(ev)
		if ev.Server == "down" && ev.Kind == events.KindTransition && ev.To == events.StateFailed {
			i := slices.IndexFunc(hp.Load().Health(), func(hl hub.Health) bool { return hl.Server == "down" })
			select {
			case seen <- hp.Load().Health()[i]:
			default:
			}
		}
	})
	h := hub.New(cfg)
	hp.Store(h)
	t.Cleanup(func() { _ = h.Close() })
	require.NoError(t, h.Add(f.ctx, hub.ServerConfig{Name: "down", URL: f.servers["down"].URL()}))
	require.NoError(t, h.WaitReady(f.ctx, hub.All))
	f.servers["down"].Close() // refused from now on: the session ends, the reconnect fails

	_, err := h.CallTool(f.ctx, record("down__record", "1"))
	require.Error(t, err)
	var at hub.Health
	select {
	case at = <-seen:
	case <-f.ctx.Done():
		t.Fatal("no transition to failed")
	}
	require.Equal(t, classify.Transport, at.Verdict.Class, "the failure the event carries is already Health's")
	ev := slices.IndexFunc(f.rec.Events(), func(ev events.Event) bool { return ev.Kind == events.KindTransition && ev.To == events.StateFailed })
	require.Equal(t, f.rec.Events()[ev].Time, at.Since, "Since is the time of the move the host was told")
}

// A server's header value is a credential the hub hands its supervisor
// (supervisor.Config.Observe.Secrets): quoted by the server in a failure, it is
// masked where the supervisor makes the text, so neither the supervisor's
// error the host finds with errors.As nor Health's verdict holds it.
func TestHealthVerdictMasksTheServersHeaderValues(t *testing.T) {
	const token = "Vb7nQ2xR9kL4mT6wZ3pH8cJ5"   // no credential word near it: only the registration masks it
	const fromEnv = "Qw8eRt5yUi2oPa7sDf4gHj9k" // a ${NAME} reference's value: the value sent is the secret
	f := newFixture(t, map[string]mcptest.Options{"a": {Tools: 1}})
	f.servers["a"].Gateway().Add(mcptest.Rule{Match: mcptest.Match{Method: "tools/call"},
		Action: mcptest.JSONRPCError(http.StatusOK, mcptest.RequestID, -32603, "upstream refused "+token+" and "+fromEnv)})
	cfg := f.config(nil)
	cfg.LookupEnv = func(name string) (string, bool) { return fromEnv, name == "UPSTREAM_KEY" }
	h := hub.New(cfg)
	t.Cleanup(func() { _ = h.Close() })
	require.NoError(t, h.Add(f.ctx, hub.ServerConfig{Name: "a", URL: f.servers["a"].URL(),
		Headers: map[string]string{"X-Upstream": token, "X-Key": "${UPSTREAM_KEY}"}}))
	require.NoError(t, h.WaitReady(f.ctx, hub.All))

	_, err := h.CallTool(f.ctx, record("a__record", "1"))
	var sce *supervisor.CallError
	require.ErrorAs(t, err, &sce)
	hl := healthOf(t, h, "a")
	require.Equal(t, classify.Application, hl.Verdict.Class)
	require.Contains(t, hl.Verdict.RPC.Message, "upstream refused "+events.Masked+" and "+events.Masked)
	for _, secret := range []string{token, fromEnv} {
		require.NotContains(t, sce.Error(), secret, "the supervisor's own error, unwrapped")
		require.NotContains(t, sce.Verdict.RPC.Message, secret)
		require.NotContains(t, hl.Verdict.Detail, secret)
		require.NotContains(t, hl.Verdict.RPC.Message, secret)
	}
}

// A server whose catalog is over Config.MaxCatalogItems is ready, yet
// serves none of its items: Health names the refusal, WaitReady(All)
// gives up at once with an error naming the server and the bound
// (errors.Is ErrCatalogRefused, errors.As *CatalogRefusedError), Settled
// counts it settled. Its next catalog within the bound (after its
// notifications/tools/list_changed) is merged and clears the refusal.
// Before, the refused server counted as ready with 0 tools.
func TestRefusedCatalogIsNotReady(t *testing.T) {
	f := newFixture(t, map[string]mcptest.Options{"big": {WithoutTools: true, Tools: 3}, "small": {WithoutTools: true, Tools: 1}})
	cfg := f.config(nil)
	cfg.MaxCatalogItems = 2
	h := hub.New(cfg)
	t.Cleanup(func() { _ = h.Close() })
	for name, srv := range f.servers {
		require.NoError(t, h.Add(f.ctx, hub.ServerConfig{Name: name, URL: srv.URL()}))
	}

	err := h.WaitReady(f.ctx, hub.All)
	require.ErrorIs(t, err, hub.ErrNotReady)
	require.ErrorIs(t, err, hub.ErrCatalogRefused)
	var refused *hub.CatalogRefusedError
	require.ErrorAs(t, err, &refused)
	require.Equal(t, hub.CatalogRefusedError{Server: "big", Op: "items", Count: 3, Bound: 2}, *refused)
	require.NotErrorIs(t, err, context.DeadlineExceeded, "given up at once, not at the context's end")
	require.Contains(t, err.Error(), "big (ready, catalog refused: 3 items over 2)")

	require.NoError(t, h.WaitReady(f.ctx, hub.Settled), "a refused catalog is settled")
	require.NoError(t, h.WaitReady(f.ctx, hub.Any), "small is ready")
	hl := healthOf(t, h, "big")
	require.True(t, hl.Ready())
	require.Zero(t, hl.Tools)
	require.Equal(t, refused, hl.CatalogRefused)
	require.Nil(t, healthOf(t, h, "small").CatalogRefused)

	f.rec.Reset()
	require.True(t, f.servers["big"].RemoveTool(f.servers["big"].ToolNames()[0]))
	_, err = f.rec.WaitFor(f.ctx, func(evs []events.Event) bool {
		return slices.ContainsFunc(evs, func(ev events.Event) bool { return ev.Kind == hub.KindMergedCatalogChanged && ev.Server == "big" })
	})
	require.NoError(t, err)
	require.Nil(t, healthOf(t, h, "big").CatalogRefused, "a catalog within the bound clears the refusal")
	require.Equal(t, 2, healthOf(t, h, "big").Tools)
	require.NoError(t, h.WaitReady(f.ctx, hub.All))
}
