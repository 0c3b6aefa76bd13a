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

// saver is the one writer of resume states (docs/DESIGN.md section 8): one
// server's writes in order, a write queued replacing the one still
// waiting; different servers' at once. A goroutine runs per server only
// while its writes wait.
type saver struct {
	store   Store
	timeout time.Duration
	failed  func(op, server string, err error)

	mu     sync.Mutex
	queues map[string]*queue // servers whose writes wait or run
	errs   []*StoreError     // not yet returned by a flush
}

// queue is one server's writes: the one running and the next.
type queue struct {
	running, next *write
	done          chan struct{} // closed once neither is left
}

// write is a save of rs (nil: a delete), fenced by lease when not nil,
// bounded by ctx and the store timeout.
type write struct {
	rs    *supervisor.ResumeState
	lease Lease
	ctx   context.Context
}

func (w *write) op() string {
	if w.rs == nil {
		return "delete"
	}
	return "save"
}

func (w *write) do(s *saver, server string) error {
	ctx, cancel := context.WithTimeout(w.ctx, s.timeout)
	defer cancel()
	switch {
	case w.lease != nil && w.rs == nil:
		return w.lease.Delete(ctx)
	case w.lease != nil:
		return w.lease.Save(ctx, w.rs)
	case w.rs == nil:
		return s.store.Delete(ctx, server)
	}
	return s.store.Save(ctx, server, w.rs)
}

// put queues a write of server's state.
func (s *saver) put(ctx context.Context, server string, rs *supervisor.ResumeState, lease Lease) {
	if s.store == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	w := &write{rs: rs, lease: lease, ctx: ctx}
	if q := s.queues[server]; q != nil {
		q.next = w
		return
	}
	if s.queues == nil {
		s.queues = map[string]*queue{}
	}
	q := &queue{next: w, done: make(chan struct{})}
	s.queues[server] = q
	go s.run(server, q)
}

// run does server's writes until none is left.
func (s *saver) run(server string, q *queue) {
	for {
		s.mu.Lock()
		w := q.next
		q.running, q.next = w, nil
		if w == nil {
			delete(s.queues, server)
			close(q.done)
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		var se *StoreError
		if err := w.do(s, server); err != nil {
			var ok bool
			if se, ok = errors.AsType[*StoreError](err); !ok || se.Server != server {
				se = &StoreError{Op: w.op(), Server: server, Err: err}
			}
		}
		// In one step, so that a flush finds the write running or its error.
		s.mu.Lock()
		q.running = nil
		if se != nil {
			s.errs = append(s.errs, se)
		}
		s.mu.Unlock()
		if se != nil {
			s.failed(w.op(), server, se)
		}
	}
}

// flush waits until no write of server ("": any) is left, or ctx ends,
// and returns its write errors not returned before, joined, each a
// *StoreError; when ctx ends first, one more per write not done, wrapping
// ctx's error (the write goes on, bounded by its own context).
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

// wait waits until no write of server ("": any) is left; false when ctx
// ended first.
func (s *saver) wait(ctx context.Context, server string) bool {
	for {
		s.mu.Lock()
		q := s.queues[server]
		if server == "" {
			for _, q = range s.queues {
				break
			}
		}
		s.mu.Unlock()
		if q == nil {
			return true
		}
		select {
		case <-q.done:
		case <-ctx.Done():
			return false
		}
	}
}

// unfinished returns a *StoreError wrapping err per write of server ("":
// any) running or waiting.
func (s *saver) unfinished(server string, err error) []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	cause := fmt.Errorf("not done when the wait ended: %w", err)
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(s.queues)) {
		if server != "" && name != server {
			continue
		}
		for _, w := range []*write{s.queues[name].running, s.queues[name].next} {
			if w != nil {
				errs = append(errs, &StoreError{Op: w.op(), Server: name, Err: cause})
			}
		}
	}
	return errs
}
