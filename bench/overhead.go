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
// ClientSession.CallTool against the same loopback server.
type OverheadResult struct {
	Rounds, CallsPerRound int
	// SupervisedMedian and BareMedian are the medians over rounds of the
	// mean time per call.
	SupervisedMedian, BareMedian time.Duration
	// SupervisedAllocs and BareAllocs are allocations per call in the whole
	// process (client and server); their difference is mcpsup's.
	SupervisedAllocs, BareAllocs float64
	// SupervisedBytes and BareBytes are bytes allocated per call in the
	// whole process.
	SupervisedBytes, BareBytes float64
	// SupervisedGoroutines and BareGoroutines are goroutines started per
	// call in the whole process (runtime/metrics
	// /sched/goroutines-created:goroutines).
	SupervisedGoroutines, BareGoroutines float64
	// PairedRatio is the median over rounds of the round's supervised mean
	// over its bare mean: each ratio compares two runs side by side, so a
	// host that slows down or speeds up between rounds moves neither.
	PairedRatio float64
	Err         error
}

// Ratio is SupervisedMedian / BareMedian.
func (r OverheadResult) Ratio() float64 {
	return float64(r.SupervisedMedian) / float64(r.BareMedian)
}

// CallOverhead runs figure 4: rounds of callsPerRound calls each, the two
// clients alternating within every round (ABBA order), both with the
// standalone stream open, on one plain go-sdk server (no gateway). The
// calls carry ctx, which should have a deadline, as a host's calls do.
func CallOverhead(ctx context.Context, rounds, callsPerRound int) OverheadResult {
	res := OverheadResult{Rounds: rounds, CallsPerRound: callsPerRound}
	pair, err := newCallPair(ctx)
	if err != nil {
		res.Err = err
		return res
	}
	defer pair.close()
	supCall, bareCall := pair.supervised(ctx), pair.bare(ctx)
	// Warm both paths (connections, pools) before measuring.
	for range callsPerRound {
		if err := supCall(); err != nil {
			res.Err = err
			return res
		}
		if err := bareCall(); err != nil {
			res.Err = err
			return res
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
	var sup, bare []time.Duration
	for i := range rounds {
		order := []bool{true, false}
		if i%2 == 1 {
			order = []bool{false, true}
		}
		for _, supervised := range order {
			call, dst := bareCall, &bare
			if supervised {
				call, dst = supCall, &sup
			}
			d, err := timeRound(call)
			if err != nil {
				res.Err = err
				return res
			}
			*dst = append(*dst, d)
		}
	}
	res.SupervisedMedian, res.BareMedian = median(sup), median(bare)
	ratios := make([]float64, len(sup))
	for i := range sup {
		ratios[i] = float64(sup[i]) / float64(bare[i])
	}
	slices.Sort(ratios)
	res.PairedRatio = ratios[len(ratios)/2]
	res.SupervisedAllocs, res.SupervisedBytes, res.SupervisedGoroutines = allocsPerCall(callsPerRound, supCall)
	res.BareAllocs, res.BareBytes, res.BareGoroutines = allocsPerCall(callsPerRound, bareCall)
	return res
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

// callPair is one server with a supervisor and a bare session on it.
type callPair struct {
	srv       *PlainServer
	sup, sess client
}

func newCallPair(ctx context.Context) (*callPair, error) {
	srv, err := NewPlainServer()
	if err != nil {
		return nil, err
	}
	sup, err := newClient(ctx, Supervised, srv.URL(), srv.HTTPClient())
	if err != nil {
		srv.Close()
		return nil, err
	}
	bare, err := newClient(ctx, BareSDK, srv.URL(), srv.HTTPClient())
	if err != nil {
		sup.close()
		srv.Close()
		return nil, err
	}
	return &callPair{srv: srv, sup: sup, sess: bare}, nil
}

func (p *callPair) supervised(ctx context.Context) func() error {
	return func() error { return p.sup.call(ctx, "overhead") }
}

func (p *callPair) bare(ctx context.Context) func() error {
	return func() error { return p.sess.call(ctx, "overhead") }
}

func (p *callPair) close() {
	p.sess.close()
	p.sup.close()
	p.srv.Close()
}
