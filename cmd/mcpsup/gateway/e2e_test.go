//lint:file-ignore SA1019 logging and roots, deprecated from protocol 2026-07-28 on (SEP-2577), are what tests here pass through

package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/cmd/mcpsup/gateway"
	"github.com/mcpsup/mcpsup/cmd/mcpsup/internal/e2etest"
	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/hub"
	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/supervisor"
)

// fastHub retries within tens of milliseconds, so an upstream that comes
// back is ready again at once.
func fastHub() hub.Config {
	return hub.Config{Supervisor: supervisor.Config{Recovery: supervisor.RecoveryConfig{
		Backoff: supervisor.Backoff{InitialInterval: 20 * time.Millisecond, MaxInterval: 100 * time.Millisecond, NoJitter: true},
	}}}
}

type fixture struct {
	ctx  context.Context
	up   *e2etest.Upstreams
	gw   *gateway.Gateway
	http *httptest.Server
	path string
}

func newFixture(t *testing.T, names ...string) *fixture {
	t.Helper()
	return newFixtureWith(t, gateway.Config{}, names...)
}

// newFixtureWith is newFixture with the gateway's config cfg (its
// ServersFile and Hub are the fixture's).
func newFixtureWith(t *testing.T, cfg gateway.Config, names ...string) *fixture {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	f := &fixture{ctx: ctx, up: e2etest.New(t, ctx)}
	f.path = f.up.File(t, t.TempDir(), names...)
	cfg.ServersFile, cfg.Hub = f.path, fastHub()
	f.gw = gateway.New(cfg)
	t.Cleanup(func() { _ = f.gw.Close() })
	require.NoError(t, f.gw.Start(ctx))
	require.NoError(t, f.gw.Hub().WaitReady(ctx, hub.All))
	f.http = httptest.NewServer(f.gw.Handler(gateway.HTTPOptions{}))
	t.Cleanup(f.http.Close)
	// The downstream catalog follows the hub's on a goroutine of its own:
	// wait until a client sees every merged tool.
	cs := f.connect(t, nil)
	want := len(f.gw.Hub().MCPTools())
	waitFor(t, ctx, nil, func() bool { return len(e2etest.ToolNames(t, ctx, cs)) == want })
	require.NoError(t, cs.Close())
	return f
}

// connect opens a go-sdk client session on the gateway's /mcp.
func (f *fixture) connect(t *testing.T, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, opts)
	cs, err := c.Connect(f.ctx, &mcp.StreamableClientTransport{Endpoint: f.http.URL + "/mcp"}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func text(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	require.NotEmpty(t, res.Content)
	tc, ok := res.Content[0].(*mcp.TextContent)
	require.True(t, ok)
	return tc.Text
}

// waitFor polls cond on the client's view (a list call each time) until it
// holds or the test's context ends; the wait is bounded by ctx, not timed.
func waitFor(t *testing.T, ctx context.Context, changed <-chan struct{}, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-changed:
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			t.Fatal("condition not met before the test's deadline")
		}
	}
}

