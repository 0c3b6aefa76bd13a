package bench

import (
	"context"
	"testing"
)

// BenchmarkCallToolSupervisedNoDeadline is BenchmarkCallToolSupervised with
// a caller that gives no deadline, as a host calling with
// context.Background() does: the call runs on the supervisor's call clock
// (Config.Limits.CallTimeout, extended by progress).
func BenchmarkCallToolSupervisedNoDeadline(b *testing.B) {
	benchCallNoDeadline(b, (*callClients).supervised)
}

// BenchmarkCallToolBareNoDeadline is BenchmarkCallToolBare with a caller
// that gives no deadline.
func BenchmarkCallToolBareNoDeadline(b *testing.B) {
	benchCallNoDeadline(b, (*callClients).bare)
}

func benchCallNoDeadline(b *testing.B, pick func(*callClients, context.Context) error) {
	cc, err := newCallClients(context.Background(), overheadOrders[0])
	if err != nil {
		b.Fatal(err)
	}
	defer cc.close()
	b.ReportAllocs()
	for b.Loop() {
		if err := pick(cc, context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}
