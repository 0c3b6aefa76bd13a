//go:build unix

package interop

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/hub"
	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/supervisor"
)

// TestHubThreeServers: the TypeScript reference server and two mcptest
// servers, all three with an "echo" tool, in one hub: one merged catalog,
// calls routed by qualified name, one server failing and then removed while
// the others serve, and a restart of the host through the file store that
// resumes every session with no initialize on the wire.
func TestHubThreeServers(t *testing.T) {
	ts := startEverything(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*scenarioTimeout)
	defer cancel()
	mc := map[string]*mcptest.Server{}
	for _, name := range []string{"alpha", "beta"} {
		srv, err := mcptest.NewServer(mcptest.Options{})
		require.NoError(t, err)
		t.Cleanup(srv.Close)
		srv.AddTool("echo")
		mc[name] = srv
	}
	hc, rec := newHTTPClient(t)
	store := &hub.FileStore{Dir: filepath.Join(t.TempDir(), "state")}
	servers := []hub.ServerConfig{{Name: "everything", URL: ts.URL()}, {Name: "alpha", URL: mc["alpha"].URL()}, {Name: "beta", URL: mc["beta"].URL()}}
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

	tools := map[string]hub.Tool{}
	for _, tl := range h.Tools() {
		tools[tl.Name] = tl
	}
	for _, name := range []string{"everything__echo", "alpha__echo", "beta__echo", "alpha__record"} {
		require.Contains(t, tools, name)
	}
	require.Equal(t, "everything", tools["everything__echo"].Server)
	require.Equal(t, "echo", tools["everything__echo"].ID)

	res, err := h.CallTool(ctx, &mcp.CallToolParams{Name: "everything__echo", Arguments: map[string]any{"message": "to ts"}})
	require.NoError(t, err)
	require.Contains(t, res.Content[0].(*mcp.TextContent).Text, "to ts")
	res, err = h.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__echo", Arguments: mcptest.EchoArgs{Text: "to alpha"}})
	require.NoError(t, err)
	require.Contains(t, res.Content[0].(*mcp.TextContent).Text, "to alpha")
	require.Zero(t, mc["beta"].Log().Count("tools/call"), "nothing reached beta")

	// beta fails every call; the others serve.
	mc["beta"].Gateway().Add(mcptest.ToolCallServerError())
	_, err = h.CallTool(ctx, &mcp.CallToolParams{Name: "beta__echo", Arguments: mcptest.EchoArgs{Text: "x"}})
	var sce *supervisor.CallError
	require.ErrorAs(t, err, &sce)
	require.Equal(t, 500, sce.Verdict.HTTPStatus)
	require.Contains(t, err.Error(), `server "beta"`)
	_, err = h.CallTool(ctx, &mcp.CallToolParams{Name: "everything__echo", Arguments: map[string]any{"message": "still"}})
	require.NoError(t, err)
	mc["beta"].Gateway().Clear()

	// The host restarts: Detach saves every state, the next run resumes.
	require.NoError(t, h.Detach())
	before := tally(rec.log.snapshot()).Initialize
	require.Equal(t, 3, before, "one handshake per server in the first run")
	h = run()
	require.Equal(t, before, tally(rec.log.snapshot()).Initialize, "the second run sends no initialize to any server")
	for name, srv := range mc {
		require.Equal(t, 1, srv.Log().Count("initialize"), "%s: only the first run's", name)
	}
	res, err = h.CallTool(ctx, &mcp.CallToolParams{Name: "everything__echo", Arguments: map[string]any{"message": "resumed"}})
	require.NoError(t, err)
	require.Contains(t, res.Content[0].(*mcp.TextContent).Text, "resumed")

	// The TypeScript server leaves while alpha serves.
	done := make(chan error, 1)
	go func() {
		_, err := h.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__echo", Arguments: mcptest.EchoArgs{Text: "during"}})
		done <- err
	}()
	require.NoError(t, h.Remove(ctx, "everything", hub.EndSession))
	require.NoError(t, <-done)
	_, err = h.CallTool(ctx, &mcp.CallToolParams{Name: "everything__echo", Arguments: map[string]any{"message": "gone"}})
	require.ErrorIs(t, err, hub.ErrUnknownName)
	require.Equal(t, 1, tally(rec.log.snapshot()).DELETE, "EndSession ends the TypeScript server's session")
	require.NoError(t, h.Close())
}
