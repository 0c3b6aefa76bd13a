package bench

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"sync"
	"time"

	"github.com/mcpsup/mcpsup/supervisor"
)

// IdleResult is the cost of n idle connections of one client kind.
type IdleResult struct {
	Client Client
	N      int
	Stream bool // standalone SSE stream open on every session
	// HeapPerConn is the growth of the live heap (HeapAlloc after GC) per
	// connection, in bytes.
	HeapPerConn float64
	// StackPerConn is the growth of the goroutine stacks in use
	// (runtime.MemStats.StackInuse, after GC) per connection, in bytes: an
	// idle connection's goroutines cost their stacks beside the heap.
	StackPerConn float64
	// GoroutinesPerConn is the growth of runtime.NumGoroutine per
	// connection.
	GoroutinesPerConn float64
	// StartedPerConn is the number of goroutines the process started while
	// the n connections were opened, per connection: each one's setup, a
	// figure the run's timing noise does not move.
	StartedPerConn float64
	// Setup is how long opening the n connections took.
	Setup time.Duration
	Err   error
}

// idleWorkers is how many connections are opened at once.
const idleWorkers = 16

// IdleConnections opens n idle connections of kind k (Supervised or
// BareSDK) to endpoint, measures heap and goroutines, and closes them. The
// server should live in another process for a client-only figure; in the
// same process its per-session cost is counted too (equally for both kinds).
func IdleConnections(ctx context.Context, endpoint string, k Client, n int, stream bool) IdleResult {
	return IdleConnectionsAt(ctx, endpoint, k, n, stream, nil)
}

// IdleConnectionsAt is IdleConnections that calls atPeak (when not nil)
// while all n connections are open, after the heap was measured: a heap
// profile taken there shows where the connections' memory goes.
func IdleConnectionsAt(ctx context.Context, endpoint string, k Client, n int, stream bool, atPeak func()) IdleResult {
	res := IdleResult{Client: k, N: n, Stream: stream}
	tr := &http.Transport{MaxIdleConnsPerHost: idleWorkers * 2, IdleConnTimeout: time.Minute}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	// Goroutines first: what an earlier run left (sessions ending, their
	// timers) is gone before the heap is read.
	gor0 := stableGoroutines(ctx)
	heap0 := settledHeap(ctx)
	stack0 := stackInuse()

	closers := make([]func(), n)
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	next := make(chan int)
	started := goroutinesStarted()
	start := time.Now()
	for range idleWorkers {
		wg.Go(func() {
			for i := range next {
				c, err := openIdle(ctx, endpoint, hc, k, stream)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = fmt.Errorf("connection %d: %w", i, err)
				}
				closers[i] = c
				mu.Unlock()
			}
		})
	}
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
		}
	}
	close(next)
	wg.Wait()
	res.Setup = time.Since(start)
	res.StartedPerConn = float64(goroutinesStarted()-started-idleWorkers) / float64(n)
	defer closeAll(closers)
	if firstErr != nil {
		res.Err = firstErr
		return res
	}
	if err := ctx.Err(); err != nil {
		res.Err = err
		return res
	}
	gor1 := stableGoroutines(ctx)
	heap1 := liveHeap()
	res.HeapPerConn = (float64(heap1) - float64(heap0)) / float64(n)
	res.StackPerConn = (float64(stackInuse()) - float64(stack0)) / float64(n)
	res.GoroutinesPerConn = float64(gor1-gor0) / float64(n)
	if atPeak != nil {
		atPeak()
	}
	return res
}

func openIdle(ctx context.Context, endpoint string, hc *http.Client, k Client, stream bool) (func(), error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if k == Supervised {
		policy := supervisor.StreamAuto
		if !stream {
			policy = supervisor.StreamOff
		}
		sup, err := startSupervisor(ctx, endpoint, hc, supervisor.Config{Name: "idle", Era: supervisor.Era2025, Stream: supervisor.StreamConfig{Policy: policy}})
		if err != nil {
			return nil, err
		}
		return func() { _ = sup.Close() }, nil
	}
	sess, err := dialSDK(ctx, endpoint, hc, !stream)
	if err != nil {
		return nil, err
	}
	if k == BareListed {
		tools, err := sess.ListTools(ctx, nil)
		if err != nil {
			_ = sess.Close()
			return nil, err
		}
		// Held while the connection is, as a host holds what it may call.
		return func() { _ = sess.Close(); runtime.KeepAlive(tools) }, nil
	}
	return func() { _ = sess.Close() }, nil
}

