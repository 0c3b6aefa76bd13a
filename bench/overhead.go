package bench

import (
	"context"
	"runtime"
	"runtime/metrics"
	"slices"
	"testing"
	"time"
)

// OverheadResult compares CallTool through mcpsup with a bare go-sdk
// ClientSession.CallTool against the same loopback server, and shows the
// wire layer's share: a go-sdk session on mcpsup's Transport alone
// (wire.Open), without the supervisor.
type OverheadResult struct {
	Rounds, CallsPerRound int
	// OwnContext reports that each call had a context of its own, with a
	// deadline, canceled once the call returned (context.WithTimeout and
	// defer cancel, as a Go host calls); otherwise every call shared the
	// run's context.
	OwnContext bool
	// Supervised, Wire and Bare are the three clients' figures.
	Supervised, Wire, Bare CallFigures
	// PairedRatio and WirePairedRatio are the medians over rounds of the
	// round's supervised (wire-only) mean over its bare mean: each ratio
	// compares runs side by side, so a host that slows down or speeds up
	// between rounds moves neither.
	PairedRatio, WirePairedRatio float64
	Err                          error
}

// CallFigures are one client's figures in [OverheadResult].
type CallFigures struct {
	// Median is the median over rounds of the mean time per call.
	Median time.Duration
	// Allocs and Bytes are allocations and bytes allocated per call in the
	// whole process (client and server); differences between clients are
	// the clients' own.
	Allocs, Bytes float64
	// Goroutines is goroutines started per call in the whole process
	// (runtime/metrics /sched/goroutines-created:goroutines).
	Goroutines float64
}

// Ratio is the supervised median over the bare median.
func (r OverheadResult) Ratio() float64 {
	return float64(r.Supervised.Median) / float64(r.Bare.Median)
}

// overheadOrders are the six orders of the three clients (supervised,
// wire-only, bare), taken in turn by the rounds, so that no client is
// always first or always after another.
var overheadOrders = [][3]int{{0, 1, 2}, {2, 1, 0}, {1, 0, 2}, {2, 0, 1}, {0, 2, 1}, {1, 2, 0}}

// CallOverhead runs figure 4: rounds of callsPerRound calls each, the three
// clients taking turns within every round (in the six orders in turn), all
// with the standalone stream open, on one plain go-sdk server (no gateway).
// The calls carry ctx, which should have a deadline; with ownContext each
// call carries a context of its own derived from it (see
// [OverheadResult.OwnContext]).
func CallOverhead(ctx context.Context, rounds, callsPerRound int, ownContext bool) OverheadResult {
	res := OverheadResult{Rounds: rounds, CallsPerRound: callsPerRound, OwnContext: ownContext}
	cc, err := newCallClients(ctx)
	if err != nil {
		res.Err = err
		return res
	}
	defer cc.close()
	var calls [3]func() error
	for i, call := range [3]func(context.Context) error{cc.supervised, cc.wireOnly, cc.bare} {
		if ownContext {
			calls[i] = withOwnContext(ctx, call)
		} else {
			calls[i] = func() error { return call(ctx) }
		}
	}
	// Warm every path (connections, pools) before measuring.
	for range callsPerRound {
		for _, call := range calls {
			if err := call(); err != nil {
				res.Err = err
				return res
			}
		}
	}
	timeRound := func(call func() error) (time.Duration, error) {
		start := time.Now()
		for range callsPerRound {
			if err := call(); err != nil {
				return 0, err
			}
		}
		return time.Since(start) / time.Duration(callsPerRound), nil
	}
	var times [3][]time.Duration
	for i := range rounds {
		for _, c := range overheadOrders[i%len(overheadOrders)] {
			d, err := timeRound(calls[c])
			if err != nil {
				res.Err = err
				return res
			}
			times[c] = append(times[c], d)
		}
	}
	res.PairedRatio = pairedRatio(times[0], times[2])
	res.WirePairedRatio = pairedRatio(times[1], times[2])
	for c, f := range []*CallFigures{&res.Supervised, &res.Wire, &res.Bare} {
		f.Median = median(times[c])
		f.Allocs, f.Bytes, f.Goroutines = allocsPerCall(callsPerRound, calls[c])
	}
	return res
}

// withOwnContext runs call with a context of its own, with a deadline a
// minute out, canceled when call returns.
func withOwnContext(ctx context.Context, call func(context.Context) error) func() error {
	return func() error {
		cctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		return call(cctx)
	}
}

// pairedRatio is the median over rounds of a[i]/b[i].
func pairedRatio(a, b []time.Duration) float64 {
	ratios := make([]float64, len(a))
	for i := range a {
		ratios[i] = float64(a[i]) / float64(b[i])
	}
	slices.Sort(ratios)
	return ratios[len(ratios)/2]
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// allocsPerCall returns allocations, bytes and goroutines started per call
// over runs calls, the way testing.AllocsPerRun counts (whole process,
// GOMAXPROCS unchanged).
func allocsPerCall(runs int, call func() error) (allocs, bytes, goroutines float64) {
	var before, after runtime.MemStats
	allocs = testing.AllocsPerRun(runs, func() { _ = call() })
	runtime.ReadMemStats(&before)
	started := goroutinesStarted()
	for range runs {
		_ = call()
	}
	goroutines = float64(goroutinesStarted()-started) / float64(runs)
	runtime.ReadMemStats(&after)
	return allocs, float64(after.TotalAlloc-before.TotalAlloc) / float64(runs), goroutines
}

// goroutinesStarted is the number of goroutines the process started so far.
func goroutinesStarted() uint64 {
	s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// callClients is one server with a supervisor, a go-sdk session on mcpsup's
// Transport alone (wire.Open) and a bare go-sdk session on it.
type callClients struct {
	srv             *PlainServer
	sup, wire, sess client
}

func newCallClients(ctx context.Context) (*callClients, error) {
	srv, err := NewPlainServer()
	if err != nil {
		return nil, err
	}
	p := &callClients{srv: srv}
	if p.sup, err = newClient(ctx, Supervised, srv.URL(), srv.HTTPClient()); err == nil {
		if p.wire, err = newWireClient(ctx, srv.URL(), srv.HTTPClient()); err == nil {
			p.sess, err = newClient(ctx, BareSDK, srv.URL(), srv.HTTPClient())
		}
	}
	if err != nil {
		p.close()
		return nil, err
	}
	return p, nil
}

func (p *callClients) supervised(ctx context.Context) error { return p.sup.call(ctx, "overhead") }
func (p *callClients) wireOnly(ctx context.Context) error   { return p.wire.call(ctx, "overhead") }
func (p *callClients) bare(ctx context.Context) error       { return p.sess.call(ctx, "overhead") }

func (p *callClients) close() {
	for _, c := range []client{p.sess, p.wire, p.sup} {
		if c != nil {
			c.close()
		}
	}
	p.srv.Close()
}
