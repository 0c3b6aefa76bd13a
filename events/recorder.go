package events

import "sync"

// Recorder is a [Sink] that keeps every event in order, for tests and
// debugging. The zero value is ready to use; it is safe for concurrent use.
// It grows without bound: do not leave one attached to a long-lived
// connection.
type Recorder struct {
	mu     sync.Mutex
	events []Event
}

// Emit appends e.
func (r *Recorder) Emit(e Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

// Events returns a copy of the events recorded so far, oldest first.
func (r *Recorder) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Event, len(r.events))
	copy(out, r.events)
	return out
}

// Len returns the number of events recorded so far.
func (r *Recorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.events)
}

// Reset forgets every recorded event.
func (r *Recorder) Reset() {
	r.mu.Lock()
	r.events = nil
	r.mu.Unlock()
}
