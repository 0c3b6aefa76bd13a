package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/cmd/mcpsup/internal/e2etest"
	"github.com/mcpsup/mcpsup/mcptest"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	e2etest.Cleanup()
	if binPath != "" {
		_ = os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// build compiles the command once per test binary.
func build(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "mcpsup-cmd")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "mcpsup")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = &exec.ExitError{}
			t.Logf("go build: %s", out)
		}
	})
	require.NoError(t, binErr)
	return binPath
}

// The command run as a desktop client runs it (its mcpServers entry:
// command "mcpsup", args ["serve", "-config", …, "-stdio"]) serves the merged
// catalog of a stdio, an HTTP and a dying HTTP upstream over stdio to a
// go-sdk client; a call to each is routed; a tool added upstream reaches
// the client as tools/list_changed; one upstream down leaves the others
// serving; the end of stdin ends the process with code 0.
func TestStdioServesThreeUpstreams(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	bin := build(t)
	up := e2etest.New(t, ctx)
	dir := t.TempDir()
	cfg := up.File(t, dir, "files", "search", "flaky")

	cmd := exec.Command(bin, "serve", "-config", cfg, "-stdio", "-state", filepath.Join(dir, "state"), "-log-level", "info")
	cmd.Stderr = os.Stderr
	changed := make(chan struct{}, 16)
	client := mcp.NewClient(&mcp.Implementation{Name: "desktop", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	})
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)

	want := []string{"files__echo", "search__record", "flaky__record"}
	waitUntil(t, ctx, changed, func() bool {
		got := e2etest.ToolNames(t, ctx, cs)
		return !slices.ContainsFunc(want, func(n string) bool { return !slices.Contains(got, n) })
	})

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "files__echo", Arguments: map[string]any{"text": "over stdio"}})
	require.NoError(t, err)
	require.Contains(t, res.Content[0].(*mcp.TextContent).Text, "over stdio")
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "search__record", Arguments: map[string]any{"id": "s"}})
	require.NoError(t, err)
	require.Equal(t, 1, up.HTTP.Invocations(mcptest.RecordTool, "s"))
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "flaky__record", Arguments: map[string]any{"id": "f"}})
	require.NoError(t, err)
	require.Equal(t, 1, up.Flaky.Invocations(mcptest.RecordTool, "f"))

	for len(changed) > 0 {
		<-changed
	}
	up.HTTP.AddTool("fresh")
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatal("no tools/list_changed reached the stdio client")
	}
	waitUntil(t, ctx, changed, func() bool { return slices.Contains(e2etest.ToolNames(t, ctx, cs), "search__fresh") })

	up.Port.Down()
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "flaky__record", Arguments: map[string]any{"id": "f2"}})
	require.Error(t, err)
	require.Contains(t, err.Error(), "flaky")
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "search__record", Arguments: map[string]any{"id": "s2"}})
	require.NoError(t, err, "one upstream down leaves the others serving")
	require.Contains(t, e2etest.ToolNames(t, ctx, cs), "files__echo")

	require.NoError(t, cs.Close()) // closes stdin and waits for the command
	require.NotNil(t, cmd.ProcessState)
	require.Equal(t, 0, cmd.ProcessState.ExitCode(), "stdin's end is a clean stop")
}

func waitUntil(t *testing.T, ctx context.Context, changed <-chan struct{}, cond func() bool) {
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

// started runs the command with -listen on a free loopback port and returns
// its base URL, read from its "listening" log record.
func started(t *testing.T, ctx context.Context, args ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(build(t), append([]string{"serve", "-listen", "127.0.0.1:0"}, args...)...)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			var rec struct{ Msg, Addr string }
			if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Msg == "listening" {
				addr <- rec.Addr
			}
		}
	}()
	select {
	case a := <-addr:
		return cmd, "http://" + a
	case <-ctx.Done():
		t.Fatal("the command did not listen")
		return nil, ""
	}
}

