package gateway_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/cmd/mcpsup/gateway"
	"github.com/mcpsup/mcpsup/hub"
)

// gatewayEnv, set to an upstream's URL, makes the test binary a gateway in
// front of that one server (serveGateway), as `mcpsup serve` runs it: its GC
// default (gateway.SetGCDefault, unless GOGC is set), its HTTP handler.
const gatewayEnv = "MCPSUP_GWBENCH_GATEWAY"

// defaultTransportEnv, set, makes the gateway child's upstream HTTP client
// one on http.DefaultTransport (2 idle connections a host) in place of the
// gateway's default (gateway.DefaultUpstreamIdleConns).
const defaultTransportEnv = "MCPSUP_GWBENCH_DEFAULT_TRANSPORT"

// gatewayProfileEnv names a file the gateway child writes its CPU profile
// to (go tool pprof), for a profile of the gateway's process alone.
const gatewayProfileEnv = "MCPSUP_GWBENCH_CPUPROFILE"

// serveGateway serves a gateway of one server, "e", at upstream on
// 127.0.0.1, prints its URL once the server is ready, serves its CPU time in
// µs at GET /cpu, and returns when stdin closes.
func serveGateway(upstream string) error {
	gateway.SetGCDefault()
	if name := os.Getenv(gatewayProfileEnv); name != "" {
		f, err := os.Create(name)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	cfg := gateway.Config{}
	if os.Getenv(defaultTransportEnv) != "" {
		cfg.Hub.Supervisor.HTTP.HTTPClient = &http.Client{} // http.DefaultTransport
	}
	gw := gateway.New(cfg)
	defer gw.Close()
	ctx := context.Background()
	if err := gw.Apply(ctx, &hub.ServersFile{Servers: []hub.ServerConfig{{Name: "e", URL: upstream}}}); err != nil {
		return err
	}
	if err := gw.Hub().WaitReady(ctx, hub.All); err != nil {
		return err
	}
	srv := httptest.NewServer(gw.Handler(gateway.HTTPOptions{Extra: map[string]http.Handler{"/cpu": cpuHandler(), "/gogc": gogcHandler()}}))
	defer srv.Close()
	fmt.Println(srv.URL)
	_, err := io.Copy(io.Discard, os.Stdin)
	return err
}

// proxyEnv, set to an upstream's URL, makes the test binary the floor of
// any gateway on go-sdk (serveProxy): a go-sdk streamable server whose tool
// "echo" forwards each call through one go-sdk client session to upstream,
// with the gateway's GC default, so that the two compare like with like.
const proxyEnv = "MCPSUP_GWBENCH_PROXY"

// serveProxy serves the plain go-sdk proxy of proxyEnv on 127.0.0.1,
// prints its URL, serves its CPU time at GET /cpu, and returns when stdin
// closes.
func serveProxy(upstream string) error {
	gateway.SetGCDefault()
	ctx := context.Background()
	c := mcp.NewClient(&mcp.Implementation{Name: "proxy", Version: "1"}, nil)
	up, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: upstream}, nil)
	if err != nil {
		return err
	}
	defer up.Close()
	s := mcp.NewServer(&mcp.Implementation{Name: "proxy", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return up.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: req.Params.Arguments})
		})
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	mux.Handle("/cpu", cpuHandler())
	mux.Handle("/gogc", gogcHandler())
	srv := httptest.NewServer(mux)
	defer srv.Close()
	fmt.Println(srv.URL)
	_, err = io.Copy(io.Discard, os.Stdin)
	return err
}

// cpuHandler answers this process's CPU time (user+system) in µs.
func cpuHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, cpuTime().Microseconds())
	})
}

// gogcHandler answers this process's GOGC (read by setting it: the
// collector is off for that instant).
func gogcHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		p := debug.SetGCPercent(-1)
		debug.SetGCPercent(p)
		fmt.Fprintln(w, p)
	})
}

