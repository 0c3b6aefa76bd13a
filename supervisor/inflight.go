package supervisor

import (
	"slices"
	"sync"
)

// inflight holds what ends each host call in flight (its canceler), by the
// session they run on, so that a released session (after releaseGrace) and
// Close end them; a second one holds the commands' (Supervisor.cmdContext).
// It replaces a context per held session and a context.AfterFunc per call:
// an idle supervisor holds no context tree for its calls, and a call
// registers without allocating. Safe for concurrent use.
type inflight struct {
	mu     sync.Mutex
	closed bool
	next   uint64
	calls  []flight
}

// flight is one call in flight on session h (nil for a command).
type flight struct {
	id  uint64
	h   *held
	end canceler
}

// canceler ends one call: a context.WithCancel's cancel (as a cancelFunc)
// or the call's own *callClock, each held without an allocation, where a
// method value would take one.
type canceler interface{ cancel() }

// cancelFunc is a cancel function as a canceler.
type cancelFunc func()

func (f cancelFunc) cancel() { f() }

// join registers a call on h (nil: one of no session, a command or a
// server request's handler, ended only by close), ended by end, and returns
// its id for leave.
// On a released session or after close, end runs at once and the id is 0.
func (f *inflight) join(h *held, end canceler) uint64 {
	f.mu.Lock()
	if f.closed || (h != nil && h.released) {
		f.mu.Unlock()
		end.cancel()
		return 0
	}
	f.next++
	id := f.next
	f.calls = append(f.calls, flight{id: id, h: h, end: end})
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
	var ends []canceler
	f.calls = slices.DeleteFunc(f.calls, func(c flight) bool {
		if c.h == h {
			ends = append(ends, c.end)
			return true
		}
		return false
	})
	f.mu.Unlock()
	for _, end := range ends {
		end.cancel()
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
		c.end.cancel()
	}
}
