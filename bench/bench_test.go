package bench

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/supervisor"
)

// BenchmarkCallToolSupervised is one tools/call through a Supervisor on a
// loopback go-sdk server.
func BenchmarkCallToolSupervised(b *testing.B) {
	benchCall(b, (*callClients).supervised)
}

// BenchmarkCallToolWire is the same call through a go-sdk session on
// mcpsup's Transport alone (httpsession.Open): the wire layer's share.
func BenchmarkCallToolWire(b *testing.B) {
	benchCall(b, (*callClients).wireOnly)
}

// BenchmarkCallToolBare is the same call through a bare go-sdk
// ClientSession on the same kind of server.
func BenchmarkCallToolBare(b *testing.B) {
	benchCall(b, (*callClients).bare)
}

func benchCall(b *testing.B, pick func(*callClients, context.Context) error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cc, err := newCallClients(ctx, overheadOrders[0])
	if err != nil {
		b.Fatal(err)
	}
	defer cc.close()
	b.ReportAllocs()
	for b.Loop() {
		if err := pick(cc, ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIdleSupervised opens 100 idle supervised connections per
// iteration and reports heap bytes and goroutines per connection (server in
// the same process: its share is counted too).
func BenchmarkIdleSupervised(b *testing.B) { benchIdle(b, Supervised) }

// BenchmarkIdleBare is BenchmarkIdleSupervised for bare go-sdk sessions.
func BenchmarkIdleBare(b *testing.B) { benchIdle(b, BareSDK) }

func benchIdle(b *testing.B, k Client) {
	srv, err := NewPlainServer()
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	var last IdleResult
	for b.Loop() {
		last = IdleConnections(context.Background(), srv.URL(), k, 100, true)
		if last.Err != nil {
			b.Fatal(last.Err)
		}
	}
	b.ReportMetric(last.HeapPerConn, "heap-B/conn")
	b.ReportMetric(last.StackPerConn, "stack-B/conn")
	b.ReportMetric(last.GoroutinesPerConn, "goroutines/conn")
}

// BenchmarkBlindResume is one blind resume of a persisted session to ready
// on loopback (no added latency).
func BenchmarkBlindResume(b *testing.B) {
	srvCtx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res := readyScenario(srvCtx, "blind resume", time.Millisecond, 1, resumeRun(false, false, supervisor.StreamAuto))
	if res.Err != nil {
		b.Fatal(res.Err)
	}
	b.ResetTimer()
	var total time.Duration
	for b.Loop() {
		r := readyScenario(srvCtx, "blind resume", time.Microsecond, 1, resumeRun(false, false, supervisor.StreamAuto))
		if r.Err != nil {
			b.Fatal(r.Err)
		}
		total += r.Median
	}
	b.ReportMetric(float64(total.Nanoseconds())/float64(b.N), "ns-to-ready/op")
}

// S4 (DESIGN.md): an application-class failure costs mcpsup no request; the
// S4 client pays a full reconnect; a bare go-sdk session dies on a plain
// 400 and its next call sends nothing.
func TestExtraRequestsByClass(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, fc := range FailureClasses[:4] {
		r := extraOne(ctx, fc, Supervised)
		require.NoError(t, r.Err, fc.Name)
		require.Equal(t, 0, r.Extra, "%s: %s", fc.Name, r.Breakdown)
		require.True(t, r.NextCallOK, fc.Name)
	}
	r := extraOne(ctx, FailureClasses[0], ReconnectOnError)
	require.NoError(t, r.Err)
	require.Equal(t, "DELETE 1, initialize 1, notifications/initialized 1, tools/list 1, GET 1", r.Breakdown)

	r = extraOne(ctx, FailureClasses[3], BareSDK)
	require.NoError(t, r.Err)
	require.False(t, r.NextCallSent, "the session died on the plain 400")
	require.False(t, r.NextCallOK)
}

// A 404 on a request with a session id costs mcpsup exactly one new
// session: initialize, notifications/initialized, tools/list and the new
// standalone GET; no DELETE for the expired session.
func TestExtraRequestsSessionExpired(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r := extraOne(ctx, FailureClasses[4], Supervised)
	require.NoError(t, r.Err)
	require.Equal(t, "initialize 1, notifications/initialized 1, tools/list 1, GET 1", r.Breakdown)
	require.True(t, r.NextCallOK)
}

// A blind resume of a live session costs the four list probes and no
// handshake; a stale one adds the recovery's. The figure's columns hold
// together: min <= median <= max.
func TestBlindResumeIsReady(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var requests []int
	for _, stale := range []bool{false, true} {
		r := readyScenario(ctx, "resume", time.Millisecond, 2, resumeRun(false, stale, supervisor.StreamOff))
		require.NoError(t, r.Err, "stale=%v", stale)
		require.True(t, 0 < r.Min && r.Min <= r.Median && r.Median <= r.Max, "stale=%v: %+v", stale, r)
		requests = append(requests, r.Requests)
	}
	require.Equal(t, 4, requests[0], "live: the four list probes, no handshake")
	require.Greater(t, requests[1], requests[0], "stale: the probes and a new session")
}

func TestIdleConnectionsCountsGoroutines(t *testing.T) {
	srv, err := NewPlainServer()
	require.NoError(t, err)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r := IdleConnections(ctx, srv.URL(), Supervised, 20, false)
	require.NoError(t, r.Err)
	require.Greater(t, r.GoroutinesPerConn, 0.0, "each supervised connection owns goroutines")
	require.Greater(t, r.HeapPerConn, 0.0)
	require.Greater(t, r.StackPerConn, 0.0, "the goroutines a connection holds cost their stacks")
}

func TestParseBench(t *testing.T) {
	out := "goos: linux\nBenchmarkStep-2   \t 5000000\t       231.5 ns/op\t      96 B/op\t       2 allocs/op\nBenchmarkX 10 5 ns/op\n" +
		"BenchmarkBrowserLoad10k-2 3 1394457724 ns/op 136.2 ready-ms 86.63 render-ms 10651600 B/op 122 allocs/op\nBenchmarkNoTime 3 7 B/op\nPASS\n"
	got := parseBench("fsm", out)
	require.Equal(t, []MicroResult{
		{Package: "fsm", Name: "BenchmarkStep", NsPerOp: 231.5, BytesPerOp: 96, AllocsPerOp: 2},
		{Package: "fsm", Name: "BenchmarkX", NsPerOp: 5},
		{Package: "fsm", Name: "BenchmarkBrowserLoad10k", NsPerOp: 1394457724, BytesPerOp: 10651600, AllocsPerOp: 122,
			Metrics: map[string]float64{"ready-ms": 136.2, "render-ms": 86.63}},
	}, got)
}

func TestExtraOfSkipsHostCallsAndOrdersTheRest(t *testing.T) {
	n, s := extraOf([]mcptest.Entry{
		{Verb: "GET"},
		{Verb: "POST", Method: "tools/call"},
		{Verb: "POST", Method: "tools/list"},
		{Verb: "POST", Method: "initialize"},
		{Verb: "DELETE"},
		{Verb: "POST", Method: "tools/call"},
	})
	require.Equal(t, 4, n)
	require.Equal(t, "DELETE 1, initialize 1, tools/list 1, GET 1", s)
}

func TestRenderNamesCommandAndMachine(t *testing.T) {
	r := &Report{Machine: Machine{CPU: "Test CPU", Cores: 2, GoVersion: "go1.26", Date: time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)}}
	var b strings.Builder
	require.NoError(t, r.Render(&b))
	require.Contains(t, b.String(), "`"+Command+"`")
	require.Contains(t, b.String(), "Test CPU, 2 cores, go1.26")
	require.Contains(t, b.String(), "2026-01-02 03:04 UTC")
	require.NotContains(t, b.String(), "Load:")
	r.Load = "two busy loops"
	b.Reset()
	require.NoError(t, r.Render(&b))
	require.Contains(t, b.String(), "Load: two busy loops.")
}

// A refused listing costs mcpsup one tools/list on the same session; the
// reconnect-on-error client a new session per refusal; bare go-sdk's session
// dies on the HTML 403 and never lists.
func TestFailedListings(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r := listingOne(ctx, Supervised)
	require.NoError(t, r.Err)
	require.True(t, r.Ready)
	require.Equal(t, ListingFailures, r.Extra, r.Breakdown)
	require.Contains(t, r.Breakdown, "initialize 1,")
	require.NotContains(t, r.Breakdown, "DELETE")

	r = listingOne(ctx, ReconnectOnError)
	require.NoError(t, r.Err)
	require.True(t, r.Ready)
	require.Greater(t, r.PerFailure(), 3.0, r.Breakdown)

	r = listingOne(ctx, BareSDK)
	require.NoError(t, r.Err)
	require.False(t, r.Ready, r.Breakdown)
}

// A reset on one call costs mcpsup one ping on the same session.
func TestExtraRequestsReset(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r := extraOne(ctx, FailureClasses[5], Supervised)
	require.NoError(t, r.Err)
	require.Equal(t, "ping 1", r.Breakdown)
	require.True(t, r.NextCallOK)
}

// BenchmarkStdioRestart is one restart of a stdio server: the process exits
// in a call, and the supervisor is ready again on a new one.
func BenchmarkStdioRestart(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	bin, remove, err := buildStdioServer(ctx, ".")
	if err != nil {
		b.Fatal(err)
	}
	defer remove()
	sup, err := supervisor.New(stdioConfig(bin))
	if err != nil {
		b.Fatal(err)
	}
	defer sup.Close()
	sup.Start()
	if err := sup.WaitForState(ctx, supervisor.Ready); err != nil {
		b.Fatal(err)
	}
	var total time.Duration
	for b.Loop() {
		d, err := RestartOnce(ctx, sup)
		if err != nil {
			b.Fatal(err)
		}
		total += d
	}
	b.ReportMetric(float64(total.Nanoseconds())/float64(b.N), "ns-to-ready/op")
}

// BenchmarkStdioConnectBare is bare go-sdk starting the same server on
// mcp.CommandTransport and listing its tools.
func BenchmarkStdioConnectBare(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	bin, remove, err := buildStdioServer(ctx, ".")
	if err != nil {
		b.Fatal(err)
	}
	defer remove()
	for b.Loop() {
		if _, err := bareStdio(ctx, bin); err != nil {
			b.Fatal(err)
		}
	}
}
