package hub

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/supervisor"
)

// waitUntil waits, without polling, until cond holds: it is checked again
// at every change of the hub's servers (h.changed).
func waitUntil(ctx context.Context, t *testing.T, h *Hub, cond func() bool) {
	t.Helper()
	for {
		h.mu.Lock()
		ch := h.changed
		h.mu.Unlock()
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatal("the hub never reached the state waited for")
		}
	}
}

// TestRemoveThenAddOfTheSameNameKeepsTheNewCatalog: server "a" is removed
// while a change of its catalog is being made ready (held open by a Naming
// that blocks on one item), and "a" is added again, at another URL. The
// removed entry's last catalog work (its items leaving) is applied by the
// server's name: before, Add took the name as soon as Remove had taken the
// entry out, the new "a" merged its items, and the old entry's leaving
// update, applied after, emptied them (Tools empty, "a__…" unknown, yet
// WaitReady(All) nil). The name is now the removed server's until Remove
// returns: Add meanwhile is ErrDuplicate, and after it the new server's
// items are merged and stay.
func TestRemoveThenAddOfTheSameNameKeepsTheNewCatalog(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	old, err := mcptest.NewServer(mcptest.Options{Tools: 1})
	require.NoError(t, err)
	defer old.Close()
	next, err := mcptest.NewServer(mcptest.Options{Tools: 1})
	require.NoError(t, err)
	defer next.Close()

	var holding atomic.Bool
	entered, release := make(chan struct{}, 1), make(chan struct{})
	naming := func(server, item string) string {
		if item == "slow" && holding.Load() {
			select {
			case entered <- struct{}{}:
			default:
			}
			<-release // the removed server's catalog change, being made ready
		}
		return DefaultNaming(server, item)
	}
	h := New(Config{Naming: naming, Supervisor: supervisor.Config{Era: supervisor.Era2025}})
	defer h.Close()
	require.NoError(t, h.Add(ctx, ServerConfig{Name: "a", URL: old.URL()}))
	require.NoError(t, h.WaitReady(ctx, All))

	holding.Store(true)
	old.AddTool("slow") // list_changed: a re-list whose naming blocks
	<-entered
	removed := make(chan error, 1)
	go func() { removed <- h.Remove(ctx, "a", EndSession) }()
	waitUntil(ctx, t, h, func() bool { return h.entry("a") == nil })

	err = h.Add(ctx, ServerConfig{Name: "a", URL: next.URL()})
	require.ErrorIs(t, err, ErrDuplicate, "the name is the removed server's until Remove returns")
	holding.Store(false)
	close(release)
	require.NoError(t, <-removed)

	require.NoError(t, h.Add(ctx, ServerConfig{Name: "a", URL: next.URL()}))
	require.NoError(t, h.WaitReady(ctx, All))
	var want []string
	for _, n := range next.ToolNames() {
		want = append(want, "a__"+n)
	}
	slices.Sort(want)
	var got []string
	for _, tl := range h.Tools() {
		got = append(got, tl.Name)
	}
	require.Equal(t, want, got)
	_, err = h.CallTool(ctx, &mcp.CallToolParams{Name: want[0], Arguments: mcptest.EchoArgs{Text: "hi"}})
	require.NoError(t, err)
	require.Equal(t, 1, next.Log().Count("tools/call"), "the call reached the new server")
}
