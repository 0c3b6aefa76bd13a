package htmltimeline

import (
	"io"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkWrite10k: the page of 10,000 events (five servers), marshalled
// and written.
func BenchmarkWrite10k(b *testing.B) {
	evs := synthetic(10000)
	b.ReportAllocs()
	for b.Loop() {
		if err := Write(io.Discard, evs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBuild10k: the Go model of 10,000 events.
func BenchmarkBuild10k(b *testing.B) {
	evs := synthetic(10000)
	b.ReportAllocs()
	for b.Loop() {
		Build(evs)
	}
}

var bodyTimes = regexp.MustCompile(`data-render-ms="([\d.]+)" data-ready-ms="([\d.]+)"`)

// BenchmarkBrowserLoad10k loads the page of 10,000 events in headless
// Chromium (--dump-dom, 800x600 window) and reports what the page measured
// itself: render-ms from its script's start to the drawing done (parse
// every line, build the model, draw), ready-ms from navigation start to the
// drawing done. ns/op is a whole Chromium run, process start included.
func BenchmarkBrowserLoad10k(b *testing.B) {
	bin := chromium(b)
	page := writePageFile(b, b.TempDir(), synthetic(10000))
	var render, ready float64
	n := 0
	for b.Loop() {
		m := bodyTimes.FindStringSubmatch(dumpDOM(b, bin, page))
		require.NotNil(b, m, "the page reports its times")
		r1, _ := strconv.ParseFloat(m[1], 64)
		r2, _ := strconv.ParseFloat(m[2], 64)
		render, ready, n = render+r1, ready+r2, n+1
	}
	b.ReportMetric(render/float64(n), "render-ms")
	b.ReportMetric(ready/float64(n), "ready-ms")
}
