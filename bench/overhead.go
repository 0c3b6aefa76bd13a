package bench

import (
	"context"
	"math"
	"runtime"
	"runtime/metrics"
	"slices"
	"testing"
	"time"
)

// OverheadResult compares CallTool through mcpsup with a bare go-sdk
// ClientSession.CallTool against the same loopback server, and shows the
// wire layer's share: a go-sdk session on mcpsup's Transport alone
// (httpsession.Open), without the supervisor.
type OverheadResult struct {
	// Setups is how many times a fresh server and three fresh clients were
	// made; each ran Rounds rounds of CallsPerRound calls per client.
	Setups, Rounds, CallsPerRound int
	// OwnContext reports that each call had a context of its own, with a
	// deadline, canceled once the call returned (context.WithTimeout and
	// defer cancel, as a Go host calls); otherwise every call shared the
	// run's context.
	OwnContext bool
	// Supervised, Wire and Bare are the three clients' figures.
	Supervised, Wire, Bare CallFigures
	// SetupRatios and WireSetupRatios are each setup's paired ratio of the
	// supervised (wire-only) client: the median over the setup's rounds of
	// the round's mean over its bare mean. Each compares runs side by side,
	// so a host that slows down or speeds up between rounds moves neither;
	// what one setup's connections, goroutines and memory happen to be
	// moves a setup's ratio by a few percent, so no one setup decides.
	SetupRatios, WireSetupRatios []float64
	// PairedRatio and WirePairedRatio are the medians of SetupRatios and
	// WireSetupRatios.
	PairedRatio, WirePairedRatio float64
	// PairedInterval and WirePairedInterval bound the medians with at
	// least 95% confidence (see [medianInterval]): the setups are the
	// samples, since what differs between setups is what moves a ratio
	// most. Zero with too few setups for such an interval (fewer than 6).
	PairedInterval, WirePairedInterval Interval
	// CPURatio and WireCPURatio are the process's CPU time per call
	// through the supervised (wire-only) client over bare go-sdk's, all
	// rounds of all setups (zero where CPU time cannot be read).
	CPURatio, WireCPURatio float64
	Err                    error
}

// CallFigures are one client's figures in [OverheadResult].
type CallFigures struct {
	// Median is the median over all rounds of the mean time per call.
	Median time.Duration
	// CPU is the process's CPU time (user and system, all threads: client,
	// server and the runtime) per call, over all rounds.
	CPU time.Duration
	// Allocs and Bytes are allocations and bytes allocated per call in the
	// whole process (client and server), in the first setup; differences
	// between clients are the clients' own.
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

// CallOverhead runs figure 4: setups times, a fresh plain go-sdk server
// (no gateway) and three fresh clients on it, all with the standalone
// stream open, run rounds of callsPerRound calls each, the three clients
// taking turns within every round (in the six orders in turn). The calls
// carry ctx, which should have a deadline; with ownContext each call
// carries a context of its own derived from it (see
// [OverheadResult.OwnContext]).
func CallOverhead(ctx context.Context, setups, rounds, callsPerRound int, ownContext bool) OverheadResult {
	res := OverheadResult{Setups: setups, Rounds: rounds, CallsPerRound: callsPerRound, OwnContext: ownContext}
	var all overheadSamples
	for i := range setups {
		s, err := runSetup(ctx, overheadOrders[i%len(overheadOrders)], rounds, callsPerRound, ownContext, i == 0)
		if err != nil {
			res.Err = err
			return res
		}
		res.SetupRatios = append(res.SetupRatios, pairedRatio(s.times[0], s.times[2]))
		res.WireSetupRatios = append(res.WireSetupRatios, pairedRatio(s.times[1], s.times[2]))
		if i == 0 {
			res.Supervised, res.Wire, res.Bare = s.counted[0], s.counted[1], s.counted[2]
		}
		all.add(s)
	}
	res.PairedRatio = median(res.SetupRatios)
	res.WirePairedRatio = median(res.WireSetupRatios)
	res.PairedInterval = medianInterval(res.SetupRatios)
	res.WirePairedInterval = medianInterval(res.WireSetupRatios)
	for c, f := range []*CallFigures{&res.Supervised, &res.Wire, &res.Bare} {
		f.Median = median(all.times[c])
		f.CPU = all.cpu[c] / time.Duration(len(all.times[c])*callsPerRound)
	}
	if all.cpu[2] > 0 {
		res.CPURatio = float64(all.cpu[0]) / float64(all.cpu[2])
		res.WireCPURatio = float64(all.cpu[1]) / float64(all.cpu[2])
	}
	return res
}

// overheadSamples are the three clients' mean times per call, one per
// round, their CPU time in all, and, when counted, their allocations and
// goroutines started per call (counted's Median and CPU stay zero).
type overheadSamples struct {
	times   [3][]time.Duration
	cpu     [3]time.Duration
	counted [3]CallFigures
}

func (o *overheadSamples) add(s overheadSamples) {
	for c := range o.times {
		o.times[c] = append(o.times[c], s.times[c]...)
		o.cpu[c] += s.cpu[c]
	}
}

// runSetup makes a server and the three clients in order, warms them, and
// times rounds of calls; with counts, it also counts allocations and
// goroutines.
func runSetup(ctx context.Context, order [3]int, rounds, callsPerRound int, ownContext, counts bool) (overheadSamples, error) {
	var s overheadSamples
	cc, err := newCallClients(ctx, order)
	if err != nil {
		return s, err
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
				return s, err
			}
		}
	}
	timeRound := func(call func() error) (time.Duration, time.Duration, error) {
		cpu0, _ := processCPU()
		start := time.Now()
		for range callsPerRound {
			if err := call(); err != nil {
				return 0, 0, err
			}
		}
		d := time.Since(start)
		cpu1, _ := processCPU()
		return d / time.Duration(callsPerRound), cpu1 - cpu0, nil
	}
	for i := range rounds {
		for _, c := range overheadOrders[i%len(overheadOrders)] {
			d, cpu, err := timeRound(calls[c])
			if err != nil {
				return s, err
			}
			s.times[c] = append(s.times[c], d)
			s.cpu[c] += cpu
		}
	}
	if counts {
		for c := range s.counted {
			f := &s.counted[c]
			f.Allocs, f.Bytes, f.Goroutines = allocsPerCall(callsPerRound, calls[c])
		}
	}
	return s, nil
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
	return median(ratios)
}