// The merged catalog of three upstreams (stdio, HTTP, and an HTTP server
// behind a port that goes down) reaches a go-sdk client by qualified name,
// a call to each is routed to its server, and while one upstream is down
// the others' items stay and their calls are served; the down server's call
// fails with a JSON-RPC error whose data names the server, the class and
// the delivery; once it is back its call is served again.
func TestE2EMergedCatalogAndCallsOverHTTP(t *testing.T) {
	f := newFixture(t, "files", "search", "flaky")
	cs := f.connect(t, nil)

	names := e2etest.ToolNames(t, f.ctx, cs)
	for _, want := range []string{"files__echo", "search__record", "search__" + mcptest.ToolName(1), "flaky__record"} {
		require.Contains(t, names, want)
	}
	prompts, err := cs.ListPrompts(f.ctx, nil)
	require.NoError(t, err)
	require.Equal(t, "search__"+mcptest.PromptName(1), prompts.Prompts[0].Name)
	resources, err := cs.ListResources(f.ctx, nil)
	require.NoError(t, err)
	require.Equal(t, mcptest.ResourceURI(1), resources.Resources[0].URI)
	templates, err := cs.ListResourceTemplates(f.ctx, nil)
	require.NoError(t, err)
	require.Len(t, templates.ResourceTemplates, 1)

	res, err := cs.CallTool(f.ctx, &mcp.CallToolParams{Name: "files__echo", Arguments: map[string]any{"text": "hi"}})
	require.NoError(t, err)
	require.Contains(t, text(t, res), "hi")
	_, err = cs.CallTool(f.ctx, &mcp.CallToolParams{Name: "search__record", Arguments: map[string]any{"id": "s1"}})
	require.NoError(t, err)
	require.Equal(t, 1, f.up.HTTP.Invocations(mcptest.RecordTool, "s1"))
	_, err = cs.CallTool(f.ctx, &mcp.CallToolParams{Name: "flaky__record", Arguments: map[string]any{"id": "f1"}})
	require.NoError(t, err)
	require.Equal(t, 1, f.up.Flaky.Invocations(mcptest.RecordTool, "f1"))
	pr, err := cs.GetPrompt(f.ctx, &mcp.GetPromptParams{Name: "search__" + mcptest.PromptName(1)})
	require.NoError(t, err)
	require.NotEmpty(t, pr.Messages)
	rr, err := cs.ReadResource(f.ctx, &mcp.ReadResourceParams{URI: mcptest.ResourceURI(1)})
	require.NoError(t, err)
	require.NotEmpty(t, rr.Contents)
	rr, err = cs.ReadResource(f.ctx, &mcp.ReadResourceParams{URI: "mcptest://template/1/abc"})
	require.NoError(t, err, "a URI of a template is routed to the template's server")
	require.NotEmpty(t, rr.Contents)

	// One upstream down: its call fails, named; the others serve.
	f.up.Port.Down()
	_, err = cs.CallTool(f.ctx, &mcp.CallToolParams{Name: "flaky__record", Arguments: map[string]any{"id": "f2"}})
	var we *jsonrpc.Error
	require.True(t, errors.As(err, &we), "%v", err)
	require.Equal(t, int64(gateway.CodeInternalError), we.Code)
	var data gateway.ErrorData
	require.NoError(t, json.Unmarshal(we.Data, &data))
	require.Equal(t, "flaky", data.Server)
	require.Equal(t, "transport", data.Class)
	require.NotEmpty(t, data.Delivery)
	require.Equal(t, 0, f.up.Flaky.Invocations(mcptest.RecordTool, "f2"))

	names = e2etest.ToolNames(t, f.ctx, cs)
	require.Contains(t, names, "files__echo", "fail-open: the others' items stay")
	require.Contains(t, names, "search__record")
	_, err = cs.CallTool(f.ctx, &mcp.CallToolParams{Name: "search__record", Arguments: map[string]any{"id": "s2"}})
	require.NoError(t, err)
	res, err = cs.CallTool(f.ctx, &mcp.CallToolParams{Name: "files__echo", Arguments: map[string]any{"text": "still"}})
	require.NoError(t, err)
	require.Contains(t, text(t, res), "still")

	// Back: its call is served again (the call waits for the recovery).
	require.NoError(t, f.up.Port.Up())
	_, err = cs.CallTool(f.ctx, &mcp.CallToolParams{Name: "flaky__record", Arguments: map[string]any{"id": "f3"}})
	require.NoError(t, err)
	require.Equal(t, 1, f.up.Flaky.Invocations(mcptest.RecordTool, "f3"))
}

// An unknown name is answered -32602 (MCP 2025-11-25, server/tools.mdx,
// Error Handling: unknown tools are a protocol error, Invalid params), and
// nothing is sent upstream.
func TestE2EUnknownToolIsInvalidParams(t *testing.T) {
	f := newFixture(t, "search")
	cs := f.connect(t, nil)
	before := f.up.HTTP.Log().Count("tools/call")
	_, err := cs.CallTool(f.ctx, &mcp.CallToolParams{Name: "search__nope", Arguments: map[string]any{}})
	var we *jsonrpc.Error
	require.True(t, errors.As(err, &we), "%v", err)
	require.Equal(t, int64(jsonrpc.CodeInvalidParams), we.Code)
	require.Equal(t, before, f.up.HTTP.Log().Count("tools/call"))
}

// A tool the upstream adds reaches the downstream client as
// notifications/tools/list_changed (MCP 2025-11-25, server/tools.mdx, List
// Changed Notification) and then in its tools/list; one it removes leaves.
func TestE2EListChangedReachesTheClient(t *testing.T) {
	f := newFixture(t, "search")
	changed := make(chan struct{}, 16)
	cs := f.connect(t, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		select {
		case changed <- struct{}{}:
		default:
		}
	}})
	require.NotContains(t, e2etest.ToolNames(t, f.ctx, cs), "search__fresh")

	f.up.HTTP.AddTool("fresh")
	select {
	case <-changed:
	case <-f.ctx.Done():
		t.Fatal("no tools/list_changed reached the client")
	}
	waitFor(t, f.ctx, changed, func() bool { return slices.Contains(e2etest.ToolNames(t, f.ctx, cs), "search__fresh") })

	require.True(t, f.up.HTTP.RemoveTool("fresh"))
	waitFor(t, f.ctx, changed, func() bool { return !slices.Contains(e2etest.ToolNames(t, f.ctx, cs), "search__fresh") })
	require.Contains(t, e2etest.ToolNames(t, f.ctx, cs), "search__record")
}

