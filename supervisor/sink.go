package supervisor

import (
	"log/slog"
	"sync"

	"github.com/mcpsup/mcpsup/events"
)

// sinkQueue hands events to the host's sink, in order, one at a time, off
// the loop goroutine (grpc-go's CallbackSerializer: an unbounded FIFO
// drained by one goroutine). The goroutine runs only while events wait, so
// an idle supervisor holds none. Because the loop never waits for the sink,
// a sink may call any method of the supervisor, Close and Detach included.
type sinkQueue struct {
	sink   events.Sink // nil: events are discarded
	logger *slog.Logger
	server string

	mu      sync.Mutex
	idle    *sync.Cond // broadcast when a callback returns or the queue empties
	queue   []events.Event
	running bool   // a goroutine is delivering
	begun   uint64 // callbacks begun so far
	current uint64 // the callback running (its number in begun), 0 for none
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
		q.begun++
		q.current = q.begun
		q.mu.Unlock()
		q.deliver(e)
		q.mu.Lock()
		q.current = 0
		q.idle.Broadcast()
	}
	q.queue = nil // drop the drained backing array
	q.running = false
	q.idle.Broadcast()
	q.mu.Unlock()
}

// deliver hands e to the sink. A sink that panics (a bug, or a typed nil
// pointer) must not take the connection down with it: the panic is logged
// and the event dropped.
func (q *sinkQueue) deliver(e events.Event) {
	defer func() {
		if r := recover(); r != nil {
			q.logger.Error("mcpsup: the events sink panicked; event dropped", "server", q.server, "kind", e.Kind, "seq", e.Seq, "panic", r)
		}
	}()
	q.sink.Emit(e)
}

// mark returns the number of callbacks begun so far, for drain.
func (q *sinkQueue) mark() uint64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.begun
}

// drain waits until every event pushed so far has been delivered and the
// delivering goroutine has ended, with one exception: it never waits for a
// callback that had begun when mark was taken (mark's callers take it on
// entry). That callback may be the caller itself, a sink calling Close; the
// events behind it are then delivered once it returns, and the goroutine
// ends after them.
func (q *sinkQueue) drain(mark uint64) {
	q.mu.Lock()
	for q.running && (q.current == 0 || q.current > mark) {
		q.idle.Wait()
	}
	running := q.running
	q.mu.Unlock()
	if !running {
		q.done.Wait()
	}
}
