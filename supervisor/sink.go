package supervisor

import (
	"log/slog"
	"reflect"
	"runtime"
	"sync"

	"github.com/mcpsup/mcpsup/events"
)

// sinkQueue hands events to the host's sink, in order, one at a time, off
// the loop goroutine, on a goroutine that runs only while events wait
// (grpc-go's CallbackSerializer; DESIGN.md section 5).
type sinkQueue struct {
	sink   events.Sink // nil: events are discarded
	logger *slog.Logger
	server string

	mu      sync.Mutex
	idle    *sync.Cond // broadcast when the queue empties
	queue   []events.Event
	running bool // a goroutine is delivering
	done    sync.WaitGroup
}

func newSinkQueue(sink events.Sink, logger *slog.Logger, server string) *sinkQueue {
	q := &sinkQueue{sink: sink, logger: logger, server: server}
	q.idle = sync.NewCond(&q.mu)
	return q
}

// push queues evs (copied) for the sink and starts the delivering goroutine
// if none runs.
func (q *sinkQueue) push(evs []events.Event) {
	if q.sink == nil || len(evs) == 0 {
		return
	}
	q.mu.Lock()
	q.queue = append(q.queue, evs...)
	start := !q.running
	if start {
		q.running = true
		q.done.Add(1)
	}
	q.mu.Unlock()
	if start {
		go q.run()
	}
}

func (q *sinkQueue) run() {
	defer q.done.Done()
	q.mu.Lock()
	for len(q.queue) > 0 {
		e := q.queue[0]
		q.queue[0] = events.Event{}
		q.queue = q.queue[1:]
		q.mu.Unlock()
		q.deliver(e)
		q.mu.Lock()
	}
	q.queue = nil // drop the drained backing array
	q.running = false
	q.idle.Broadcast()
	q.mu.Unlock()
}

// deliver hands e to the sink, the only caller of a sink (inSink); a panic
// is logged and the event dropped.
//
//go:noinline
func (q *sinkQueue) deliver(e events.Event) {
	defer func() {
		if r := recover(); r != nil {
			q.logger.Error("mcpsup: the events sink panicked; event dropped", "server", q.server, "kind", e.Kind, "seq", e.Seq, "panic", r)
		}
	}()
	q.sink.Emit(e)
}

// drain waits until every event pushed so far has been delivered and the
// delivering goroutine has ended. A sink callback must not drain: it would
// wait for itself (see inSink).
func (q *sinkQueue) drain() {
	q.mu.Lock()
	for q.running {
		q.idle.Wait()
	}
	q.mu.Unlock()
	q.done.Wait()
}

// deliverName names sinkQueue.deliver as runtime.Callers reports it.
var deliverName = runtime.FuncForPC(reflect.ValueOf((*sinkQueue).deliver).Pointer()).Name()

// inSink reports whether sinkQueue.deliver is on the caller's stack: Close
// and Detach, which wait for the sink, must not wait for themselves.
func inSink() bool {
	pcs := make([]uintptr, 64)
	for {
		n := runtime.Callers(2, pcs)
		frames := runtime.CallersFrames(pcs[:n])
		for {
			f, more := frames.Next()
			if f.Function == deliverName {
				return true
			}
			if !more {
				break
			}
		}
		if n < len(pcs) {
			return false
		}
		pcs = make([]uintptr, 2*len(pcs)) // a deep stack: look at all of it
	}
}
