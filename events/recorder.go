package events

import (
	"context"
	"slices"
	"sync"
)

// Recorder is a [Sink] that keeps every event in order, without bound, for
// tests and debugging. The zero value is ready to use; it is safe for
// concurrent use.
type Recorder struct {
	mu      sync.Mutex
	events  []Event
	changed chan struct{} // closed and replaced by every Emit; nil until asked for
}

// Emit appends e.
func (r *Recorder) Emit(e Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	if r.changed != nil {
		close(r.changed)
		r.changed = nil
	}
	r.mu.Unlock()
}

// Events returns a copy of the events recorded so far, oldest first.
func (r *Recorder) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// WaitFor blocks until cond holds for the events recorded so far (a copy,
// oldest first), checking again after every Emit, and returns those events;
// ctx.Err() with the last events checked if ctx ends first.
func (r *Recorder) WaitFor(ctx context.Context, cond func([]Event) bool) ([]Event, error) {
	for {
		r.mu.Lock()
		evs := slices.Clone(r.events)
		if r.changed == nil {
			r.changed = make(chan struct{})
		}
		ch := r.changed
		r.mu.Unlock()
		if cond(evs) {
			return evs, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return evs, ctx.Err()
		}
	}
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