// /healthz answers 200; /readyz answers the servers' states and counts as
// JSON, 200 once every server settled with its tools.
func TestE2EHealthAndReadiness(t *testing.T) {
	f := newFixture(t, "files", "search")
	resp, err := http.Get(f.http.URL + "/healthz")
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	resp, err = http.Get(f.http.URL + "/readyz")
	require.NoError(t, err)
	var rd gateway.Readiness
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&rd))
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "%+v", rd)
	require.True(t, rd.Ready)
	require.Len(t, rd.Servers, 2)
	require.Equal(t, "files", rd.Servers[0].Name)
	require.Equal(t, "ready", rd.Servers[0].State)
	require.Positive(t, rd.Servers[0].Tools)
	require.Equal(t, 4, rd.Servers[1].Tools, "search: record, block and two plain tools")
}

// A downstream call's progress token gets the upstream's progress back
// under the client's own token (MCP 2025-11-25,
// basic/utilities/progress.mdx: notifications carry "the same progressToken
// provided in the original request"); the gateway's token upstream is its
// own.
func TestE2EProgressForwarded(t *testing.T) {
	f := newFixture(t, "search")
	got := make(chan *mcp.ProgressNotificationParams, 4)
	cs := f.connect(t, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
		got <- req.Params
	}})
	params := &mcp.CallToolParams{Name: "search__" + mcptest.BlockTool, Arguments: map[string]any{"id": "p"}}
	params.SetProgressToken("client-token")
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(f.ctx, params)
		done <- err
	}()
	require.NoError(t, f.up.HTTP.WaitBlocked(f.ctx, "p"))
	f.up.HTTP.Progress("p")
	select {
	case p := <-got:
		require.Equal(t, "client-token", p.ProgressToken)
	case <-f.ctx.Done():
		t.Fatal("no progress reached the client")
	}
	f.up.HTTP.Release("p")
	require.NoError(t, <-done)
}

// A downstream cancel (notifications/cancelled, MCP 2025-11-25,
// basic/utilities/cancellation.mdx) cancels the upstream call: the
// upstream gets its own notifications/cancelled for the request.
func TestE2ECancelForwarded(t *testing.T) {
	f := newFixture(t, "search")
	cs := f.connect(t, nil)
	ctx, cancel := context.WithCancel(f.ctx)
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search__" + mcptest.BlockTool, Arguments: map[string]any{"id": "c"}})
		done <- err
	}()
	require.NoError(t, f.up.HTTP.WaitBlocked(f.ctx, "c"))
	before := f.up.HTTP.Log().Count("notifications/cancelled")
	cancel()
	require.Error(t, <-done)
	wctx, wcancel := context.WithTimeout(f.ctx, 20*time.Second)
	defer wcancel()
	if err := f.up.HTTP.Log().WaitCount(wctx, "notifications/cancelled", before+1); err != nil {
		for _, e := range f.up.HTTP.Log().Entries() {
			t.Logf("%+v", e)
		}
		t.Fatal(err)
	}
}

// An upstream's elicitation/create during a call reaches the downstream
// client of that call and its answer goes back (MCP 2025-11-25,
// client/elicitation.mdx); a client that did not declare the elicitation
// capability is never sent one: the upstream gets an error instead.
func TestE2EElicitationRelayed(t *testing.T) {
	f := newFixture(t, "ask")
	asked := make(chan string, 1)
	cs := f.connect(t, &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked <- req.Params.Message
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"ok": true}}, nil
	}})
	res, err := cs.CallTool(f.ctx, &mcp.CallToolParams{Name: "ask__confirm", Arguments: map[string]any{}})
	require.NoError(t, err)
	require.Equal(t, "proceed?", <-asked)
	require.Equal(t, "answer accept", text(t, res))

	plain := f.connect(t, nil)
	res, err = plain.CallTool(f.ctx, &mcp.CallToolParams{Name: "ask__confirm", Arguments: map[string]any{}})
	require.NoError(t, err)
	require.True(t, res.IsError)
	require.Contains(t, text(t, res), "method not found", "-32601: the client offers no elicitation")
}

// completion/complete for a prompt's argument is routed to the prompt's
// server with the server's own prompt name (MCP 2025-11-25,
// server/utilities/completion.mdx: ref/prompt names the prompt).
func TestE2ECompletionRouted(t *testing.T) {
	f := newFixture(t, "ask", "search")
	cs := f.connect(t, nil)
	res, err := cs.Complete(f.ctx, &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: "ask__greet"},
		Argument: mcp.CompleteParamsArgument{Name: "name", Value: "a"},
	})
	require.NoError(t, err)
	require.Equal(t, []string{"alice"}, res.Completion.Values)

	_, err = cs.Complete(f.ctx, &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: "nobody__greet"},
		Argument: mcp.CompleteParamsArgument{Name: "name", Value: "a"},
	})
	var we *jsonrpc.Error
	require.True(t, errors.As(err, &we), "%v", err)
	require.Equal(t, int64(jsonrpc.CodeInvalidParams), we.Code)
}

func readyz(t *testing.T, url string) (int, gateway.Readiness) {
	t.Helper()
	resp, err := http.Get(url + "/readyz")
	require.NoError(t, err)
	defer resp.Body.Close()
	var rd gateway.Readiness
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&rd))
	return resp.StatusCode, rd
}

