//go:build unix

package hub_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/hub"
	"github.com/mcpsup/mcpsup/internal/stdiotest"
	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/stdio"
	"github.com/mcpsup/mcpsup/supervisor"
)

// TestStdioServerBesideAnHTTPOne: an mcpServers file with a command entry
// and a url entry; both serve through the merged catalog, the stdio server
// is restarted after it crashes, and its env values are masked like
// header values. The template's HTTP and Stream groups reach the url entry
// alone.
func TestStdioServerBesideAnHTTPOne(t *testing.T) {
	f := newFixture(t, map[string]mcptest.Options{"web": {Tools: 1}})
	bin, err := stdiotest.Build(f.ctx, t.TempDir())
	require.NoError(t, err)
	const secret = "s3cret-env-value"
	doc, err := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"local": map[string]any{"command": bin, "args": []string{"-stderr-at-start", "booting"}, "env": map[string]string{"MCPSUP_TOKEN": secret}, "cwd": t.TempDir()},
		"web":   map[string]any{"url": f.servers["web"].URL()},
	}})
	require.NoError(t, err)
	file, err := hub.ParseServers(doc)
	require.NoError(t, err)
	require.Len(t, file.Servers, 2)
	require.Empty(t, file.Warnings)

	// The template's HTTP client and stream policy are the HTTP server's:
	// the stdio server is started without them (supervisor.New refuses
	// them beside a Command).
	cfg := f.config(nil)
	cfg.Supervisor.Stream.Policy = supervisor.StreamOn
	h := hub.New(cfg)
	defer h.Close()
	for _, sc := range file.Servers {
		require.NoError(t, h.Add(f.ctx, sc))
	}
	require.NoError(t, h.WaitReady(f.ctx, hub.All))
	require.Contains(t, names(h.Tools()), "local__echo")
	require.Contains(t, names(h.Tools()), "web__record")

	res, err := h.CallTool(f.ctx, &mcp.CallToolParams{Name: "local__echo", Arguments: map[string]any{"text": "hi"}})
	require.NoError(t, err)
	require.Equal(t, "hi", res.Content[0].(*mcp.TextContent).Text)
	_, err = h.CallTool(f.ctx, record("web__record", "x"))
	require.NoError(t, err)

	_, err = h.CallTool(f.ctx, &mcp.CallToolParams{Name: "local__stderr", Arguments: map[string]any{"text": "token " + secret + "\n"}})
	require.NoError(t, err)
	_, err = h.CallTool(f.ctx, &mcp.CallToolParams{Name: "local__crash", Arguments: map[string]any{"code": 9}})
	var exit *stdio.ProcessExitError
	require.ErrorAs(t, err, &exit)
	require.Equal(t, 9, exit.Code)
	res, err = h.CallTool(f.ctx, &mcp.CallToolParams{Name: "local__echo", Arguments: map[string]any{"text": "again"}})
	require.NoError(t, err, "the call waited for the new process")
	require.Equal(t, "again", res.Content[0].(*mcp.TextContent).Text)

	for _, hl := range h.Health() {
		require.Equal(t, supervisor.Ready, hl.State, hl.Server)
		if hl.Server == "local" {
			require.EqualValues(t, 2, hl.Generation, "one restart")
		} else {
			require.EqualValues(t, 1, hl.Generation)
		}
	}
	_, err = f.rec.WaitFor(f.ctx, func(es []events.Event) bool {
		for _, e := range es {
			if e.Server == "local" && e.Kind == events.KindProcessExited {
				require.Equal(t, 9, e.ExitCode)
				require.Contains(t, e.Detail, "token ")
				require.NotContains(t, e.Detail, secret, "env values are masked")
				return true
			}
		}
		return false
	})
	require.NoError(t, err)
	for _, e := range f.rec.Events() {
		require.False(t, strings.Contains(e.Detail, secret) || strings.Contains(e.Verdict.Detail, secret), "%+v", e)
	}
}

// TestStdioServerIsNeverLeased: with a Store that grants leases, a stdio
// server is a process of this replica's own: it starts at once, no lease
// asked for, and its Close saves nothing.
func TestStdioServerIsNeverLeased(t *testing.T) {
	f := newFixture(t, nil)
	bin, err := stdiotest.Build(f.ctx, t.TempDir())
	require.NoError(t, err)
	leaser := newMemLeaser(clockwork.NewRealClock())
	cfg := f.config(leaser)
	h := hub.New(cfg)
	defer h.Close()
	require.NoError(t, h.Add(f.ctx, hub.ServerConfig{Name: "local", Command: bin}))
	require.NoError(t, h.WaitReady(f.ctx, hub.All))
	require.Contains(t, names(h.Tools()), "local__echo")
	require.Zero(t, len(leaser.acquires), "no lease asked for")
	for _, e := range f.eventsOf(hub.KindServerAdded) {
		require.Equal(t, events.Event{Kind: hub.KindServerAdded, Server: "local"}, e, "fresh, not standing by")
	}
	require.NoError(t, h.Close())
	require.Empty(t, leaser.states, "nothing saved for a process")
}

