package supervisor

import "sync"

// inbox is the loop's queue of inputs. The loop runs only while inputs
// wait: the push that finds no loop running tells its caller to run one,
// and the loop ends once the queue is empty, so an idle supervisor holds no
// goroutine of its own. At most one loop runs at a time, and each takes
// over the loop state from the one before through the inbox's lock, so the
// loop state stays owned by "the loop goroutine".
//
// A loop may also hand a command to its own goroutine (handOff): the first
// one it issues while taking an input; the input's other commands start on
// goroutines of their own. The handed command runs once the loop ends, or
// at once on a goroutine of its own when inputs wait (next). The setup of
// a connection (start, dial, its result, discovery, its result) then runs
// on one goroutine whose stack grows once, where a goroutine per command
// and per loop run started small and grew its stack again, a cost bare
// go-sdk, which connects on its caller's goroutine, does not pay.
type inbox struct {
	mu      sync.Mutex
	idle    *sync.Cond // broadcast when the loop ends
	queue   []input
	open    bool // Start opened it
	ended   bool // the stop ended it: inputs are refused
	running bool // a loop runs
	// handed is the command the running loop handed to its goroutine, nil
	// when none: next returns it, to run after the loop, or at once on a
	// goroutine of its own when more inputs wait.
	handed func() input
}

func newInbox() *inbox {
	b := &inbox{}
	b.idle = sync.NewCond(&b.mu)
	return b
}

// push queues in and reports whether it was taken, and whether no loop
// ran: then the caller must run one (on a goroutine of its own, or on
// its own goroutine when this is its last act). It refuses inputs before
// start and after end.
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

// handOff gives cmd to the running loop's goroutine, and reports whether
// it took it: false when no loop runs or one command is handed already (the
// caller then starts cmd on a goroutine of its own).
func (b *inbox) handOff(cmd func() input) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.running || b.handed != nil {
		return false
	}
	b.handed = cmd
	return true
}

// next returns the next input, and ok; when none waits the loop ends (ok
// false). cmd is the command handed to the loop, if any: run it after the
// loop when ok is false, at once on a goroutine of its own when ok is true
// (inputs wait: the command does not wait for them).
func (b *inbox) next() (in input, cmd func() input, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	cmd, b.handed = b.handed, nil
	if len(b.queue) == 0 {
		b.queue = b.queue[:0]
		b.running = false
		b.idle.Broadcast()
		return nil, cmd, false
	}
	in = b.queue[0]
	b.queue[0] = nil
	b.queue = b.queue[1:]
	return in, cmd, true
}

// start opens the inbox.
func (b *inbox) start() {
	b.mu.Lock()
	b.open = true
	b.mu.Unlock()
}

// end refuses every later input and waits until the loop has taken the
// inputs queued before and ended. Afterwards the caller owns the loop
// state. A command the last loop handed off may still run (Close waits for
// the commands apart).
func (b *inbox) end() {
	b.mu.Lock()
	b.ended = true
	for b.running {
		b.idle.Wait()
	}
	b.mu.Unlock()
}
