package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/cmd/mcpsup/internal/e2etest"
	"github.com/mcpsup/mcpsup/mcptest"
)

// tsClient is the TypeScript SDK's client (testdata/tsclient.cjs) run by
// node, driven one JSON command at a time.
type tsClient struct {
	t    *testing.T
	node *exec.Cmd
	in   io.Writer
	out  *bufio.Scanner
}

// startTSClient runs the TypeScript client against the gateway's url; it
// ends with the test.
func startTSClient(t *testing.T, ctx context.Context, sdk, url string) *tsClient {
	t.Helper()
	node := exec.CommandContext(ctx, "node", filepath.Join("testdata", "tsclient.cjs"), sdk, url)
	node.Stderr = os.Stderr
	in, err := node.StdinPipe()
	require.NoError(t, err)
	out, err := node.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, node.Start())
	t.Cleanup(func() { _ = node.Process.Kill(); _ = node.Wait() })
	return &tsClient{t: t, node: node, in: in, out: bufio.NewScanner(out)}
}

// exit closes the client and checks that node ended with code 0.
func (c *tsClient) exit() {
	c.t.Helper()
	_, _ = c.in.Write([]byte(`{"op":"exit"}` + "\n"))
	require.NoError(c.t, c.node.Wait())
}

type tsAnswer struct {
	OK    bool     `json:"ok"`
	Tools []string `json:"tools"`
	// Events are what a started call saw, in order: "progress:<value>"
	// per progress notification, then "result" or "error".
	Events []string `json:"events"`
	// Asked are the messages of the elicitations the client answered.
	Asked  []string `json:"asked"`
	Result struct {
		Content []struct{ Text string } `json:"content"`
		IsError bool                    `json:"isError"`
	} `json:"result"`
	Error struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

func (c *tsClient) do(cmd map[string]any) tsAnswer {
	c.t.Helper()
	b, err := json.Marshal(cmd)
	require.NoError(c.t, err)
	_, err = c.in.Write(append(b, '\n'))
	require.NoError(c.t, err)
	require.True(c.t, c.out.Scan(), "the TypeScript client ended: %v", c.out.Err())
	var a tsAnswer
	require.NoError(c.t, json.Unmarshal(c.out.Bytes(), &a), c.out.Text())
	return a
}

// sdkDir is the TypeScript SDK that interop/install.sh installs; without it
// the test is skipped, loudly, unless CI is set: then it fails.
func sdkDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", ".interop", "node_modules", "@modelcontextprotocol", "sdk"))
	require.NoError(t, err)
	_, statErr := os.Stat(filepath.Join(dir, "package.json"))
	_, nodeErr := exec.LookPath("node")
	if statErr != nil || nodeErr != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set and the TypeScript SDK or node is missing (run bash interop/install.sh): %v %v", statErr, nodeErr)
		}
		t.Skip("\n\n*** SKIPPED: the TypeScript SDK is not installed: run bash interop/install.sh ***\n")
	}
	return dir
}

// An MCP client nobody here wrote, the TypeScript SDK's, through -listen:
// the merged catalog of the stdio, HTTP and dying HTTP upstreams, a call to
// each, tools/list_changed when an upstream adds a tool, and one upstream
// down while the others serve (its call a JSON-RPC error naming it in
// data), then back.
func TestTypeScriptClient(t *testing.T) {
	sdk := sdkDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	up := e2etest.New(t, ctx)
	_, base := started(t, ctx, "-config", up.File(t, t.TempDir(), "files", "search", "flaky"), "-no-state")
	c := startTSClient(t, ctx, sdk, base+"/mcp")

	want := []string{"files__echo", "search__record", "flaky__record"}
	waitUntil(t, ctx, nil, func() bool {
		got := c.do(map[string]any{"op": "list"}).Tools
		return !slices.ContainsFunc(want, func(n string) bool { return !slices.Contains(got, n) })
	})
	a := c.do(map[string]any{"op": "call", "name": "files__echo", "arguments": map[string]any{"text": "from ts"}})
	require.True(t, a.OK, "%+v", a)
	require.Contains(t, a.Result.Content[0].Text, "from ts")
	a = c.do(map[string]any{"op": "call", "name": "search__record", "arguments": map[string]any{"id": "ts"}})
	require.True(t, a.OK, "%+v", a)
	require.Equal(t, 1, up.HTTP.Invocations(mcptest.RecordTool, "ts"))
	a = c.do(map[string]any{"op": "call", "name": "flaky__record", "arguments": map[string]any{"id": "ts"}})
	require.True(t, a.OK, "%+v", a)
	require.Equal(t, 1, up.Flaky.Invocations(mcptest.RecordTool, "ts"))

	up.HTTP.AddTool("fresh")
	require.True(t, c.do(map[string]any{"op": "waitChanged"}).OK, "tools/list_changed reached the TypeScript client")
	waitUntil(t, ctx, nil, func() bool { return slices.Contains(c.do(map[string]any{"op": "list"}).Tools, "search__fresh") })

	up.Port.Down()
	a = c.do(map[string]any{"op": "call", "name": "flaky__record", "arguments": map[string]any{"id": "down"}})
	require.False(t, a.OK)
	require.Equal(t, -32603, a.Error.Code)
	var data struct{ Server, Class, Delivery string }
	require.NoError(t, json.Unmarshal(a.Error.Data, &data))
	require.Equal(t, "flaky", data.Server)
	require.Equal(t, "transport", data.Class)
	a = c.do(map[string]any{"op": "call", "name": "search__record", "arguments": map[string]any{"id": "ts2"}})
	require.True(t, a.OK, "one upstream down leaves the others serving: %+v", a)

	up.Port.Up()
	a = c.do(map[string]any{"op": "call", "name": "flaky__record", "arguments": map[string]any{"id": "back"}})
	require.True(t, a.OK, "%+v", a)
	require.Equal(t, 1, up.Flaky.Invocations(mcptest.RecordTool, "back"))
	c.exit()
}