// A command entry whose program cannot start fails with a verdict of class
// unknown, which says nothing by itself: WaitReady's error carries the
// start's error, redacted as the hub's errors are.
func TestNotReadyErrorSaysWhyACommandCannotStart(t *testing.T) {
	f := newFixture(t, map[string]mcptest.Options{"web": {Tools: 1}})
	const secret = "k3y-0123456789abcdef"
	// The start's retry waits on a fake clock that never moves: the server
	// stays failed, however loaded the machine, while the wait reads it.
	cfg := f.config(nil)
	cfg.Supervisor.Observe.Clock = clockwork.NewFakeClock()
	h := hub.New(cfg)
	defer h.Close()
	require.NoError(t, h.Add(f.ctx, hub.ServerConfig{Name: "web", URL: f.servers["web"].URL(), Headers: map[string]string{"X-Key": secret}}))
	require.NoError(t, h.Add(f.ctx, hub.ServerConfig{Name: "typo", Command: "/nonexistent/" + secret}))
	require.NoError(t, h.Supervisor("typo").WaitForState(f.ctx, supervisor.Failed))
	require.NoError(t, h.Supervisor("web").WaitForState(f.ctx, supervisor.Ready))
	// Its sink hands the hub one event at a time: once the retry's event
	// is in, the hub has learnt the failed transition's verdict before it.
	_, err := f.rec.WaitFor(f.ctx, func(evs []events.Event) bool {
		return slices.ContainsFunc(evs, func(e events.Event) bool { return e.Server == "typo" && e.Kind == events.KindRetryScheduled })
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(f.ctx)
	cancel() // the wait reads the states once: typo's start is retried, so it is not hopeless
	err = h.WaitReady(ctx, hub.All)
	require.ErrorIs(t, err, hub.ErrNotReady)
	require.Contains(t, err.Error(), "typo (failed, last failure unknown: mcpsup: starting stdio server")
	require.Contains(t, err.Error(), "no such file or directory")
	require.NotContains(t, err.Error(), secret)
}

// TestStdioServerDoesNotInheritAnotherServersHeaderVariable: a variable a
// server's header references (${NAME}) is that server's credential ("A
// credential goes to the server it is for, never to the others": package
// doc). A stdio server's process inherits the hub's environment without
// it: "files", added from the same file before "search" whose header names
// it, does not see it; "own", whose env sets it, does; an unreferenced
// variable is inherited. A server added later withholds its variable from
// the processes started after it (a restart).
func TestStdioServerDoesNotInheritAnotherServersHeaderVariable(t *testing.T) {
	t.Setenv("MCPSUP_TEST_SEARCH_KEY", "searchKeyFromEnv0123456789")
	t.Setenv("MCPSUP_TEST_LATE_KEY", "lateKeyFromEnv0123456789")
	t.Setenv("MCPSUP_TEST_PLAIN", "plain")
	f := newFixture(t, map[string]mcptest.Options{"search": {Tools: 1}, "late": {Tools: 1}})
	bin, err := stdiotest.Build(f.ctx, t.TempDir())
	require.NoError(t, err)
	doc, err := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"files":  map[string]any{"command": bin},
		"own":    map[string]any{"command": bin, "env": map[string]string{"MCPSUP_TEST_SEARCH_KEY": "its own value 0123"}},
		"search": map[string]any{"url": f.servers["search"].URL(), "headers": map[string]string{"Authorization": "Bearer ${MCPSUP_TEST_SEARCH_KEY}"}},
	}})
	require.NoError(t, err)
	file, err := hub.ParseServers(doc)
	require.NoError(t, err)
	require.Equal(t, "files", file.Servers[0].Name, "added before the server whose header names the variable")

	h := hub.New(f.config(nil))
	defer h.Close()
	require.NoError(t, h.AddServers(f.ctx, file))
	require.NoError(t, h.WaitReady(f.ctx, hub.All))
	getenv := func(server, name string) string {
		t.Helper()
		res, err := h.CallTool(f.ctx, &mcp.CallToolParams{Name: server + "__getenv", Arguments: map[string]any{"name": name}})
		require.NoError(t, err)
		return res.Content[0].(*mcp.TextContent).Text
	}
	require.Equal(t, "unset", getenv("files", "MCPSUP_TEST_SEARCH_KEY"), "another server's credential")
	require.Equal(t, "set", getenv("own", "MCPSUP_TEST_SEARCH_KEY"), "its own env sets it")
	require.Equal(t, "set", getenv("files", "MCPSUP_TEST_PLAIN"), "not a credential: inherited")
	require.Equal(t, "set", getenv("files", "MCPSUP_TEST_LATE_KEY"), "no server names it yet")

	require.NoError(t, h.Add(f.ctx, hub.ServerConfig{Name: "late", URL: f.servers["late"].URL(),
		Headers: map[string]string{"X-Api-Key": "${env:MCPSUP_TEST_LATE_KEY}"}}))
	sup := h.Supervisor("files")
	gen := sup.Generation()
	_, err = h.CallTool(f.ctx, &mcp.CallToolParams{Name: "files__crash", Arguments: map[string]any{"code": 2}})
	require.Error(t, err)
	for sup.Generation() <= gen {
		require.True(t, sup.WaitForStateChange(f.ctx, sup.State()), "no restart")
	}
	require.NoError(t, h.WaitReady(f.ctx, hub.All))
	require.Equal(t, "unset", getenv("files", "MCPSUP_TEST_LATE_KEY"), "the restarted process does not inherit it")
}