// gatewayOn starts a gateway on cfg's hub with the servers of sf and serves
// its HTTP handler; it does not wait for the servers.
func gatewayOn(t *testing.T, ctx context.Context, hc hub.Config, servers ...hub.ServerConfig) (*gateway.Gateway, string) {
	t.Helper()
	gw := gateway.New(gateway.Config{Hub: hc})
	t.Cleanup(func() { _ = gw.Close() })
	require.NoError(t, gw.Apply(ctx, &hub.ServersFile{Servers: servers}))
	srv := httptest.NewServer(gw.Handler(gateway.HTTPOptions{}))
	t.Cleanup(srv.Close)
	return gw, srv.URL
}

// /readyz is 503 while a server's first connection is under way (not
// settled), naming it.
func TestReadyzNotSettled(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv, err := mcptest.NewServer(mcptest.Options{})
	require.NoError(t, err)
	defer srv.Close()
	srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Method: "initialize"}, Action: mcptest.Delay(time.Minute)})
	_, url := gatewayOn(t, ctx, fastHub(), hub.ServerConfig{Name: "slow", URL: srv.URL()})
	require.NoError(t, srv.Log().WaitCount(ctx, "initialize", 1))
	code, rd := readyz(t, url)
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.False(t, rd.Settled)
	require.Contains(t, rd.Why[0], "slow: not settled")
}

// A server that is ready and declares tools but has none in the merged
// catalog (here: its tools/list answers an empty list) makes /readyz 503:
// "connected with 0 tools" is not ready.
func TestReadyzReadyWithZeroTools(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv, err := mcptest.NewServer(mcptest.Options{Tools: 3})
	require.NoError(t, err)
	defer srv.Close()
	srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Method: "tools/list"}, Action: mcptest.JSONBody(`{"jsonrpc":"2.0","id":$ID,"result":{"tools":[]}}`)})
	ok, err := mcptest.NewServer(mcptest.Options{})
	require.NoError(t, err)
	defer ok.Close()
	gw, url := gatewayOn(t, ctx, fastHub(), hub.ServerConfig{Name: "big", URL: srv.URL()}, hub.ServerConfig{Name: "ok", URL: ok.URL()})
	require.NoError(t, gw.Hub().WaitReady(ctx, hub.All))
	code, rd := readyz(t, url)
	require.Equal(t, http.StatusServiceUnavailable, code, "%+v", rd)
	require.True(t, rd.Settled)
	require.Equal(t, []string{"big: ready with 0 tools though it declares tools"}, rd.Why)
	require.Equal(t, "ready", rd.Servers[0].State)
	require.Equal(t, 0, rd.Servers[0].Tools)
}

// A server whose catalog is over the hub's bound (MaxCatalogItems) is
// ready, yet its catalog was not merged: /readyz is 503 and names the
// refusal and the bound; once its catalog is within the bound again (its
// tools/list_changed) /readyz is 200. Before, it read "ready with 0 tools".
func TestReadyzNamesARefusedCatalog(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv, err := mcptest.NewServer(mcptest.Options{WithoutTools: true, Tools: 3})
	require.NoError(t, err)
	defer srv.Close()
	ok, err := mcptest.NewServer(mcptest.Options{})
	require.NoError(t, err)
	defer ok.Close()
	hc := fastHub()
	hc.MaxCatalogItems = 2
	gw, url := gatewayOn(t, ctx, hc, hub.ServerConfig{Name: "big", URL: srv.URL()}, hub.ServerConfig{Name: "ok", URL: ok.URL()})
	require.ErrorIs(t, gw.Hub().WaitReady(ctx, hub.All), hub.ErrCatalogRefused)
	require.NoError(t, gw.Hub().WaitReady(ctx, hub.Settled))
	code, rd := readyz(t, url)
	require.Equal(t, http.StatusServiceUnavailable, code, "%+v", rd)
	require.True(t, rd.Settled)
	require.Equal(t, []string{"big: catalog refused: 3 items over the bound of 2"}, rd.Why)
	require.Equal(t, "ready", rd.Servers[0].State)
	require.Equal(t, "3 items over the bound of 2", rd.Servers[0].CatalogRefused)

	require.True(t, srv.RemoveTool(srv.ToolNames()[0]))
	waitFor(t, ctx, nil, func() bool { code, _ := readyz(t, url); return code == http.StatusOK })
	_, rd = readyz(t, url)
	require.Empty(t, rd.Servers[0].CatalogRefused)
	require.Equal(t, 2, rd.Servers[0].Tools)
}

