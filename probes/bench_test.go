package probes_test

import (
	"context"
	"testing"

	"github.com/mcpsup/mcpsup/probes"
)

// BenchmarkProbeBlind measures one blind probe of the four lists over an
// in-memory lister: three of them answer -32601.
func BenchmarkProbeBlind(b *testing.B) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		cat, err := probes.ProbeBlind(ctx, staticLister{}, probes.Options{})
		if err != nil || len(cat.Tools) != 2 {
			b.Fatal(err)
		}
	}
}
