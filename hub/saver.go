package hub

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/mcpsup/mcpsup/supervisor"
)

// saver writes resume states to the Store off the supervisors' goroutines:
// the writes of one server one at a time, in order, the latest only (a
// state queued replaces the one still waiting); those of different servers
// at once, so that one slow server's writes delay no other's, and the last
// writes of many servers (Close) take one store timeout, not one each. A
// goroutine runs per server only while its writes wait.
type saver struct {
	store   Store
	timeout time.Duration
	failed  func(op, server string, err error)

	mu      sync.Mutex
	servers map[string]*queue // servers whose writes wait or run
	idle    chan struct{}     // closed while no write waits or runs
	errs    []*StoreError     // not yet returned by a flush
}

// queue is one server's writes: the one running and the next.
type queue struct {
	curOp string        // the running write's op: "save" or "delete" ("" when none)
	next  *write        // waiting; nil when none
	done  chan struct{} // closed once no write of the server waits or runs
}

// write is one queued store write: a save of rs, or a delete when rs is
// nil; through lease (fenced) when it is not nil, else through the Store.
// It runs bounded by the store timeout and by ctx.
type write struct {
	rs    *supervisor.ResumeState
	lease Lease
	ctx   context.Context
}

// put queues a save of rs (nil: a delete) for server, fenced by lease when
// it is not nil, bounded by ctx as well as by the store timeout.
func (s *saver) put(ctx context.Context, server string, rs *supervisor.ResumeState, lease Lease) {
	if s.store == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	w := &write{rs: rs, lease: lease, ctx: ctx}
	if q := s.servers[server]; q != nil {
		q.next = w
		return
	}
	if s.servers == nil {
		s.servers = map[string]*queue{}
	}
	if len(s.servers) == 0 {
		s.idle = make(chan struct{})
	}
	q := &queue{next: w, done: make(chan struct{})}
	s.servers[server] = q
	go s.run(server, q)
}

// run does server's writes until none is left.
func (s *saver) run(server string, q *queue) {
	for {
		s.mu.Lock()
		w := q.next
		if w == nil {
			delete(s.servers, server)
			close(q.done)
			if len(s.servers) == 0 {
				close(s.idle)
			}
			s.mu.Unlock()
			return
		}
		q.next = nil
		op := w.op()
		q.curOp = op
		s.mu.Unlock()

		ctx, cancel := context.WithTimeout(w.ctx, s.timeout)
		var err error
		switch {
		case w.rs == nil && w.lease != nil:
			err = w.lease.Delete(ctx)
		case w.rs == nil:
			err = s.store.Delete(ctx, server)
		case w.lease != nil:
			err = w.lease.Save(ctx, w.rs)
		default:
			err = s.store.Save(ctx, server, w.rs)
		}
		cancel()
		var se *StoreError
		if err != nil {
			var ok bool
			if se, ok = errors.AsType[*StoreError](err); !ok || se.Server != server {
				se = &StoreError{Op: op, Server: server, Err: err}
			}
		}
		// In one step, so that a flush finds the write running or its error.
		s.mu.Lock()
		q.curOp = ""
		if se != nil {
			s.errs = append(s.errs, se)
		}
		s.mu.Unlock()
		if se != nil {
			s.failed(op, server, se)
		}
	}
}

// op names the write: "save" or "delete".
func (w write) op() string {
	if w.rs == nil {
		return "delete"
	}
	return "save"
}

// flush waits until every queued write of server ("": of every server) is
// done, or ctx ends, and returns the write errors of server not returned
// before, joined, each a *StoreError. When ctx ends first, each of server's
// writes not done yet is one more *StoreError wrapping ctx's error (the
// write itself still runs, or waits its turn, bounded by its own context).
func (s *saver) flush(ctx context.Context, server string) error {
	var errs []error
	if !s.wait(ctx, server) {
		errs = s.unfinished(server, ctx.Err())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	kept := s.errs[:0]
	for _, se := range s.errs {
		if server == "" || se.Server == server {
			errs = append(errs, se)
		} else {
			kept = append(kept, se)
		}
	}
	s.errs = kept
	return errors.Join(errs...)
}

// wait waits until every queued write of server ("": of every server) is
// done; false when ctx ended first.
func (s *saver) wait(ctx context.Context, server string) bool {
	s.mu.Lock()
	var done chan struct{}
	switch q := s.servers[server]; {
	case server == "" && len(s.servers) > 0:
		done = s.idle
	case server != "" && q != nil:
		done = q.done
	}
	s.mu.Unlock()
	if done == nil {
		return true
	}
	select {
	case <-done:
		return true
	case <-ctx.Done():
		return false
	}
}

// unfinished returns a *StoreError for each write of server ("": of every
// server) running or waiting, wrapping err.
func (s *saver) unfinished(server string, err error) []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	cause := fmt.Errorf("not done when the wait ended: %w", err)
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(s.servers)) {
		if server != "" && name != server {
			continue
		}
		q := s.servers[name]
		if q.curOp != "" {
			errs = append(errs, &StoreError{Op: q.curOp, Server: name, Err: cause})
		}
		if q.next != nil {
			errs = append(errs, &StoreError{Op: q.next.op(), Server: name, Err: cause})
		}
	}
	return errs
}
