package hub

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mcpsup/mcpsup/supervisor"
)

// saver writes resume states to the Store off the supervisors' goroutines,
// one write at a time, the latest per server only (a state queued replaces
// the one still waiting). Its goroutine runs only while writes wait.
type saver struct {
	store   Store
	timeout time.Duration
	failed  func(op, server string, err error)

	mu      sync.Mutex
	pending map[string]write
	order   []string
	running bool
	current string        // the server whose write runs ("" when none)
	curOp   string        // its op: "save" or "delete"
	idle    chan struct{} // closed while no write waits or runs
	errs    []*StoreError // not yet returned by a flush
}

// write is one queued store write: a save of rs, or a delete when rs is
// nil; through lease (fenced) when it is not nil, else through the Store.
type write struct {
	rs    *supervisor.ResumeState
	lease Lease
}

// put queues a save of rs (nil: a delete) for server, fenced by lease when
// it is not nil.
func (s *saver) put(server string, rs *supervisor.ResumeState, lease Lease) {
	if s.store == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending == nil {
		s.pending = map[string]write{}
	}
	if _, queued := s.pending[server]; !queued {
		s.order = append(s.order, server)
	}
	s.pending[server] = write{rs: rs, lease: lease}
	if !s.running {
		s.running = true
		s.idle = make(chan struct{})
		go s.run()
	}
}

func (s *saver) run() {
	for {
		s.mu.Lock()
		if len(s.order) == 0 {
			s.running = false
			close(s.idle)
			s.mu.Unlock()
			return
		}
		server := s.order[0]
		s.order = s.order[1:]
		w := s.pending[server]
		delete(s.pending, server)
		op := w.op()
		s.current, s.curOp = server, op
		s.mu.Unlock()

		ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
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
		s.current, s.curOp = "", ""
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

// flush waits until every queued write is done, or ctx ends, and returns
// the write errors of server ("": of every server) not returned before,
// joined, each a *StoreError. When ctx ends first, each of server's writes
// not done yet is one more *StoreError wrapping ctx's error (the write
// itself still runs, or waits its turn, bounded by the store timeout).
func (s *saver) flush(ctx context.Context, server string) error {
	s.mu.Lock()
	idle := s.idle
	running := s.running
	s.mu.Unlock()
	var errs []error
	if running {
		select {
		case <-idle:
		case <-ctx.Done():
			errs = s.unfinished(server, ctx.Err())
		}
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

// unfinished returns a *StoreError for each write of server ("": of every
// server) running or waiting, wrapping err.
func (s *saver) unfinished(server string, err error) []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	cause := fmt.Errorf("not done when the wait ended: %w", err)
	var errs []error
	if s.current != "" && (server == "" || s.current == server) {
		errs = append(errs, &StoreError{Op: s.curOp, Server: s.current, Err: cause})
	}
	for _, name := range s.order {
		if server == "" || name == server {
			errs = append(errs, &StoreError{Op: s.pending[name].op(), Server: name, Err: cause})
		}
	}
	return errs
}
