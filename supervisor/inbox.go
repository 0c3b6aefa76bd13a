package supervisor

import (
	"sync"

	"github.com/mcpsup/mcpsup/events"
)

// input is one fact for the loop, which takes inputs one at a time in
// arrival order.
type input func(s *Supervisor)

func emit(e events.Event) input { return func(s *Supervisor) { s.emitEvent(e) } }

// newInbox is the loop's queue of inputs, closed until Start.
func newInbox(s *Supervisor) *serial[input] {
	return newSerial(func(in input) {
		in(s)
		s.flushEvents()
	}, false)
}

// serial takes the items pushed to it, in order, one at a time, on a
// goroutine that runs only while items wait (grpc-go's CallbackSerializer).
// Safe for concurrent use.
type serial[T any] struct {
	take    func(T)
	mu      sync.Mutex
	idle    *sync.Cond // broadcast when the goroutine ends
	queue   []T
	open    bool // pushes are taken
	running bool // a goroutine takes the queue
	done    sync.WaitGroup
}

func newSerial[T any](take func(T), open bool) *serial[T] {
	q := &serial[T]{take: take, open: open}
	q.idle = sync.NewCond(&q.mu)
	return q
}

// push queues items, starting the goroutine if none runs, and reports
// whether q was open to take them. It never blocks on take.
func (q *serial[T]) push(items ...T) bool {
	q.mu.Lock()
	if !q.open {
		q.mu.Unlock()
		return false
	}
	q.queue = append(q.queue, items...)
	start := !q.running && len(q.queue) > 0
	if start {
		q.running = true
		q.done.Add(1)
	}
	q.mu.Unlock()
	if start {
		go q.run()
	}
	return true
}

func (q *serial[T]) run() {
	defer q.done.Done()
	q.mu.Lock()
	for len(q.queue) > 0 {
		it := q.queue[0]
		q.queue[0] = *new(T)
		q.queue = q.queue[1:]
		q.mu.Unlock()
		q.take(it)
		q.mu.Lock()
	}
	q.queue, q.running = nil, false // drop the drained backing array
	q.idle.Broadcast()
	q.mu.Unlock()
}

func (q *serial[T]) start() {
	q.mu.Lock()
	q.open = true
	q.mu.Unlock()
}

// wait returns once everything pushed was taken and the goroutine ended;
// with close, later pushes are refused first.
func (q *serial[T]) wait(close bool) {
	q.mu.Lock()
	q.open = q.open && !close
	for q.running {
		q.idle.Wait()
	}
	q.mu.Unlock()
	q.done.Wait()
}
