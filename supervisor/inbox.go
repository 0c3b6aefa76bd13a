package supervisor

import "sync"

// inbox is the loop's queue of inputs. The loop goroutine runs only while
// inputs wait: posting to an idle inbox starts it, and it ends once the
// queue is empty, so an idle supervisor holds no goroutine of its own. At
// most one runs at a time, and each takes over the loop state from the one
// before through the inbox's lock, so the loop state stays owned by "the
// loop goroutine".
type inbox struct {
	mu      sync.Mutex
	idle    *sync.Cond // broadcast when the loop goroutine ends
	queue   []input
	open    bool // Start opened it
	ended   bool // the stop ended it: inputs are refused
	running bool // a loop goroutine runs
	done    sync.WaitGroup
}

func newInbox() *inbox {
	b := &inbox{}
	b.idle = sync.NewCond(&b.mu)
	return b
}

// push queues in and reports whether it was taken, starting run on a new
// goroutine when none runs. It refuses inputs before start and after end.
func (b *inbox) push(in input, run func()) bool { return b.pushFrom(in, run, false) }

// pushLast is push for a goroutine whose last act it is (a command posting
// its result): when no loop goroutine runs, the caller runs the loop itself
// instead of starting one. Its stack has grown already, where a new
// goroutine's grows again through the loop's frames (most of the loop's
// CPU in a connection's setup), and no goroutine is started and woken.
func (b *inbox) pushLast(in input, run func()) bool { return b.pushFrom(in, run, true) }

func (b *inbox) pushFrom(in input, run func(), inline bool) bool {
	b.mu.Lock()
	if !b.open || b.ended {
		b.mu.Unlock()
		return false
	}
	b.queue = append(b.queue, in)
	start := !b.running
	if start {
		b.running = true
		b.done.Add(1)
	}
	b.mu.Unlock()
	switch {
	case start && inline:
		defer b.done.Done()
		run()
	case start:
		go func() {
			defer b.done.Done()
			run()
		}()
	}
	return true
}

// next returns the next input, or false (the loop goroutine then ends)
// when none waits.
func (b *inbox) next() (input, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.queue) == 0 {
		b.queue = b.queue[:0]
		b.running = false
		b.idle.Broadcast()
		return nil, false
	}
	in := b.queue[0]
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

// end refuses every later input and waits until the loop goroutine has
// taken the inputs queued before and ended. Afterwards the caller owns the
// loop state.
func (b *inbox) end() {
	b.mu.Lock()
	b.ended = true
	for b.running {
		b.idle.Wait()
	}
	b.mu.Unlock()
	b.done.Wait()
}