// SIGTERM ends the command with code 0 (its servers detached), and SIGHUP
// applies the changed servers file: the removed server's tools leave the
// client's list, the others stay.
func TestSignalsReloadAndStop(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	up := e2etest.New(t, ctx)
	dir := t.TempDir()
	cfg := up.File(t, dir, "files", "search")
	cmd, base := started(t, ctx, "-config", cfg, "-state", filepath.Join(dir, "state"))

	changed := make(chan struct{}, 16)
	client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	})
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, nil)
	require.NoError(t, err)
	defer cs.Close()
	waitUntil(t, ctx, changed, func() bool {
		got := e2etest.ToolNames(t, ctx, cs)
		return slices.Contains(got, "files__echo") && slices.Contains(got, "search__record")
	})
	resp, err := http.Get(base + "/readyz")
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	searchSessions := len(up.HTTP.SessionIDs())
	up.File(t, dir, "search") // files removed; mtime may not change within its resolution: SIGHUP says so
	require.NoError(t, cmd.Process.Signal(syscall.SIGHUP))
	waitUntil(t, ctx, changed, func() bool { return !slices.Contains(e2etest.ToolNames(t, ctx, cs), "files__echo") })
	require.Contains(t, e2etest.ToolNames(t, ctx, cs), "search__record")
	require.Equal(t, searchSessions, len(up.HTTP.SessionIDs()), "the unchanged server kept its session")
	require.Equal(t, 1, up.HTTP.Log().Count("initialize"), "the unchanged server was not reconnected")

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		require.NoError(t, err)
		require.Equal(t, 0, cmd.ProcessState.ExitCode())
	case <-ctx.Done():
		t.Fatal("the command did not stop on SIGTERM")
	}
	require.Equal(t, 0, up.HTTP.Log().CountVerb("DELETE"), "detached: the session is kept for the next start")
}

// A -listen address that is not loopback without a token is refused
// (usage, exit code 2) before anything starts.
func TestNonLoopbackNeedsToken(t *testing.T) {
	cmd := exec.Command(build(t), "serve", "-config", "/nonexistent", "-listen", "0.0.0.0:0")
	cmd.Env = append(os.Environ(), "MCPSUP_TOKEN=")
	err := cmd.Run()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	require.Equal(t, 2, ee.ExitCode())
}

// With -redis, the servers' resume states go to Redis (redisstore, with
// leases): after SIGTERM the HTTP server's state is there, saved by the
// detach, for the next replica to resume.
func TestRedisKeepsResumeStates(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set and redis-server is missing: %v", err)
		}
		t.Skip("redis-server is not installed")
	}
	dir := t.TempDir()
	sock := filepath.Join(dir, "redis.sock")
	rs := exec.Command("redis-server", "--port", "0", "--unixsocket", sock, "--save", "", "--appendonly", "no")
	require.NoError(t, rs.Start())
	t.Cleanup(func() { _ = rs.Process.Kill(); _ = rs.Wait() })
	rdb := redis.NewClient(&redis.Options{Network: "unix", Addr: sock})
	defer rdb.Close()
	for rdb.Ping(ctx).Err() != nil {
		select {
		case <-ctx.Done():
			t.Fatal("redis-server did not start")
		case <-time.After(20 * time.Millisecond):
		}
	}

	up := e2etest.New(t, ctx)
	cfg := up.File(t, dir, "search")
	cmd, base := started(t, ctx, "-config", cfg, "-redis", "unix://"+sock)
	for {
		code, _ := get(t, base+"/readyz")
		if code == http.StatusOK {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("not ready")
		case <-time.After(50 * time.Millisecond):
		}
	}
	require.EqualValues(t, 1, rdb.Exists(ctx, "mcpsup:{search}:lease").Val(), "the replica holds the server's lease")
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, cmd.Wait())
	state, err := rdb.Get(ctx, "mcpsup:{search}:state").Result()
	require.NoError(t, err)
	require.Contains(t, state, up.HTTP.SessionIDs()[0][:8], "the saved state is the live session's")
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// A change of the servers file (its size or modification time, read every
// pollEvery) is applied without a signal: the added server's tools reach
// the client.
func TestFileChangeReloads(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	up := e2etest.New(t, ctx)
	dir := t.TempDir()
	cfg := up.File(t, dir, "search")
	_, base := started(t, ctx, "-config", cfg, "-no-state")
	client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, nil)
	require.NoError(t, err)
	defer cs.Close()
	waitUntil(t, ctx, nil, func() bool { return slices.Contains(e2etest.ToolNames(t, ctx, cs), "search__record") })
	up.File(t, dir, "search", "files")
	waitUntil(t, ctx, nil, func() bool { return slices.Contains(e2etest.ToolNames(t, ctx, cs), "files__echo") })
}

// /metrics serves the otel package's metrics as Prometheus text, each
// point naming its server; /timeline/ serves the live timeline page.
func TestMetricsAndTimeline(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	up := e2etest.New(t, ctx)
	_, base := started(t, ctx, "-config", up.File(t, t.TempDir(), "search"), "-no-state")
	client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, nil)
	require.NoError(t, err)
	defer cs.Close()
	waitUntil(t, ctx, nil, func() bool { return slices.Contains(e2etest.ToolNames(t, ctx, cs), "search__record") })
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "search__record", Arguments: map[string]any{"id": "m"}})
	require.NoError(t, err)

	code, body := get(t, base+"/metrics")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, `mcpsup_connection_transitions_total{`)
	require.Contains(t, body, `mcpsup_server="search"`)
	require.Contains(t, body, `mcp_client_operation_duration_seconds_count{`)

	code, body = get(t, base+"/timeline/")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, "<html")
}
