// Package bench measures what mcpsup's resilience costs and what it saves,
// side by side with the alternatives, on one machine in one run:
//
//   - extra HTTP requests per failed tools/call, by failure class, for the
//     supervisor, a client that reconnects on every HTTP error (failure
//     story S4 of DESIGN.md) and a bare go-sdk ClientSession;
//   - time to ready for a blind resume, a known resume, a stale recovery and
//     a fresh connect, with gateway latency per request, in round trips;
//   - sessions lost in a fixed period behind a GET-hostile gateway and an
//     idle-cutting proxy (failure story S5);
//   - CallTool latency and allocations through the supervisor against a bare
//     ClientSession on loopback;
//   - heap bytes and goroutines per idle connection;
//   - the pure cores: fsm Step and classify.Classify;
//   - a stdio server's restart (process exit to ready on a new process)
//     beside bare go-sdk's connect over mcp.CommandTransport;
//   - the gateway (`mcpsup serve`, module cmd/mcpsup): per-call overhead
//     over calling the upstream directly, client, gateway and upstream each
//     in a process of its own, 1,000 upstreams in one gateway and a reload
//     of one, run as that module's benchmarks (GatewayFigures).
//
// Every measurement runs a real go-sdk server on 127.0.0.1 behind an mcptest
// gateway, which counts the requests. The functions here return data; the
// command bench/cmd/report runs them all and writes docs/benchmarks.md:
//
//	go run ./bench/cmd/report
//
// The package's Benchmark functions run the same measurements under
// `go test -bench`. No test asserts a duration.
package bench
