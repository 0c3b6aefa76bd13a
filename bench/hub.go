package bench

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mcpsup/mcpsup/hub"
	"github.com/mcpsup/mcpsup/supervisor"
)

// HubResult is the cost of n servers in one hub, all entries pointing at
// one server URL under different names (one go-sdk server serves many
// sessions).
type HubResult struct {
	N      int
	Stream bool
	// HeapPerServer and GoroutinesPerServer are the growth of the live heap
	// and of runtime.NumGoroutine per server, as in IdleResult.
	HeapPerServer       float64
	GoroutinesPerServer float64
	// Setup is the time from the first Add until WaitReady(All) returned,
	// with Config.MaxStarting servers connecting at once.
	Setup       time.Duration
	MaxStarting int
	Tools       int // tools in the merged catalog
	Err         error
}

// HubIdle adds n servers named s0..s(n-1) for endpoint to one hub, waits
// until all are ready, measures heap and goroutines per server as
// IdleConnections does, and closes the hub.
func HubIdle(ctx context.Context, endpoint string, n int, stream bool) HubResult {
	res := HubResult{N: n, Stream: stream, MaxStarting: idleWorkers}
	tr := &http.Transport{MaxIdleConnsPerHost: idleWorkers * 2, IdleConnTimeout: time.Minute}
	defer tr.CloseIdleConnections()
	policy := supervisor.StreamAuto
	if !stream {
		policy = supervisor.StreamOff
	}
	heap0, gor0 := liveHeap(), stableGoroutines(ctx)
	h := hub.New(hub.Config{MaxStarting: idleWorkers,
		Supervisor: supervisor.Config{Era: supervisor.Era2025, HTTP: supervisor.HTTPConfig{HTTPClient: &http.Client{Transport: tr}}, Stream: supervisor.StreamConfig{Policy: policy}}})
	defer h.Close()
	start := time.Now()
	for i := range n {
		if err := h.Add(ctx, hub.ServerConfig{Name: "s" + strconv.Itoa(i), URL: endpoint}); err != nil {
			res.Err = err
			return res
		}
	}
	if err := h.WaitReady(ctx, hub.All); err != nil {
		res.Err = err
		return res
	}
	res.Setup = time.Since(start)
	res.Tools = len(h.Tools())
	gor1 := stableGoroutines(ctx)
	heap1 := liveHeap()
	res.HeapPerServer = (float64(heap1) - float64(heap0)) / float64(n)
	res.GoroutinesPerServer = float64(gor1-gor0) / float64(n)
	return res
}

// HubMicroPattern selects the merged-catalog benchmarks of ./hub.
const HubMicroPattern = "BenchmarkCatalogChange"

// HubFigures runs figure 7: n servers in one hub, stream on and off, next to
// n single supervisors on the same server, and the merged catalog's change
// benchmarks of ./hub in the module at dir.
func HubFigures(ctx context.Context, endpoint, dir string, n int, benchtime string) ([]HubResult, []IdleResult, []MicroResult, error) {
	var hubs []HubResult
	var sups []IdleResult
	for _, stream := range []bool{true, false} {
		sups = append(sups, IdleConnections(ctx, endpoint, Supervised, n, stream))
		hubs = append(hubs, HubIdle(ctx, endpoint, n, stream))
	}
	micro, err := microRun(ctx, dir, "./hub", HubMicroPattern, benchtime)
	return hubs, sups, micro, err
}

// RenderHub writes figure 7 (see HubFigures) as Markdown.
func RenderHub(hubs []HubResult, sups []IdleResult, micro []MicroResult, microErr error) string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("## 8. Many servers in one hub\n\n")
	p("One hub (package hub) holds N servers named s0..sN-1, all pointing at one plain go-sdk server in a child process (it serves a session per entry), Era2025; they start %d at a time (Config.MaxStarting) and the figure is taken once WaitReady(All) returned. ", idleWorkers)
	p("Next to it, N single supervisors on the same server, as in figure 5. Heap and goroutines are growth over the process before, divided by N. Goal: the hub's per-server cost close to one supervisor's.\n\n")
	p("| servers | standalone stream | client | heap per server | goroutines per server | setup | merged tools |\n|---:|---|---|---:|---:|---:|---:|\n")
	for i, hr := range hubs {
		if i < len(sups) {
			s := sups[i]
			if s.Err != nil {
				p("| %d | %s | supervisors | error: %s | | | |\n", s.N, onOff(s.Stream), cell(s.Err.Error()))
			} else {
				p("| %d | %s | supervisors | %.1f KiB | %.2f | %s | |\n", s.N, onOff(s.Stream), s.HeapPerConn/1024, s.GoroutinesPerConn, s.Setup.Round(10*time.Millisecond))
			}
		}
		if hr.Err != nil {
			p("| %d | %s | hub | error: %s | | | |\n", hr.N, onOff(hr.Stream), cell(hr.Err.Error()))
			continue
		}
		p("| %d | %s | hub | %.1f KiB | %.2f | %s | %d |\n", hr.N, onOff(hr.Stream), hr.HeapPerServer/1024, hr.GoroutinesPerServer, hr.Setup.Round(10*time.Millisecond), hr.Tools)
	}
	for i, hr := range hubs {
		if i < len(sups) && hr.Err == nil && sups[i].Err == nil {
			p("\nhub extra at %d, stream %s: %+.1f KiB and %+.2f goroutines per server.", hr.N, onOff(hr.Stream), (hr.HeapPerServer-sups[i].HeapPerConn)/1024, hr.GoroutinesPerServer-sups[i].GoroutinesPerConn)
		}
	}
	p("\n\nThe cost of one server's catalog change in the merged view (`go test -run ^$ -bench %s -benchmem ./hub`): servers × tools each, one server's tools change definition (or, `rename`, all of them get new names), the view updated and its diff computed; `read` also builds the sorted list a host reads next, a copy of the last list merged with the changed names (no sort of the whole), so it grows with all items. Goal: the update flat in the number of servers, proportional to the changed server's tools.\n\n", HubMicroPattern)
	if microErr != nil {
		p("error: %s\n\n", cell(microErr.Error()))
	}
	p("| benchmark | ns/op | B/op | allocs/op |\n|---|---:|---:|---:|\n")
	for _, x := range micro {
		p("| %s | %.1f | %.0f | %.0f |\n", x.Name, x.NsPerOp, x.BytesPerOp, x.AllocsPerOp)
	}
	return b.String()
}
