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
func benchCalls(b *testing.B, cs *mcp.ClientSession, tool string) {
	ctx := context.Background()
	params := &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"text": "hello"}}
	benchFunc(b, func() error {
		_, err := cs.CallTool(ctx, params)
		return err
	})
}

// benchFunc runs call b.N times, after 20 calls that warm the connections,
// and reports the p50 and p99 of the calls' wall time and the process's CPU
// time (user+system: client, gateway and server together) per call.
func benchFunc(b *testing.B, call func() error) {
	for range 20 {
		require.NoError(b, call())
	}
	d := make([]time.Duration, 0, b.N)
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
	slices.Sort(d)
	b.ReportMetric(float64(d[len(d)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(d[len(d)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
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
	for {
		res, err := cs.ListTools(ctx, nil)
		require.NoError(b, err)
		if len(res.Tools) == 1 {
			break
		}
		time.Sleep(10 * time.Millisecond) // the catalog sync; a benchmark, not a unit test
	}
	benchCalls(b, cs, "e__echo")
}
