package supervisor

import (
	"context"
	"slices"
	"sync"
)

// inflight holds the cancel functions of the host calls in flight, by the
// session they run on, so that a released session (after releaseGrace) and
// Close end them; a second one holds the commands' (Supervisor.cmdContext). It replaces a context per held session and a
// context.AfterFunc per call: an idle supervisor holds no context tree for
// its calls, and a call registers without allocating. Safe for concurrent
// use.
type inflight struct {
	mu     sync.Mutex
	closed bool
	next   uint64
	calls  []flight
}

// flight is one call in flight on session h (nil for a command).
type flight struct {
	id     uint64
	h      *held
	cancel context.CancelFunc
}

// join registers a call on h (nil: a command), ended by cancel, and returns its id for
// leave. On a released session or after close, cancel runs at once and
// the id is 0.
func (f *inflight) join(h *held, cancel context.CancelFunc) uint64 {
	f.mu.Lock()
	if f.closed || (h != nil && h.released) {
		f.mu.Unlock()
		cancel()
		return 0
	}
	f.next++
	id := f.next
	f.calls = append(f.calls, flight{id: id, h: h, cancel: cancel})
	f.mu.Unlock()
	return id
}

// leave forgets the call of id (0: none).
func (f *inflight) leave(id uint64) {
	if id == 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if i := slices.IndexFunc(f.calls, func(c flight) bool { return c.id == id }); i >= 0 {
		last := len(f.calls) - 1
		f.calls[i] = f.calls[last]
		f.calls[last] = flight{}
		f.calls = f.calls[:last]
	}
	if len(f.calls) == 0 && cap(f.calls) > maxKeptFlights {
		f.calls = nil // a burst of calls is over: keep no large slice
	}
}

// maxKeptFlights is the capacity of the calls slice kept once it is empty.
const maxKeptFlights = 16

// release ends the calls on h, and those that join it later.
func (f *inflight) release(h *held) {
	f.mu.Lock()
	h.released = true
	var ends []context.CancelFunc
	f.calls = slices.DeleteFunc(f.calls, func(c flight) bool {
		if c.h == h {
			ends = append(ends, c.cancel)
			return true
		}
		return false
	})
	f.mu.Unlock()
	for _, end := range ends {
		end()
	}
}

// close ends every call in flight and those that join later.
func (f *inflight) close() {
	f.mu.Lock()
	f.closed = true
	calls := f.calls
	f.calls = nil
	f.mu.Unlock()
	for _, c := range calls {
		c.cancel()
	}
}
