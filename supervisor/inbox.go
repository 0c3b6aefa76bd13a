package supervisor

import (
	"sync"

	"github.com/mcpsup/mcpsup/events"
)

// input is one fact for the loop goroutine, which takes inputs one at a
// time in arrival order (Supervisor.post): a command's result, a timer, a
// host request, a session's report.
type input func(s *Supervisor)

// emit is the input of a fact that is an event and nothing more.
func emit(e events.Event) input { return func(s *Supervisor) { s.emitEvent(e) } }

// inbox is the loop's queue of inputs. The loop runs only while inputs
// wait: the push that finds none running tells its caller to run one, and
// the loop ends once the queue is empty. At most one runs at a time, each
// taking over the loop state through the inbox's lock.
type inbox struct {
	mu      sync.Mutex
	idle    *sync.Cond // broadcast when the loop ends
	queue   []input
	open    bool // Start opened it
	ended   bool // the stop ended it: inputs are refused
	running bool // a loop runs
}

func newInbox() *inbox {
	b := &inbox{}
	b.idle = sync.NewCond(&b.mu)
	return b
}

// push queues in and reports whether it was taken, and whether no loop
// ran (the caller must run one). Refused before start and after end.
func (b *inbox) push(in input) (taken, start bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.open || b.ended {
		return false, false
	}
	b.queue = append(b.queue, in)
	start = !b.running
	b.running = true
	return true, start
}

// next returns the next input, or ok false when none waits: the loop ends.
func (b *inbox) next() (in input, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.queue) == 0 {
		b.queue = b.queue[:0]
		b.running = false
		b.idle.Broadcast()
		return nil, false
	}
	in = b.queue[0]
	b.queue[0] = nil
	b.queue = b.queue[1:]
	return in, true
}

// start opens the inbox.
func (b *inbox) start() {
	b.mu.Lock()
	b.open = true
	b.mu.Unlock()
}

// end refuses later inputs and waits for the loop to take the queued ones
// and end; the caller then owns the loop state.
func (b *inbox) end() {
	b.mu.Lock()
	b.ended = true
	for b.running {
		b.idle.Wait()
	}
	b.mu.Unlock()
}
