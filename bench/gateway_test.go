package bench

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// Figure 10 is read from the lines `go test -bench` prints for the gateway's
// benchmarks: the added p50 is each path's over the direct call's, the goal's
// verdict follows it, and the reload's session counts are shown as counted.
func TestRenderGateway(t *testing.T) {
	calls := parseBench("gateway", `BenchmarkCallProcesses/direct-2  3000  821335 ns/op  410.1 cpu-µs/op  501.0 p50-µs  5918 p99-µs  480.1 up-cpu-µs/op
BenchmarkCallProcesses/gateway-2  3000  1521206 ns/op  448.5 cpu-µs/op  400.0 gogc  733.7 gw-cpu-µs/op  1154 p50-µs  7639 p99-µs  540.7 up-cpu-µs/op
BenchmarkCallProcesses/go-sdk-proxy-2  3000  1709903 ns/op  494.2 cpu-µs/op  400.0 gogc  798.6 gw-cpu-µs/op  1251 p50-µs  7731 p99-µs  654.3 up-cpu-µs/op
`)
	ups := parseBench("gateway", "BenchmarkUpstreams/1000-2  1  7482786989 ns/op  6.009 goroutines/upstream  40.34 heap-KiB/upstream  1.000 reload-ended  19.27 reload-ms  1.000 reload-opened  3123 setup-cpu-ms  6693 setup-ms\n")
	out := RenderGateway(GatewayResult{Calls: calls, Upstreams: ups, Calltime: "3000x"})
	require.Contains(t, out, "| gateway | 400 | 1154 µs | 7639 µs | +653 µs | 448 µs | 734 µs | 541 µs |")
	require.Contains(t, out, "not met, +653 µs; the go-sdk proxy adds +750 µs.")
	require.Contains(t, out, "| 1000 | 6.69s | 3.12s | 40.3 KiB | 6.01 | 19.3 ms | 1 | 1 |")

	calls[1].Metrics["p50-µs"] = calls[0].Metrics["p50-µs"] + 40
	require.Contains(t, RenderGateway(GatewayResult{Calls: calls}), "p50): met, +40 µs")

	failed := RenderGateway(GatewayResult{Err: errors.New("go test -bench ./gateway: exit status 1")})
	require.Contains(t, failed, "error: go test -bench ./gateway: exit status 1")
}
