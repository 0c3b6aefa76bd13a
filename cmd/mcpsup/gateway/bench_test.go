package gateway_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/cmd/mcpsup/gateway"
	"github.com/mcpsup/mcpsup/hub"
)

// echoServer is a stateful go-sdk server over streamable HTTP on
// 127.0.0.1 with one tool, "echo", that answers its text.
func echoServer(b *testing.B) string {
	s := mcp.NewServer(&mcp.Implementation{Name: "echo", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(req.Params.Arguments)}}}, nil
		})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	b.Cleanup(srv.Close)
	return srv.URL
}

// benchCalls calls tool on cs b.N times (see benchFunc).
func benchCalls(b *testing.B, cs *mcp.ClientSession, tool string) { benchCallsOf(b, cs, tool) }

// benchCallsOf calls tool on cs b.N times, reporting the CPU time of
// children too (see benchFunc).
func benchCallsOf(b *testing.B, cs *mcp.ClientSession, tool string, children ...child) {
	ctx := context.Background()
	params := &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"text": "hello"}}
	benchFunc(b, func() error {
		_, err := cs.CallTool(ctx, params)
		return err
	}, children...)
}

// benchFunc runs call b.N times, after 20 calls that warm the connections,
// and reports the p50 and p99 of the calls' wall time and this process's CPU
// time (user+system) per call: client, gateway and server together when they
// run in it. Each of children (a name and a function that returns a child
// process's CPU time so far) reports that process's CPU time per call as
// "<name>-cpu-µs/op".
func benchFunc(b *testing.B, call func() error, children ...child) {
	for range 20 {
		require.NoError(b, call())
	}
	d := make([]time.Duration, 0, b.N)
	c0 := make([]time.Duration, len(children))
	for i, c := range children {
		c0[i] = c.cpu()
	}
	cpu0 := cpuTime()
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		if err := call(); err != nil {
			b.Fatal(err)
		}
		d = append(d, time.Since(t0))
	}
	b.StopTimer()
	cpu := cpuTime() - cpu0
	for i, c := range children {
		b.ReportMetric(float64((c.cpu()-c0[i]).Microseconds())/float64(b.N), c.name+"-cpu-µs/op")
	}
	slices.Sort(d)
	b.ReportMetric(float64(d[len(d)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(d[len(d)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
}

// child is a process a benchmark talks to: its name in the metrics, and its
// CPU time so far.
type child struct {
	name string
	cpu  func() time.Duration
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func connect(b *testing.B, url string) *mcp.ClientSession {
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, nil)
	require.NoError(b, err)
	b.Cleanup(func() { _ = cs.Close() })
	return cs
}

// BenchmarkCallDirect: a go-sdk client calls the go-sdk server directly.
func BenchmarkCallDirect(b *testing.B) {
	benchCalls(b, connect(b, echoServer(b)), "echo")
}

// BenchmarkCallThroughGateway: the same call through the gateway's
// streamable HTTP, its hub and supervisor, to the same server.
func BenchmarkCallThroughGateway(b *testing.B) {
	up := echoServer(b)
	gw := gateway.New(gateway.Config{})
	b.Cleanup(func() { _ = gw.Close() })
	ctx := context.Background()
	require.NoError(b, gw.Apply(ctx, &hub.ServersFile{Servers: []hub.ServerConfig{{Name: "e", URL: up}}}))
	require.NoError(b, gw.Hub().WaitReady(ctx, hub.All))
	srv := httptest.NewServer(gw.Handler(gateway.HTTPOptions{}))
	b.Cleanup(srv.Close)
	cs := connect(b, srv.URL+"/mcp")
	waitTools(b, cs, 1)
	benchCalls(b, cs, "e__echo")
}

// waitTools waits until cs lists n tools (the gateway's catalog sync).
func waitTools(b *testing.B, cs *mcp.ClientSession, n int) {
	for {
		tools := 0
		for _, err := range cs.Tools(context.Background(), nil) {
			require.NoError(b, err)
			tools++
		}
		if tools == n {
			return
		}
		time.Sleep(10 * time.Millisecond) // a benchmark, not a unit test
	}
}