// Fail-open readiness: a server that answers 401 settles in its own
// terminal state (reason unauthorized, no retry: one initialize), the
// others serve, and /readyz stays 200 naming its state and reason.
func TestReadyzUnauthorizedServerLeavesTheOthersServing(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	locked, err := mcptest.NewServer(mcptest.Options{})
	require.NoError(t, err)
	defer locked.Close()
	locked.Gateway().Add(mcptest.Rule{Action: mcptest.Respond(http.StatusUnauthorized, http.Header{"Www-Authenticate": {`Bearer realm="x"`}}, nil)})
	open, err := mcptest.NewServer(mcptest.Options{})
	require.NoError(t, err)
	defer open.Close()
	gw, url := gatewayOn(t, ctx, fastHub(), hub.ServerConfig{Name: "locked", URL: locked.URL()}, hub.ServerConfig{Name: "open", URL: open.URL()})
	require.NoError(t, gw.Hub().WaitReady(ctx, hub.Settled))

	code, rd := readyz(t, url)
	require.Equal(t, http.StatusOK, code, "%+v", rd)
	require.Equal(t, "locked", rd.Servers[0].Name)
	require.Equal(t, "failed", rd.Servers[0].State)
	require.Equal(t, "unauthorized", rd.Servers[0].Reason)
	require.Equal(t, "ready", rd.Servers[1].State)
	require.Equal(t, 1, locked.Log().Count("initialize"), "unauthorized is not retried")

	c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url + "/mcp"}, nil)
	require.NoError(t, err)
	defer cs.Close()
	// The downstream catalog follows the hub's on its own goroutine
	// (DESIGN.md section 9): the tool is served once it is listed.
	waitFor(t, ctx, nil, func() bool { return slices.Contains(e2etest.ToolNames(t, ctx, cs), "open__record") })
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "open__record", Arguments: map[string]any{"id": "x"}})
	require.NoError(t, err)
	require.Equal(t, 1, open.Invocations(mcptest.RecordTool, "x"))
}

// Apply is a diff: an unchanged server keeps its session (no initialize)
// and its process (the same pid), a changed one restarts on a new session
// (its old one ended: DELETE), a removed one leaves the catalog.
func TestApplyIsADiff(t *testing.T) {
	f := newFixture(t, "files", "search")
	pid := func() string {
		res, err := f.gw.Hub().CallTool(f.ctx, &mcp.CallToolParams{Name: "files__pid", Arguments: map[string]any{}})
		require.NoError(t, err)
		return res.Content[0].(*mcp.TextContent).Text
	}
	first := pid()
	sf, err := hub.LoadServers(f.path)
	require.NoError(t, err)

	require.NoError(t, f.gw.Apply(f.ctx, sf))
	require.Equal(t, first, pid())
	require.Equal(t, 1, f.up.HTTP.Log().Count("initialize"))

	for i := range sf.Servers {
		if sf.Servers[i].Name == "search" {
			sf.Servers[i].Headers = map[string]string{"X-Tenant": "blue"}
		}
	}
	require.NoError(t, f.gw.Apply(f.ctx, sf))
	require.NoError(t, f.gw.Hub().WaitReady(f.ctx, hub.All))
	require.Equal(t, 2, f.up.HTTP.Log().Count("initialize"), "the changed server restarted")
	require.Equal(t, 1, f.up.HTTP.Log().CountVerb("DELETE"), "its old session ended")
	require.Equal(t, first, pid(), "the unchanged server kept its process")

	sf.Servers = slices.DeleteFunc(sf.Servers, func(sc hub.ServerConfig) bool { return sc.Name == "files" })
	require.NoError(t, f.gw.Apply(f.ctx, sf))
	cs := f.connect(t, nil)
	waitFor(t, f.ctx, nil, func() bool { return !slices.Contains(e2etest.ToolNames(t, f.ctx, cs), "files__echo") })
	require.Contains(t, e2etest.ToolNames(t, f.ctx, cs), "search__record")
}

// With a token, every endpoint but /healthz needs `Authorization: Bearer
// <token>` (RFC 6750, section 2.1); a missing or wrong one is answered 401
// with WWW-Authenticate (section 3), and nothing reaches the hub.
func TestTokenGuardsEverythingButHealthz(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	gw := gateway.New(gateway.Config{})
	defer gw.Close()
	srv := httptest.NewServer(gw.Handler(gateway.HTTPOptions{Token: "s3cret-token"}))
	defer srv.Close()
	do := func(path, auth string) *http.Response {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+path, nil)
		require.NoError(t, err)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		return resp
	}
	require.Equal(t, http.StatusOK, do("/healthz", "").StatusCode)
	for _, auth := range []string{"", "Bearer wrong", "Bearer s3cret-token-longer", "s3cret-token"} {
		resp := do("/readyz", auth)
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, auth)
		require.Contains(t, resp.Header.Get("WWW-Authenticate"), "Bearer")
	}
	require.Equal(t, http.StatusUnauthorized, do("/mcp", "").StatusCode)
	require.Equal(t, http.StatusOK, do("/readyz", "Bearer s3cret-token").StatusCode, "let in")

	c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
	hc := &http.Client{Transport: bearer{"s3cret-token"}}
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: hc}, nil)
	require.NoError(t, err)
	require.NoError(t, cs.Close())
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// Downstream sessions are bounded: an initialize past MaxSessions is
// answered 503 with Retry-After, and the sessions open are not affected.
func TestMaxSessions(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	gw := gateway.New(gateway.Config{})
	defer gw.Close()
	srv := httptest.NewServer(gw.Handler(gateway.HTTPOptions{MaxSessions: 1}))
	defer srv.Close()
	c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
	first, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp"}, nil)
	require.NoError(t, err)
	defer first.Close()
	second, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", MaxRetries: -1}, nil)
	if err == nil {
		_ = second.Close()
	}
	require.Error(t, err)
	require.NoError(t, first.Ping(ctx, nil))
}