// WarmIdle prepares the process for idle runs of up to n connections: it
// opens and closes idleWorkers connections of every idle client kind,
// stream on and off, so that the process-wide state the first connections
// create (codec and schema caches, pools) is not counted against whichever
// run comes first, and it starts and ends warmGoroutinesPerConn goroutines
// per connection: the runtime allocates a goroutine's descriptor on the
// heap once and reuses it for the process's life, so without this the
// first run would count the descriptors of its goroutines and later runs
// none (the goroutines column counts them all).
func WarmIdle(ctx context.Context, endpoint string, n int) error {
	warmGoroutines(n * warmGoroutinesPerConn)
	for _, stream := range []bool{true, false} {
		for _, k := range IdleClients {
			if r := IdleConnections(ctx, endpoint, k, idleWorkers, stream); r.Err != nil {
				return fmt.Errorf("warm-up %s stream=%v: %w", k, stream, r.Err)
			}
		}
	}
	return nil
}

// warmGoroutinesPerConn is above the goroutines any client holds per
// connection, transient ones of its setup included.
const warmGoroutinesPerConn = 8

// warmGoroutines starts n goroutines, lets them end and waits for them.
func warmGoroutines(n int) {
	var wg sync.WaitGroup
	release := make(chan struct{})
	for range n {
		wg.Go(func() { <-release })
	}
	close(release)
	wg.Wait()
}

// IdleClients are the clients of the idle figure, in report order.
var IdleClients = []Client{Supervised, BareSDK, BareListed}

// BareListedNote says why the idle figure has two go-sdk rows.
const BareListedNote = "mcpsup lists the tools before it is ready and keeps the catalog; a host on go-sdk must list them too before it can call one, so the `" + string(BareListed) + "` row (connect, then ListTools, its result kept) is the like-for-like baseline; the plain row is go-sdk's connect alone."

// IdleExtras compares every mcpsup run in rs with the go-sdk runs of the
// same size and stream setting, one line per mcpsup run.
func IdleExtras(rs []IdleResult) []string {
	var out []string
	for _, a := range rs {
		if a.Client != Supervised || a.Err != nil {
			continue
		}
		line := fmt.Sprintf("mcpsup extra at %d, stream %s:", a.N, onOff(a.Stream))
		n := 0
		for _, b := range rs {
			if b.Client == Supervised || b.Err != nil || b.N != a.N || b.Stream != a.Stream {
				continue
			}
			if n > 0 {
				line += ";"
			}
			line += fmt.Sprintf(" over %s %+.1f KiB heap, %+.1f KiB heap and stacks, and %+.2f goroutines per connection, setup %.2f times as long",
				b.Client, (a.HeapPerConn-b.HeapPerConn)/1024, (a.HeapPerConn+a.StackPerConn-b.HeapPerConn-b.StackPerConn)/1024,
				a.GoroutinesPerConn-b.GoroutinesPerConn, float64(a.Setup)/float64(max(b.Setup, 1)))
			n++
		}
		if n > 0 {
			out = append(out, line+".")
		}
	}
	return out
}

// closeAll closes every connection, idleWorkers at a time.
func closeAll(closers []func()) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, idleWorkers)
	for _, c := range closers {
		if c == nil {
			continue
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			c()
		})
	}
	wg.Wait()
}

// settledHeap returns liveHeap once it no longer falls by more than 1%
// from one reading to the next, 200ms apart (memory an earlier run's
// timers still held is freed), bounded by 3s.
func settledHeap(ctx context.Context) uint64 {
	deadline := time.Now().Add(3 * time.Second)
	last := liveHeap()
	for time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(200 * time.Millisecond)
		h := liveHeap()
		if h >= last-last/100 {
			return h
		}
		last = h
	}
	return last
}

// liveHeap returns HeapAlloc after two collections.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// stackInuse returns the bytes of goroutine stacks in use after a
// collection (which also shrinks stacks that grew and are idle).
func stackInuse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.StackInuse
}

// stableGoroutines returns runtime.NumGoroutine once it has not changed for
// 300ms (streams and watchers start after a connection is ready), bounded
// by 10s.
func stableGoroutines(ctx context.Context) int {
	deadline := time.Now().Add(10 * time.Second)
	last, since := runtime.NumGoroutine(), time.Now()
	for time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(50 * time.Millisecond)
		n := runtime.NumGoroutine()
		if n != last {
			last, since = n, time.Now()
			continue
		}
		if time.Since(since) >= 300*time.Millisecond {
			break
		}
	}
	return last
}
