package main

import (
	"context"
	"sync"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/supervisor"
)

// trail keeps the events of one supervisor so a story can wait for one and
// count transitions. It is an events.Sink, safe for concurrent use.
type trail struct {
	mu      sync.Mutex
	evs     []events.Event
	changed chan struct{} // closed and replaced on every event
}

func newTrail() *trail { return &trail{changed: make(chan struct{})} }

func (t *trail) Emit(e events.Event) {
	t.mu.Lock()
	t.evs = append(t.evs, e)
	close(t.changed)
	t.changed = make(chan struct{})
	t.mu.Unlock()
}

// wait returns the first event of kind, waiting for it until ctx ends.
func (t *trail) wait(ctx context.Context, kind events.Kind) (events.Event, error) {
	for {
		t.mu.Lock()
		for _, e := range t.evs {
			if e.Kind == kind {
				t.mu.Unlock()
				return e, nil
			}
		}
		ch := t.changed
		t.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return events.Event{}, ctx.Err()
		}
	}
}

// reached waits until the last transition recorded announces state: events
// reach the sink on their own goroutine, in order, so once a story saw the
// state, this is when every earlier event is recorded.
func (t *trail) reached(ctx context.Context, state supervisor.State) error {
	for {
		t.mu.Lock()
		last := supervisor.State("")
		for _, e := range t.evs {
			if e.Kind == events.KindTransition {
				last = e.To
			}
		}
		ch := t.changed
		t.mu.Unlock()
		if last == state {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// count returns the number of events that keep selects.
func (t *trail) count(keep func(events.Event) bool) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, e := range t.evs {
		if keep(e) {
			n++
		}
	}
	return n
}

// entered counts the transitions into state.
func (t *trail) entered(state supervisor.State) int {
	return t.count(func(e events.Event) bool {
		return e.Kind == events.KindTransition && e.To == state && e.From != state
	})
}

// kind counts the events of a kind.
func (t *trail) kind(kind events.Kind) int {
	return t.count(func(e events.Event) bool { return e.Kind == kind })
}

// probeReport returns the last probe report, or false.
func (t *trail) probeReport() (events.Event, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := len(t.evs) - 1; i >= 0; i-- {
		if t.evs[i].Kind == events.KindProbeReport {
			return t.evs[i], true
		}
	}
	return events.Event{}, false
}

// details returns the summaries of the events of a kind, in order.
func (t *trail) details(kind events.Kind) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	for _, e := range t.evs {
		if e.Kind == kind {
			out = append(out, events.Summary(e))
		}
	}
	return out
}