// PlainNames with one server lists and routes its items by their own
// names; with a second server, qualified names come back.
func TestPlainNamesWithOneServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	a, err := mcptest.NewServer(mcptest.Options{Prompts: 1})
	require.NoError(t, err)
	defer a.Close()
	gw := gateway.New(gateway.Config{Hub: fastHub(), PlainNames: true})
	defer gw.Close()
	require.NoError(t, gw.Apply(ctx, &hub.ServersFile{Servers: []hub.ServerConfig{{Name: "a", URL: a.URL()}}}))
	require.NoError(t, gw.Hub().WaitReady(ctx, hub.All))
	srv := httptest.NewServer(gw.Handler(gateway.HTTPOptions{}))
	defer srv.Close()
	c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp"}, nil)
	require.NoError(t, err)
	defer cs.Close()
	waitFor(t, ctx, nil, func() bool { return slices.Contains(e2etest.ToolNames(t, ctx, cs), mcptest.RecordTool) })
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: mcptest.RecordTool, Arguments: map[string]any{"id": "plain"}})
	require.NoError(t, err)
	require.Equal(t, 1, a.Invocations(mcptest.RecordTool, "plain"))
	_, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: mcptest.PromptName(1)})
	require.NoError(t, err)

	b, err := mcptest.NewServer(mcptest.Options{})
	require.NoError(t, err)
	defer b.Close()
	require.NoError(t, gw.Apply(ctx, &hub.ServersFile{Servers: []hub.ServerConfig{{Name: "a", URL: a.URL()}, {Name: "b", URL: b.URL()}}}))
	waitFor(t, ctx, nil, func() bool {
		names := e2etest.ToolNames(t, ctx, cs)
		return slices.Contains(names, "a__record") && slices.Contains(names, "b__record") && !slices.Contains(names, "record")
	})
}

// A downstream logging/setLevel reaches the servers, and a server's
// notifications/message during a call reaches the client of that call
// (MCP 2025-11-25, server/utilities/logging.mdx).
func TestE2ELoggingPassedThrough(t *testing.T) {
	f := newFixture(t, "ask")
	got := make(chan *mcp.LoggingMessageParams, 4)
	cs := f.connect(t, &mcp.ClientOptions{LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
		got <- req.Params
	}})
	require.NoError(t, cs.SetLoggingLevel(f.ctx, &mcp.SetLoggingLevelParams{Level: "info"}))
	_, err := cs.CallTool(f.ctx, &mcp.CallToolParams{Name: "ask__log", Arguments: map[string]any{}})
	require.NoError(t, err)
	select {
	case p := <-got:
		require.Equal(t, "logged by ask", p.Data)
		require.Equal(t, "ask", p.Logger)
	case <-f.ctx.Done():
		t.Fatal("no log message reached the client")
	}
}

// resources/subscribe reaches the resource's server, and its
// notifications/resources/updated reaches the subscribed client (MCP
// 2025-11-25, server/resources.mdx, Subscriptions).
func TestE2EResourceSubscription(t *testing.T) {
	f := newFixture(t, "ask", "search")
	got := make(chan string, 4)
	cs := f.connect(t, &mcp.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
		got <- req.Params.URI
	}})
	require.NoError(t, cs.Subscribe(f.ctx, &mcp.SubscribeParams{URI: "ask://doc"}))
	_, err := cs.CallTool(f.ctx, &mcp.CallToolParams{Name: "ask__touch", Arguments: map[string]any{}})
	require.NoError(t, err)
	select {
	case uri := <-got:
		require.Equal(t, "ask://doc", uri)
	case <-f.ctx.Done():
		t.Fatal("no resources/updated reached the client")
	}
	require.NoError(t, cs.Unsubscribe(f.ctx, &mcp.UnsubscribeParams{URI: "ask://doc"}))
}

