package hub

import (
	"context"
	"errors"
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
		s.mu.Unlock()

		ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
		op := "save"
		var err error
		switch {
		case w.rs == nil && w.lease != nil:
			op = "delete"
			err = w.lease.Delete(ctx)
		case w.rs == nil:
			op = "delete"
			err = s.store.Delete(ctx, server)
		case w.lease != nil:
			err = w.lease.Save(ctx, w.rs)
		default:
			err = s.store.Save(ctx, server, w.rs)
		}
		cancel()
		if err != nil {
			se, ok := errors.AsType[*StoreError](err)
			if !ok || se.Server != server {
				se = &StoreError{Op: op, Server: server, Err: err}
			}
			s.failed(op, server, se)
			s.mu.Lock()
			s.errs = append(s.errs, se)
			s.mu.Unlock()
		}
	}
}

// flush waits until every queued write is done, or ctx ends, and returns
// the write errors of server ("": of every server) not returned before,
// joined.
func (s *saver) flush(ctx context.Context, server string) error {
	s.mu.Lock()
	idle := s.idle
	running := s.running
	s.mu.Unlock()
	if running {
		select {
		case <-idle:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
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
