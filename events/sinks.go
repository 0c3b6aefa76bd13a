package events

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"sync"
)

// Multi returns a [Sink] that emits each event to every non-nil sink in
// order. It is as safe for concurrent use as its sinks are.
func Multi(sinks ...Sink) Sink {
	sinks = slices.DeleteFunc(slices.Clone(sinks), func(s Sink) bool { return s == nil })
	return SinkFunc(func(e Event) {
		for _, s := range sinks {
			s.Emit(e)
		}
	})
}

// Subscription is a [Sink] that delivers events on a buffered channel and
// never blocks the emitter: with the buffer full an event is dropped and
// counted, and the next delivered event carries the count ([Event.Dropped]).
// It is safe for concurrent use.
type Subscription struct {
	ch chan Event

	mu      sync.Mutex
	closed  bool
	pending uint64 // drops not yet reported on a delivered event
	dropped uint64 // drops in total
}

// NewSubscription returns a subscription whose channel buffers up to buffer
// events; a buffer below 1 is taken as 1.
func NewSubscription(buffer int) *Subscription {
	return &Subscription{ch: make(chan Event, max(buffer, 1))}
}

// Emit delivers e without blocking, or drops it (after Close too) and counts
// the drop.
func (s *Subscription) Emit(e Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		s.dropped++
		return
	}
	e.Dropped += s.pending
	select {
	case s.ch <- e:
		s.pending = 0
	default:
		s.pending++
		s.dropped++
	}
}

// C returns the channel events are delivered on. It is closed by Close,
// after the events buffered so far.
func (s *Subscription) C() <-chan Event { return s.ch }

// Dropped returns the number of events dropped so far.
func (s *Subscription) Dropped() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dropped
}

// Close closes the channel; buffered events can still be read, later Emits
// are dropped. Closing twice is a no-op.
func (s *Subscription) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		close(s.ch)
	}
}

// JSONLines is a [Sink] that writes each event as one line of its JSON form.
// It keeps the first error for [JSONLines.Err]: an event that cannot be
// marshalled is skipped; after a write error it stops writing. It does not
// redact, close or flush. It is safe for concurrent use; lines never
// interleave.
type JSONLines struct {
	mu     sync.Mutex
	w      io.Writer
	err    error
	broken bool // a write failed: stop writing
	n      uint64
}

// NewJSONLines returns a JSON-lines sink writing to w.
func NewJSONLines(w io.Writer) *JSONLines { return &JSONLines{w: w} }

// Emit writes e as one line.
func (j *JSONLines) Emit(e Event) {
	b, merr := e.MarshalJSON()
	j.mu.Lock()
	defer j.mu.Unlock()
	if merr != nil {
		j.err = cmp.Or(j.err, fmt.Errorf("events: marshal event %d of %q: %w", e.Seq, e.Server, merr))
		return
	}
	if j.broken {
		return
	}
	if _, err := j.w.Write(append(b, '\n')); err != nil {
		j.broken = true
		j.err = cmp.Or(j.err, fmt.Errorf("events: write: %w", err))
		return
	}
	j.n++
}

// Err returns the first error met, or nil.
func (j *JSONLines) Err() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.err
}

// Written returns the number of lines written.
func (j *JSONLines) Written() uint64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.n
}