// The upstream subscription follows the downstream sessions that hold it
// (MCP 2025-11-25, server/resources.mdx, Subscriptions: a subscription
// belongs to the client that made it, which ends it with
// resources/unsubscribe, or with its session): a session that subscribed
// twice holds it once, and one that ends without unsubscribing holds it no
// more, so the upstream gets exactly one resources/subscribe and, once no
// session holds the URI, exactly one resources/unsubscribe.
func TestE2ESubscriptionFollowsSessions(t *testing.T) {
	f := newFixture(t, "ask")
	const uri = "ask://doc"
	a := f.connect(t, nil)
	b := f.connect(t, nil)
	require.NoError(t, a.Subscribe(f.ctx, &mcp.SubscribeParams{URI: uri}))
	require.NoError(t, a.Subscribe(f.ctx, &mcp.SubscribeParams{URI: uri}))
	require.NoError(t, b.Subscribe(f.ctx, &mcp.SubscribeParams{URI: uri}))
	require.Equal(t, uri, <-f.up.Subscribed)
	require.Empty(t, f.up.Subscribed, "one upstream subscription for every client")

	require.NoError(t, b.Close(), "b ends without unsubscribing")
	require.NoError(t, a.Unsubscribe(f.ctx, &mcp.UnsubscribeParams{URI: uri}))
	ctx, cancel := context.WithTimeout(f.ctx, 10*time.Second)
	defer cancel()
	select {
	case got := <-f.up.Unsubscribed:
		require.Equal(t, uri, got)
	case <-ctx.Done():
		t.Fatal("the upstream subscription outlived every client that held it")
	}
	require.Empty(t, f.up.Unsubscribed)
	require.Empty(t, f.up.Subscribed)
}

// A server's roots/list during a call is answered by the downstream client
// of the call (MCP 2025-11-25, client/roots.mdx), not by the gateway's own
// (empty) roots.
func TestE2ERootsRelayed(t *testing.T) {
	f := newFixture(t, "ask")
	c := mcp.NewClient(&mcp.Implementation{Name: "ide", Version: "1"}, nil)
	c.AddRoots(&mcp.Root{URI: "file:///work/project", Name: "project"})
	cs, err := c.Connect(f.ctx, &mcp.StreamableClientTransport{Endpoint: f.http.URL + "/mcp"}, nil)
	require.NoError(t, err)
	defer cs.Close()
	res, err := cs.CallTool(f.ctx, &mcp.CallToolParams{Name: "ask__roots", Arguments: map[string]any{}})
	require.NoError(t, err)
	require.Equal(t, "roots: file:///work/project", text(t, res))
}

// A hostile upstream's items that go-sdk's server cannot list (a tool whose
// input schema is not an object, a resource URI that does not parse, a URI
// template that is not one) are left out, each logged; the gateway goes on
// and the server's other items, and the other servers', are listed.
func TestHostileItemsLeftOut(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	bad, err := mcptest.NewServer(mcptest.Options{Resources: 1, Templates: 1})
	require.NoError(t, err)
	defer bad.Close()
	bad.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Method: "tools/list"}, Action: mcptest.JSONBody(
		`{"jsonrpc":"2.0","id":$ID,"result":{"tools":[{"name":"arr","inputSchema":{"type":"array"}},{"name":"fine","inputSchema":{"type":"object"}}]}}`)})
	bad.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Method: "resources/list"}, Action: mcptest.JSONBody(
		`{"jsonrpc":"2.0","id":$ID,"result":{"resources":[{"uri":"%zz","name":"broken"},{"uri":"ok://fine","name":"fine"}]}}`)})
	bad.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Method: "resources/templates/list"}, Action: mcptest.JSONBody(
		`{"jsonrpc":"2.0","id":$ID,"result":{"resourceTemplates":[{"uriTemplate":"x://{bad","name":"broken"},{"uriTemplate":"x://{id}","name":"fine"}]}}`)})
	good, err := mcptest.NewServer(mcptest.Options{})
	require.NoError(t, err)
	defer good.Close()
	gw, url := gatewayOn(t, ctx, fastHub(), hub.ServerConfig{Name: "bad", URL: bad.URL()}, hub.ServerConfig{Name: "good", URL: good.URL()})
	require.NoError(t, gw.Hub().WaitReady(ctx, hub.All))
	c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url + "/mcp"}, nil)
	require.NoError(t, err)
	defer cs.Close()
	waitFor(t, ctx, nil, func() bool {
		names := e2etest.ToolNames(t, ctx, cs)
		return slices.Contains(names, "bad__fine") && slices.Contains(names, "good__record")
	})
	require.NotContains(t, e2etest.ToolNames(t, ctx, cs), "bad__arr")
	rs, err := cs.ListResources(ctx, nil)
	require.NoError(t, err)
	require.Len(t, rs.Resources, 1)
	require.Equal(t, "ok://fine", rs.Resources[0].URI)
	ts, err := cs.ListResourceTemplates(ctx, nil)
	require.NoError(t, err)
	require.Len(t, ts.ResourceTemplates, 1)
	require.Equal(t, "x://{id}", ts.ResourceTemplates[0].URITemplate)
}

