package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/cmd/mcpsup/gateway"
	"github.com/mcpsup/mcpsup/hub"
)

// upstreamEnv, set to "serve", makes the test binary the upstream of
// BenchmarkUpstreams (serveUpstream) instead of running tests: a process of
// its own, so the gateway's heap is measured without the server's.
const upstreamEnv = "MCPSUP_GWBENCH_UPSTREAM"

// upstreamStats is what the child upstream counts: sessions opened
// (notifications/initialized received) and ended (DELETE received, MCP
// 2025-11-25 basic/transports/streamable-http.mdx, Session Management).
type upstreamStats struct {
	Opened int64 `json:"opened"`
	Ended  int64 `json:"ended"`
	// Conns counts the TCP connections the server accepted.
	Conns int64 `json:"conns"`
}

// serveUpstream serves one stateful go-sdk server with the tool "echo" on
// 127.0.0.1 (a session per entry that points at it), prints its URL, serves
// GET /stats and GET /cpu (its CPU time in µs), and returns when stdin closes.
func serveUpstream() error {
	var st upstreamStats
	s := mcp.NewServer(&mcp.Implementation{Name: "echo", Version: "1"}, &mcp.ServerOptions{
		InitializedHandler: func(context.Context, *mcp.InitializedRequest) { atomic.AddInt64(&st.Opened, 1) },
	})
	s.AddTool(&mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(req.Params.Arguments)}}}, nil
		})
	mcpH := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/cpu" {
			cpuHandler().ServeHTTP(w, r)
			return
		}
		if r.URL.Path == "/stats" {
			_ = json.NewEncoder(w).Encode(upstreamStats{Opened: atomic.LoadInt64(&st.Opened), Ended: atomic.LoadInt64(&st.Ended), Conns: atomic.LoadInt64(&st.Conns)})
			return
		}
		if r.Method == http.MethodDelete {
			atomic.AddInt64(&st.Ended, 1)
		}
		mcpH.ServeHTTP(w, r)
	}))
	srv.Config.ConnState = func(_ net.Conn, cs http.ConnState) {
		if cs == http.StateNew {
			atomic.AddInt64(&st.Conns, 1)
		}
	}
	srv.Start()
	defer srv.Close()
	fmt.Println(srv.URL)
	_, err := io.Copy(io.Discard, os.Stdin)
	return err
}

// startUpstream runs the test binary as serveUpstream and returns its URL.
func startUpstream(b *testing.B) string { return startChild(b, upstreamEnv+"=serve") }

func stats(b *testing.B, url string) upstreamStats {
	resp, err := http.Get(url + "/stats")
	require.NoError(b, err)
	defer resp.Body.Close()
	var st upstreamStats
	require.NoError(b, json.NewDecoder(resp.Body).Decode(&st))
	return st
}

// BenchmarkUpstreams: N upstreams (s0000..) in one gateway, every entry
// pointing at one go-sdk server in a child process, with the gateway's
// defaults (those of `mcpsup serve`). Run it with -benchtime 1x. It reports:
//   - setup-ms: from Apply until every server is ready and a downstream
//     client lists all N tools; setup-cpu-ms: this process's CPU time
//     meanwhile (the gateway's: the upstream runs in its own);
//   - heap-KiB/upstream, goroutines/upstream: the growth of the live heap
//     (after GC) and of the goroutines, over the process before, per
//     upstream (hub, supervisors, sessions, downstream catalog);
//   - reload-ms, reload-opened, reload-ended: one entry changed (its URL)
//     and applied as a diff until every server is ready again, and the
//     sessions the upstream saw opened and ended meanwhile (1 and 1: the
//     others' sessions untouched).
func BenchmarkUpstreams(b *testing.B) {
	for _, n := range []int{1000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			for range b.N {
				upstreamsOnce(b, n)
			}
		})
	}
}

func upstreamsOnce(b *testing.B, n int) {
	ctx := context.Background()
	url := startUpstream(b)
	file := &hub.ServersFile{}
	for i := range n {
		file.Servers = append(file.Servers, hub.ServerConfig{Name: fmt.Sprintf("s%04d", i), URL: url + "/mcp"})
	}
	heap0, gor0 := liveHeap(), runtime.NumGoroutine()

	start, cpu0 := time.Now(), cpuTime()
	gw := gateway.New(gateway.Config{})
	defer func() { _ = gw.Close() }()
	require.NoError(b, gw.Apply(ctx, file))
	require.NoError(b, gw.Hub().WaitReady(ctx, hub.All))
	ct, st := mcp.NewInMemoryTransports()
	ss, err := gw.Server().Connect(ctx, st, nil)
	require.NoError(b, err)
	defer func() { _ = ss.Close() }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct, nil)
	require.NoError(b, err)
	defer func() { _ = cs.Close() }()
	waitTools(b, cs, n)
	setup, setupCPU := time.Since(start), cpuTime()-cpu0
	heap1, gor1 := liveHeap(), runtime.NumGoroutine()

	before := stats(b, url)
	file.Servers[n/2].URL = url + "/mcp?changed=1"
	start = time.Now()
	require.NoError(b, gw.Apply(ctx, file))
	require.NoError(b, gw.Hub().WaitReady(ctx, hub.All))
	reload := time.Since(start)
	// The upstream counts notifications/initialized as it handles it,
	// which may be after the supervisor is ready: wait for the counts to
	// move (at most 5 s), then read them.
	after := stats(b, url)
	for deadline := time.Now().Add(5 * time.Second); (after.Opened == before.Opened || after.Ended == before.Ended) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond) // a benchmark, not a unit test
		after = stats(b, url)
	}

	b.ReportMetric(float64(setup.Milliseconds()), "setup-ms")
	b.ReportMetric(float64(setupCPU.Milliseconds()), "setup-cpu-ms")
	b.ReportMetric((float64(heap1)-float64(heap0))/float64(n)/1024, "heap-KiB/upstream")
	b.ReportMetric(float64(gor1-gor0)/float64(n), "goroutines/upstream")
	b.ReportMetric(float64(reload.Microseconds())/1000, "reload-ms")
	b.ReportMetric(float64(after.Opened-before.Opened), "reload-opened")
	b.ReportMetric(float64(after.Ended-before.Ended), "reload-ended")
}

// liveHeap returns the live heap after a collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