// The TypeScript client's progress, cancellation and elicitation through
// -listen, each counted where it lands.
func TestTypeScriptClientRelays(t *testing.T) {
	sdk := sdkDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	up := e2etest.New(t, ctx)
	_, base := started(t, ctx, "-config", up.File(t, t.TempDir(), "search", "ask"), "-no-state")
	c := startTSClient(t, ctx, sdk, base+"/mcp")
	block := "search__" + mcptest.BlockTool
	waitUntil(t, ctx, nil, func() bool {
		got := c.do(map[string]any{"op": "list"}).Tools
		return slices.Contains(got, block) && slices.Contains(got, "ask__confirm")
	})

	// MCP 2025-11-25, basic/utilities/progress.mdx: the client asks for
	// progress with a progressToken (the TypeScript SDK's onprogress); "The
	// `progress` value MUST increase with each notification" and "Progress
	// notifications MUST stop after completion": all come, in order, before
	// the result.
	t.Run("progress", func(t *testing.T) {
		c.t = t
		require.True(t, c.do(map[string]any{"op": "start", "key": "p", "name": block, "arguments": map[string]any{"id": "p"}}).OK)
		require.NoError(t, up.HTTP.WaitBlocked(ctx, "p"))
		for range 3 {
			up.HTTP.Progress("p")
		}
		a := c.do(map[string]any{"op": "progress", "key": "p", "count": 3})
		require.True(t, a.OK, "three progress notifications reached the TypeScript client: %+v", a)
		up.HTTP.Release("p")
		a = c.do(map[string]any{"op": "await", "key": "p"})
		require.True(t, a.OK, "%+v", a)
		require.Contains(t, a.Result.Content[0].Text, "released p")
		require.Equal(t, []string{"progress:1", "progress:2", "progress:3", "result"}, a.Events)
	})

	// MCP 2025-11-25, basic/utilities/cancellation.mdx: "When a party wants
	// to cancel an in-progress request, it sends a notifications/cancelled
	// notification"; the TypeScript SDK sends one when the call's
	// AbortSignal fires, and the gateway cancels its upstream request with
	// one of its own.
	t.Run("cancel", func(t *testing.T) {
		c.t = t
		require.True(t, c.do(map[string]any{"op": "start", "key": "c", "name": block, "arguments": map[string]any{"id": "c"}}).OK)
		require.NoError(t, up.HTTP.WaitBlocked(ctx, "c"))
		before := up.HTTP.Log().Count("notifications/cancelled")
		require.True(t, c.do(map[string]any{"op": "cancel", "key": "c", "reason": "canceled by the test"}).OK)
		a := c.do(map[string]any{"op": "await", "key": "c"})
		require.False(t, a.OK, "%+v", a)
		require.Contains(t, a.Error.Message, "canceled by the test")
		wctx, wcancel := context.WithTimeout(ctx, 20*time.Second)
		defer wcancel()
		require.NoError(t, up.HTTP.Log().WaitCount(wctx, "notifications/cancelled", before+1),
			"the upstream got notifications/cancelled for the call")
		require.Equal(t, 1, up.HTTP.Invocations(mcptest.BlockTool, "c"), "the call ran once upstream")
	})

	// MCP 2025-11-25, client/elicitation.mdx: "Clients that support
	// elicitation MUST declare the elicitation capability" (the TypeScript
	// client does); the upstream's elicitation/create reaches it and its
	// "accept" answer's content reaches the upstream.
	t.Run("elicitation", func(t *testing.T) {
		c.t = t
		require.True(t, c.do(map[string]any{"op": "arm", "answer": map[string]any{"action": "accept", "content": map[string]any{"ok": true}}}).OK)
		a := c.do(map[string]any{"op": "call", "name": "ask__confirm", "arguments": map[string]any{}})
		require.True(t, a.OK, "%+v", a)
		require.False(t, a.Result.IsError, "%+v", a)
		require.Equal(t, "answer accept", a.Result.Content[0].Text)
		require.Equal(t, []string{"proceed?"}, c.do(map[string]any{"op": "asked"}).Asked)
		select {
		case res := <-up.Elicited:
			require.Equal(t, "accept", res.Action)
			require.Equal(t, map[string]any{"ok": true}, res.Content, "the client's content reached the upstream")
		default:
			t.Fatal("the upstream's elicitation got no answer")
		}
	})
	c.t = t
	c.exit()
}
