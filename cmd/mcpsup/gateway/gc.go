package gateway

import (
	"os"
	"runtime/debug"
)

// DefaultGCPercent is the garbage collector's target percentage (GOGC) a
// gateway process runs with when its environment sets neither GOGC nor
// GOMEMLIMIT. Each message go-sdk decodes allocates a 32 KiB buffer, a few
// per hop, so a gateway's heap is mostly garbage that turns over every few
// calls: at Go's default of 100 the collector ran every dozen or so calls
// on a small heap. 400 lets the heap grow to five times the live heap (about
// 40 KiB per upstream after setup, so up to about 200 MiB for 1,000
// upstreams) and cuts the gateway's CPU per call by about a third
// (BenchmarkCallProcesses, docs/benchmarks.md "The gateway").
const DefaultGCPercent = 400

// SetGCDefault sets DefaultGCPercent for the process unless GOGC or
// GOMEMLIMIT is set in the environment (the operator's choice wins), and
// reports whether it did. Call it once, from main, before serving.
func SetGCDefault() bool {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return false
	}
	debug.SetGCPercent(DefaultGCPercent)
	return true
}
