//go:build unix

package interop

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/hub"
	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/supervisor"
)

// TestHubMixedEras: the TypeScript reference server (2025 era) and a
// go-sdk 2026-07-28 server (sessionless: server/discover and
// subscriptions/listen) in one hub. The first run learns each era (the
// TypeScript server refuses server/discover: an era-changed event), a tool
// the 2026 server adds reaches the merged catalog through its listen
// stream, and a restart of the host through the file store resumes both
// with no handshake on the wire.
func TestHubMixedEras(t *testing.T) {
	ts := startEverything(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*scenarioTimeout)
	defer cancel()
	modern, err := mcptest.NewServer(mcptest.Options{Mode: mcptest.Sessionless2026})
	require.NoError(t, err)
	t.Cleanup(modern.Close)
	hc, rec := newHTTPClient(t)
	store := &hub.FileStore{Dir: filepath.Join(t.TempDir(), "state")}
	servers := []hub.ServerConfig{{Name: "everything", URL: ts.URL()}, {Name: "modern", URL: modern.URL()}}
	log := &eventLog{}
	run := func() *hub.Hub {
		h := hub.New(hub.Config{Supervisor: supervisor.Config{HTTP: supervisor.HTTPConfig{HTTPClient: hc}}, Store: store, Events: log})
		t.Cleanup(func() { _ = h.Close() })
		for _, sc := range servers {
			require.NoError(t, h.Add(ctx, sc))
		}
		require.NoError(t, h.WaitReady(ctx, hub.All))
		return h
	}
	h := run()
	require.Equal(t, 1, modern.Log().Count("server/discover"))
	require.Zero(t, modern.Log().Count("initialize"), "2026-07-28: no initialize")
	require.NoError(t, modern.Log().WaitCount(ctx, mcptest.ListenMethod, 1), "the listen stream is opened")
	_, err = log.waitFor(ctx, func(evs []events.Event) bool {
		return slices.ContainsFunc(evs, func(e events.Event) bool { return e.Kind == events.KindEraChanged && e.Server == "everything" })
	})
	require.NoError(t, err, "the TypeScript server's refused server/discover is an event")
	for _, e := range log.snapshot() {
		if e.Kind == events.KindEraChanged {
			require.Equal(t, "everything", e.Server, "the 2026 server keeps its era: %+v", e)
		}
	}

	// A tool added on the 2026 server is pushed through its listen stream.
	modern.AddTool("late")
	require.Eventually(t, func() bool {
		return slices.ContainsFunc(h.Tools(), func(tl hub.Tool) bool { return tl.Name == "modern__late" })
	}, scenarioTimeout, 10*time.Millisecond, "list_changed on the listen stream reaches the merged catalog")

	// The host restarts: both resume with no handshake on the wire.
	require.NoError(t, h.Detach())
	before := tally(rec.log.snapshot())
	h = run()
	after := tally(rec.log.snapshot())
	require.Equal(t, before.Initialize, after.Initialize, "no initialize to the TypeScript server")
	require.Equal(t, before.Discover, after.Discover, "no server/discover to either: the 2026 discovery result was persisted")
	require.Equal(t, 1, modern.Log().Count("server/discover"))
	require.True(t, slices.ContainsFunc(h.Tools(), func(tl hub.Tool) bool { return tl.Name == "modern__late" }))
	require.NoError(t, h.Close())
}