// startChild runs the test binary with env set and returns the URL it prints.
func startChild(b *testing.B, env ...string) string {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	require.NoError(b, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(b, err)
	require.NoError(b, cmd.Start())
	b.Cleanup(func() { _ = stdin.Close(); _ = cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(b, err)
	return strings.TrimSpace(line)
}

// childCPU returns a function that reads the CPU time a child serves at
// url + "/cpu".
func childCPU(b *testing.B, name, url string) child {
	return child{name: name, cpu: func() time.Duration {
		return time.Duration(childInt(b, url+"/cpu")) * time.Microsecond
	}}
}

// childInt reads the number a child serves at url.
func childInt(b *testing.B, url string) float64 {
	resp, err := http.Get(url)
	require.NoError(b, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(b, err)
	n, err := strconv.ParseInt(strings.TrimSpace(string(body)), 10, 64)
	require.NoError(b, err)
	return float64(n)
}

// BenchmarkCallProcesses is the per-call overhead as a deployment sees it:
// the client (this process), the gateway and the upstream each in a process
// of its own. "direct" calls the upstream; "gateway" calls it through a
// gateway with its GC default; "gateway-gogc100" through one with Go's
// default GC (GOGC=100); "go-sdk-proxy" through the floor (serveProxy). The
// middle process's CPU per call is "gw-cpu-µs/op"; the upstream's
// "up-cpu-µs/op"; this process's (the client's) "cpu-µs/op"; the middle
// process's GOGC "gogc".
func BenchmarkCallProcesses(b *testing.B) {
	up := startUpstream(b)
	upCPU := childCPU(b, "up", up)
	b.Run("direct", func(b *testing.B) {
		benchCallsOf(b, connect(b, up+"/mcp"), "echo", upCPU)
	})
	for _, v := range []struct {
		name string
		gogc int // 0: the gateway's default
	}{{"gateway", 0}, {"gateway-gogc100", 100}} {
		b.Run(v.name, func(b *testing.B) {
			env := []string{gatewayEnv + "=" + up + "/mcp"}
			if v.gogc != 0 {
				env = append(env, "GOGC="+strconv.Itoa(v.gogc))
			}
			gw := startChild(b, env...)
			cs := connect(b, gw+"/mcp")
			waitTools(b, cs, 1)
			benchCallsOf(b, cs, "e__echo", childCPU(b, "gw", gw), upCPU)
			b.ReportMetric(childInt(b, gw+"/gogc"), "gogc")
		})
	}
	b.Run("go-sdk-proxy", func(b *testing.B) {
		px := startChild(b, proxyEnv+"="+up+"/mcp")
		benchCallsOf(b, connect(b, px+"/mcp"), "echo", childCPU(b, "gw", px), upCPU)
		b.ReportMetric(childInt(b, px+"/gogc"), "gogc")
	})
}

// benchParallel is how many calls BenchmarkCallProcessesParallel keeps in
// flight.
const benchParallel = 8

// BenchmarkCallProcessesParallel is BenchmarkCallProcesses with
// benchParallel calls in flight on one client session, whose HTTP client
// keeps that many idle connections (net/http's DefaultTransport keeps 2 a
// host: past them a call would dial a connection of its own): "direct" and
// "gateway" as there, "gateway-default-transport" a gateway whose upstream
// client is on http.DefaultTransport; ns/op is the wall time over the calls in flight;
// "up-dials" the connections the upstream accepted during the calls.
func BenchmarkCallProcessesParallel(b *testing.B) {
	up := startUpstream(b)
	upCPU := childCPU(b, "up", up)
	hc := &http.Client{Transport: idleTransport(benchParallel)}
	b.Run("direct", func(b *testing.B) {
		cs := connectWith(b, up+"/mcp", hc)
		conns := stats(b, up).Conns
		benchParallelCalls(b, cs, "echo", upCPU)
		b.ReportMetric(float64(stats(b, up).Conns-conns), "up-dials")
	})
	for _, v := range []struct {
		name string
		env  []string
	}{{"gateway", nil}, {"gateway-default-transport", []string{defaultTransportEnv + "=1"}}} {
		b.Run(v.name, func(b *testing.B) {
			gw := startChild(b, append(v.env, gatewayEnv+"="+up+"/mcp")...)
			cs := connectWith(b, gw+"/mcp", hc)
			waitTools(b, cs, 1)
			conns := stats(b, up).Conns
			benchParallelCalls(b, cs, "e__echo", childCPU(b, "gw", gw), upCPU)
			b.ReportMetric(float64(stats(b, up).Conns-conns), "up-dials")
		})
	}
}

// idleTransport is a clone of http.DefaultTransport that keeps n idle
// connections a host.
func idleTransport(n int) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = n
	return t
}

func connectWith(b *testing.B, url string, hc *http.Client) *mcp.ClientSession {
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, nil)
	require.NoError(b, err)
	b.Cleanup(func() { _ = cs.Close() })
	return cs
}

// benchParallelCalls calls tool on cs b.N times, benchParallel at a time,
// and reports the CPU time per call of this process and of children.
func benchParallelCalls(b *testing.B, cs *mcp.ClientSession, tool string, children ...child) {
	ctx := context.Background()
	params := &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"text": "hello"}}
	for range 20 {
		_, err := cs.CallTool(ctx, params)
		require.NoError(b, err)
	}
	c0 := make([]time.Duration, len(children))
	for i, c := range children {
		c0[i] = c.cpu()
	}
	cpu0 := cpuTime()
	b.ResetTimer()
	b.SetParallelism((benchParallel + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := cs.CallTool(ctx, params); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	for i, c := range children {
		b.ReportMetric(float64((c.cpu()-c0[i]).Microseconds())/float64(b.N), c.name+"-cpu-µs/op")
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
}
