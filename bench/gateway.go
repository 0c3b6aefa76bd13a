package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// GatewayModule is the nested module of `mcpsup serve`, relative to the
// module root, and GatewayPackage its package whose benchmarks figure 10
// runs.
const (
	GatewayModule  = "cmd/mcpsup"
	GatewayPackage = "./gateway"
)

// The benchmarks of figure 10, in GatewayPackage: the per-call overhead
// with client, gateway and upstream each in a process of its own, and N
// upstreams in one gateway with a reload of one (run once: -benchtime 1x).
const (
	GatewayCallPattern      = "^BenchmarkCallProcesses$"
	GatewayUpstreamsPattern = "^BenchmarkUpstreams$"
)

// GatewayResult is figure 10 (GatewayFigures).
type GatewayResult struct {
	Calls     []MicroResult // BenchmarkCallProcesses/<path>
	Upstreams []MicroResult // BenchmarkUpstreams/<n>
	Calltime  string        // the -benchtime of the calls
	Err       error
}

// GatewayFigures runs figure 10 with `go test -bench` in the module
// GatewayModule under root: calltime for the per-call benchmark (such as
// "3000x"), once for the upstreams.
func GatewayFigures(ctx context.Context, root, calltime string) GatewayResult {
	dir := filepath.Join(root, GatewayModule)
	r := GatewayResult{Calltime: calltime}
	r.Calls, r.Err = microRun(ctx, dir, GatewayPackage, GatewayCallPattern, calltime)
	if r.Err != nil {
		return r
	}
	r.Upstreams, r.Err = microRun(ctx, dir, GatewayPackage, GatewayUpstreamsPattern, "1x")
	return r
}

// RenderGateway writes figure 10 (see GatewayFigures) as Markdown.
func RenderGateway(r GatewayResult) string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("## 10. The gateway (`mcpsup serve`)\n\n")
	p("`cd %s && go test -run '^$' -bench '%s' -benchtime %s %s` (and `-bench '%s' -benchtime 1x`). ", GatewayModule, GatewayCallPattern, r.Calltime, GatewayPackage, GatewayUpstreamsPattern)
	p("Each call is a go-sdk client's tools/call of a go-sdk server's `echo` over streamable HTTP on 127.0.0.1; the client (the benchmark), the gateway and the upstream server each run in a process of their own, and each process's CPU time (user+system, getrusage) is divided by the calls. ")
	p("`gateway` runs with its GC default (gateway.DefaultGCPercent, when the environment sets neither GOGC nor GOMEMLIMIT), `gateway GOGC=100` with Go's; `go-sdk proxy` is the floor of any gateway built on go-sdk: a go-sdk streamable server whose tool forwards each call through one go-sdk client session, with the gateway's GC default. ")
	p("Goal: at most 50 µs added at p50 over calling the upstream directly.\n\n")
	if r.Err != nil {
		p("error: %s\n\n", cell(r.Err.Error()))
	}
	var direct float64
	for _, x := range r.Calls {
		if callPath(x) == "direct" {
			direct = x.Metrics["p50-µs"]
		}
	}
	if len(r.Calls) > 0 {
		p("| path | GOGC of the middle | p50 | p99 | added at p50 | client CPU per call | middle CPU per call | upstream CPU per call |\n|---|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, x := range r.Calls {
			path := callPath(x)
			gogc, added, middle := "", "", ""
			if path != "direct" {
				gogc = fmt.Sprintf("%.0f", x.Metrics["gogc"])
				added = fmt.Sprintf("%+.0f µs", x.Metrics["p50-µs"]-direct)
				middle = fmt.Sprintf("%.0f µs", x.Metrics["gw-cpu-µs/op"])
			}
			p("| %s | %s | %.0f µs | %.0f µs | %s | %.0f µs | %s | %.0f µs |\n", callPathName(path), gogc, x.Metrics["p50-µs"], x.Metrics["p99-µs"], added, x.Metrics["cpu-µs/op"], middle, x.Metrics["up-cpu-µs/op"])
		}
		added := map[string]float64{}
		for _, x := range r.Calls {
			added[callPath(x)] = x.Metrics["p50-µs"] - direct
		}
		if a, ok := added["gateway"]; ok {
			verdict := "not met"
			if a <= 50 {
				verdict = "met"
			}
			p("\nGoal (at most 50 µs added at p50): %s, %+.0f µs; the go-sdk proxy adds %+.0f µs.\n", verdict, a, added["go-sdk-proxy"])
		}
		p("\nWhat the gateway adds is a second go-sdk hop: a streamable server and a client round trip on loopback, which costs about what a direct call costs; the gateway's own routing, relay and hub are not visible next to it (compare `go-sdk proxy`). ")
		p("Most of a hop's CPU is go-sdk decoding each message with a fresh 32 KiB buffer (segmentio/encoding's Decoder, several per message) and the collections that garbage causes; the gateway's GC default trades heap for fewer of them.\n\n")
	}
	if len(r.Upstreams) > 0 {
		p("N upstreams in one gateway with its defaults, every entry pointing at one go-sdk server in a child process (a session per entry). Setup is from Apply until every server is ready and a downstream client lists all N tools, the gateway's CPU time (its process's) meanwhile next to it; heap (after GC) and goroutines are growth over the process before, divided by N. ")
		p("The reload changes one entry (its URL) and applies the file as a diff until every server is ready again; the upstream counts the sessions opened (notifications/initialized) and ended (DELETE) meanwhile: 1 and 1 when the others' sessions were not touched.\n\n")
		p("| upstreams | setup | gateway CPU in setup | heap per upstream | goroutines per upstream | reload of one | sessions opened by the reload | sessions ended by the reload |\n|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, x := range r.Upstreams {
			m := x.Metrics
			p("| %s | %s | %s | %.1f KiB | %.2f | %.1f ms | %.0f | %.0f |\n", strings.TrimPrefix(x.Name, "BenchmarkUpstreams/"),
				(time.Duration(m["setup-ms"]) * time.Millisecond).Round(10*time.Millisecond), (time.Duration(m["setup-cpu-ms"]) * time.Millisecond).Round(10*time.Millisecond), m["heap-KiB/upstream"], m["goroutines/upstream"], m["reload-ms"], m["reload-opened"], m["reload-ended"])
		}
	}
	return b.String()
}

func callPath(x MicroResult) string { return strings.TrimPrefix(x.Name, "BenchmarkCallProcesses/") }

func callPathName(path string) string {
	switch path {
	case "direct":
		return "direct"
	case "gateway":
		return "gateway"
	case "gateway-gogc100":
		return "gateway GOGC=100"
	case "go-sdk-proxy":
		return "go-sdk proxy"
	}
	return path
}