// median is the median of xs: the mean of the middle two of an even
// number of them.
func median[T ~int64 | ~float64](xs []T) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[n/2]
}

// Interval is a confidence interval of a median: Lo and Hi, the Rank-th
// smallest and the Rank-th largest of the samples, bound it with
// probability at least Level (0 to 1). The zero Interval is none.
type Interval struct {
	Lo, Hi, Level float64
	Rank          int
}

// medianInterval is the distribution-free confidence interval of the median
// of the population xs were drawn from: the k-th smallest and the k-th
// largest of xs, k the largest for which the chance that fewer than k
// samples fall below the median, Binomial(n, 1/2), is at most 2.5%, so
// the interval holds the median with probability at least 95% (its exact
// level is reported). It assumes no more than independent samples of one
// distribution. Fewer than 6 samples give no such interval: the zero
// Interval.
func medianInterval(xs []float64) Interval {
	n := len(xs)
	// below is P(B <= j) for B ~ Binomial(n, 1/2); tail is P(B < k).
	var tail, below float64
	k := 0
	for j := 0; j < n; j++ {
		below += binomialHalf(n, j)
		if below > 0.025 {
			break
		}
		k, tail = j+1, below
	}
	if k == 0 {
		return Interval{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return Interval{Lo: s[k-1], Hi: s[n-k], Level: 1 - 2*tail, Rank: k}
}

// binomialHalf is P(B = j) for B ~ Binomial(n, 1/2).
func binomialHalf(n, j int) float64 {
	p := math.Pow(0.5, float64(n))
	for i := range j {
		p = p * float64(n-i) / float64(i+1)
	}
	return p
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
// Transport alone (httpsession.Open) and a bare go-sdk session on it.
type callClients struct {
	srv             *PlainServer
	sup, wire, sess client
}

// newCallClients makes the server and the three clients, in order (0
// supervised, 1 wire-only, 2 bare): the order a setup makes its clients
// in moves their figures by a percent or two (a second bare go-sdk client
// in place of the wire-only one, made before the first, ran 1-3% slower
// than it), so figure 4's setups take the six orders in turn.
func newCallClients(ctx context.Context, order [3]int) (*callClients, error) {
	srv, err := NewPlainServer()
	if err != nil {
		return nil, err
	}
	p := &callClients{srv: srv}
	for _, c := range order {
		switch c {
		case 0:
			p.sup, err = newClient(ctx, Supervised, srv.URL(), srv.HTTPClient())
		case 1:
			p.wire, err = newWireClient(ctx, srv.URL(), srv.HTTPClient())
		case 2:
			p.sess, err = newClient(ctx, BareSDK, srv.URL(), srv.HTTPClient())
		}
		if err != nil {
			p.close()
			return nil, err
		}
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