// The gateway's upstream HTTP client keeps an idle connection for every
// call that was in flight (gateway.DefaultUpstreamIdleConns): rounds of
// calls in flight together to one server reuse the connections of the
// first round, where net/http's DefaultTransport keeps 2 a host and each
// further call would dial a connection of its own.
func TestE2EUpstreamConnectionsReused(t *testing.T) {
	const inFlight, rounds = 6, 4
	f := newFixture(t, "flaky")
	cs := f.connect(t, nil)
	before := f.up.Port.Dials()
	for r := range rounds {
		done := make(chan error, inFlight)
		for i := range inFlight {
			id := fmt.Sprintf("r%d-%d", r, i)
			go func() {
				_, err := cs.CallTool(f.ctx, &mcp.CallToolParams{Name: "flaky__" + mcptest.BlockTool, Arguments: map[string]any{"id": id}})
				done <- err
			}()
		}
		for i := range inFlight {
			require.NoError(t, f.up.Flaky.WaitBlocked(f.ctx, fmt.Sprintf("r%d-%d", r, i)))
		}
		for i := range inFlight {
			f.up.Flaky.Release(fmt.Sprintf("r%d-%d", r, i))
		}
		for range inFlight {
			require.NoError(t, <-done)
		}
	}
	require.LessOrEqual(t, f.up.Port.Dials()-before, inFlight, "connections dialed for %d rounds of %d calls in flight", rounds, inFlight)
}

// logLevelUpstream serves a go-sdk server over streamable HTTP that
// declares caps (nil: go-sdk's defaults, logging among them) and counts the
// logging/setLevel requests it receives.
func logLevelUpstream(t *testing.T, caps *mcp.ServerCapabilities) (url string, setLevels *atomic.Int32) {
	t.Helper()
	setLevels = &atomic.Int32{}
	srv := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "1"}, &mcp.ServerOptions{Capabilities: caps})
	mcp.AddTool(srv, &mcp.Tool{Name: "echo"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	})
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "logging/setLevel" {
				setLevels.Add(1)
			}
			return next(ctx, method, req)
		}
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	return hs.URL, setLevels
}

// A downstream logging/setLevel goes only to the servers that declared the
// logging capability (MCP 2025-11-25, server/utilities/logging.mdx:
// "Servers that emit log messages MUST declare the logging capability"):
// one that did not is not sent it (it would answer -32601, Method not
// found). Before, every ready server was sent it.
func TestE2ESetLevelOnlyToServersThatLog(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	quietURL, quiet := logLevelUpstream(t, &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}})
	loudURL, loud := logLevelUpstream(t, nil)
	gw, url := gatewayOn(t, ctx, fastHub(), hub.ServerConfig{Name: "quiet", URL: quietURL}, hub.ServerConfig{Name: "loud", URL: loudURL})
	require.NoError(t, gw.Hub().WaitReady(ctx, hub.All))
	c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url + "/mcp"}, nil)
	require.NoError(t, err)
	defer cs.Close()

	// The gateway sends it upstream before it answers.
	require.NoError(t, cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}))
	require.Equal(t, int32(0), quiet.Load(), "quiet declared no logging capability")
	require.Equal(t, int32(1), loud.Load())
}

// lineLog is a slog handler that keeps each record's JSON line; changed
// has a token after each.
type lineLog struct {
	slog.Handler
	*lines
}

type lines struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	all     []string
	changed chan struct{}
}

func newLineLog() *lineLog {
	ls := &lines{changed: make(chan struct{}, 1)}
	return &lineLog{slog.NewJSONHandler(&ls.buf, &slog.HandlerOptions{Level: slog.LevelDebug}), ls}
}

func (l *lineLog) Handle(ctx context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Reset()
	err := l.Handler.Handle(ctx, r)
	l.all = append(l.all, l.buf.String())
	select {
	case l.changed <- struct{}{}:
	default:
	}
	return err
}

func (l *lineLog) WithAttrs(as []slog.Attr) slog.Handler {
	return &lineLog{l.Handler.WithAttrs(as), l.lines}
}

func (l *lineLog) WithGroup(name string) slog.Handler {
	return &lineLog{l.Handler.WithGroup(name), l.lines}
}

func (l *lineLog) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.all, "")
}

// go-sdk's server logs the downstream session's id ("server session
// disconnected", session_id): through the gateway's Logger it is hashed
// (events.HashSessionID), never written as it is. Before, go-sdk's server
// had the Logger as given and wrote the id in full.
func TestGoSDKServerLogsHashTheSessionID(t *testing.T) {
	logs := newLineLog()
	f := newFixtureWith(t, gateway.Config{Logger: slog.New(logs)}, "ask")
	cs := f.connect(t, nil)
	id := cs.ID()
	require.NotEmpty(t, id)
	require.NoError(t, cs.Close())

	// This session's disconnect record, its id hashed or not.
	disconnected := regexp.MustCompile(`"msg":"server session disconnected".*"session_id":"(` +
		regexp.QuoteMeta(events.HashSessionID(id)) + `|` + regexp.QuoteMeta(id) + `)"`)
	for !disconnected.MatchString(logs.text()) {
		select {
		case <-logs.changed:
		case <-f.ctx.Done():
			t.Fatalf("no disconnect record of the session in:\n%s", logs.text())
		}
	}
	require.Equal(t, events.HashSessionID(id), disconnected.FindStringSubmatch(logs.text())[1])
	require.NotContains(t, logs.text(), id)
}
