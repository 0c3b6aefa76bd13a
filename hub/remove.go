package hub

import (
	"context"
	"maps"
	"slices"
	"sync"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/supervisor"
)

// Leave says what Remove does with the server-side session.
type Leave uint8

const (
	// EndSession closes the supervisor (DELETE ends the server-side
	// session) and deletes the stored resume state.
	EndSession Leave = iota
	// KeepSession detaches the supervisor (no DELETE) and saves its resume
	// state, so that a later Add of the same name resumes it.
	KeepSession
)

// Remove takes the server out of the hub: its items leave the merged
// catalog, its calls in flight are canceled, its session is ended or kept
// as leave says. It returns once the supervisor stopped and the store was
// written (fenced, then the lease released), or ctx ended. Errors: the
// server's store errors joined, each a *StoreError (also an event), one
// more wrapping ctx's error per write not done then (it still runs, within
// Config.StoreTimeout); or a *ServerError wrapping ErrUnknownServer. Until
// it returns, an Add of the name is ErrDuplicate.
func (h *Hub) Remove(ctx context.Context, name string, leave Leave) error {
	h.mu.Lock()
	e := h.servers[name]
	delete(h.servers, name)
	if e != nil {
		h.notifyLocked()
	}
	h.mu.Unlock()
	if e == nil {
		return &ServerError{Server: name, Err: ErrUnknownServer}
	}
	defer func() {
		h.mu.Lock()
		h.taken.free(name)
		h.mu.Unlock()
	}()
	last := h.leave(e, leave)
	h.emit(events.Event{Kind: KindServerRemoved, Server: name})
	last(context.Background()) // within its own StoreTimeout, also past ctx
	err := h.saves.flush(ctx, name)
	h.release(context.Background(), e)
	return err
}

// leave stops one server and returns its last store write, for the caller
// to run under its deadline.
func (h *Hub) leave(e *entry, leave Leave) (last func(context.Context)) {
	e.mu.Lock()
	e.gone = true
	e.mu.Unlock()
	e.stop()
	if e.leaseDone != nil {
		<-e.leaseDone // the term no longer changes
	}
	sup, lease := e.term()
	h.updateCatalog(e, supervisor.Catalog{}, true)
	if leave == KeepSession {
		_ = sup.Detach()
	} else {
		_ = sup.Close()
	}
	if e.leaseDone != nil && lease == nil {
		return func(context.Context) {} // standby: the state is the holder's
	}
	var rs *supervisor.ResumeState // nil: a delete
	if leave == KeepSession {
		rs = sup.ResumeState()
	}
	return func(ctx context.Context) { h.saves.put(ctx, e.name, rs, lease) }
}

func (h *Hub) release(ctx context.Context, e *entry) {
	if _, lease := e.term(); lease != nil {
		h.releaseLease(ctx, e.name, lease)
	}
}

// Close stops every server, ending their server-side sessions (DELETE),
// and deletes their stored resume states; Detach keeps both. Each stops
// every supervisor at once, then runs every last write at once, then every
// lease's release, under one deadline Config.StoreTimeout away. The error
// joins the store's errors, each a *StoreError (also an event), one more
// wrapping context.DeadlineExceeded per write not done by the deadline.
// Only the first call acts.
func (h *Hub) Close() error { return h.stopAll(EndSession) }

// Detach stops every server without ending their sessions and saves each
// resume state, for the next run to resume without `initialize`; see Close.
func (h *Hub) Detach() error { return h.stopAll(KeepSession) }

func (h *Hub) stopAll(leave Leave) error {
	h.mu.Lock()
	if h.life.Err() != nil {
		h.mu.Unlock()
		return nil
	}
	h.end()
	all := slices.Collect(maps.Values(h.servers))
	h.servers = map[string]*entry{}
	h.notifyLocked()
	h.mu.Unlock()
	h.workers.Wait()

	// At once: a stdio server's stop may take its grace periods.
	lasts := make([]func(context.Context), len(all))
	var wg sync.WaitGroup
	for i, e := range all {
		wg.Go(func() { lasts[i] = h.leave(e, leave) })
	}
	wg.Wait()

	ctx, cancel := context.WithTimeout(context.Background(), h.cfg.StoreTimeout)
	defer cancel()
	for _, last := range lasts {
		last(ctx)
	}
	err := h.saves.flush(ctx, "")
	for _, e := range all {
		wg.Go(func() { h.release(ctx, e) })
	}
	wg.Wait()
	return err
}
