package hub_test

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/hub"
	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/supervisor"
)

// refusedURL is an MCP endpoint on 127.0.0.1 where nothing listens: every
// connection is refused.
func refusedURL(t *testing.T) string {
	t.Helper()
	srv, err := mcptest.NewServer(mcptest.Options{})
	require.NoError(t, err)
	u := srv.URL()
	srv.Close()
	return u
}

// A server whose port refuses connections churns: every retry dials a
// new session, and past MaxSessions within ChurnWindow the retry's
// failed -> failed transition makes the failure terminal (reason churn).
// Settled returns then, not when its context ends: that internal
// transition wakes the wait as any other.
func TestWaitSettledReturnsWhenChurnIsTerminal(t *testing.T) {
	f := newFixture(t, nil)
	cfg := f.config(nil)
	cfg.Supervisor.Recovery.MaxSessions = 2
	cfg.Supervisor.Recovery.ChurnWindow = time.Hour
	cfg.Supervisor.Recovery.ChurnCooldown = time.Hour // stays terminal while the test reads it
	h := hub.New(cfg)
	t.Cleanup(func() { _ = h.Close() })
	require.NoError(t, h.Add(f.ctx, hub.ServerConfig{Name: "down", URL: refusedURL(t)}))

	require.NoError(t, h.WaitReady(f.ctx, hub.Settled), "settled before the wait's context ends")
	hl := healthOf(t, h, "down")
	require.Equal(t, supervisor.Failed, hl.State)
	require.Equal(t, supervisor.ReasonChurn, hl.Reason)
	churned := slices.ContainsFunc(f.rec.Events(), func(ev events.Event) bool {
		return ev.Kind == events.KindTransition && ev.Server == "down" && ev.From == ev.To && ev.Reason == events.ReasonChurn
	})
	require.True(t, churned, "the churn failure was the failed -> failed transition")
}

// One server failed for good (401 on initialize: unauthorized, terminal)
// while another still retries (503 on initialize: server-error, on its
// backoff): All gives up at once, Settled waits for the second and returns
// once it is ready, its items merged.
func TestWaitSettledWaitsForTheServerStillConnecting(t *testing.T) {
	f := newFixture(t, map[string]mcptest.Options{"key": {}, "slow": {Tools: 1}})
	f.servers["key"].Gateway().Add(mcptest.Rule{Match: mcptest.Match{Method: "initialize"}, Action: mcptest.PlainText(http.StatusUnauthorized, "no key")})
	busy := f.servers["slow"].Gateway().Add(mcptest.Rule{Match: mcptest.Match{Method: "initialize"}, Action: mcptest.PlainText(http.StatusServiceUnavailable, "busy")})
	cfg := f.config(nil)
	cfg.Supervisor.Recovery.MaxSessions = 1 << 20 // retries never churn here
	h := hub.New(cfg)
	t.Cleanup(func() { _ = h.Close() })
	require.NoError(t, h.Add(f.ctx, hub.ServerConfig{Name: "key", URL: f.servers["key"].URL()}))
	require.NoError(t, h.Add(f.ctx, hub.ServerConfig{Name: "slow", URL: f.servers["slow"].URL()}))

	settled := make(chan error, 1)
	go func() { settled <- h.WaitReady(f.ctx, hub.Settled) }()
	_, err := f.rec.WaitFor(f.ctx, func(evs []events.Event) bool {
		keyDone := slices.ContainsFunc(evs, func(ev events.Event) bool {
			return ev.Server == "key" && ev.Kind == events.KindTransition && ev.Reason == events.ReasonUnauthorized
		})
		slowRetried := slices.ContainsFunc(evs, func(ev events.Event) bool { return ev.Server == "slow" && ev.Kind == events.KindRetryScheduled })
		return keyDone && slowRetried
	})
	require.NoError(t, err)
	require.ErrorIs(t, h.WaitReady(f.ctx, hub.All), hub.ErrNotReady, "All gives up: one server failed for good")
	select {
	case err := <-settled:
		t.Fatalf("Settled returned while slow still retries: %v", err)
	default:
	}

	f.servers["slow"].Gateway().Remove(busy)
	require.NoError(t, <-settled)
	require.True(t, healthOf(t, h, "slow").Ready())
	require.Equal(t, supervisor.ReasonUnauthorized, healthOf(t, h, "key").Reason)
	want := []string{}
	for _, n := range f.servers["slow"].ToolNames() {
		want = append(want, "slow__"+n)
	}
	require.ElementsMatch(t, want, names(h.Tools()), "the merged catalog holds slow's items")
}
