package hub_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/hub"
	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/supervisor"
)

// slowServers is how many servers the shutdown tests stop at once: more
// than the hub's default MaxStarting (8), the pool Close once stopped
// them in.
const slowServers = 24

// barrierStore is a Store (and, leasing, a Leaser) whose writes and lease
// releases, once armed, each wait until every one of its kind is in flight
// at once, or their ctx ends (then they fail with its error): a store that
// answers only to concurrent callers, as a dead one answers nobody. It
// records the deadline of each call and the most calls of a kind in flight
// at once. Before it is armed, calls pass and each write is sent on saved.
type barrierStore struct {
	n     int
	saved chan struct{}

	mu        sync.Mutex
	armed     bool
	inflight  map[string]int
	most      map[string]int
	deadlines map[string][]time.Time
	all       map[string]chan struct{}
	tokens    uint64
}

func newBarrierStore(n int) *barrierStore {
	return &barrierStore{n: n, saved: make(chan struct{}, 4*n), inflight: map[string]int{}, most: map[string]int{},
		deadlines: map[string][]time.Time{}, all: map[string]chan struct{}{}}
}

func (s *barrierStore) arm() {
	s.mu.Lock()
	s.armed = true
	s.mu.Unlock()
}

// pass waits at the barrier of op once armed.
func (s *barrierStore) pass(ctx context.Context, op string) error {
	s.mu.Lock()
	if !s.armed {
		s.mu.Unlock()
		if op == "write" {
			s.saved <- struct{}{}
		}
		return nil
	}
	d, _ := ctx.Deadline()
	s.deadlines[op] = append(s.deadlines[op], d)
	if s.all[op] == nil {
		s.all[op] = make(chan struct{})
	}
	all := s.all[op]
	s.inflight[op]++
	s.most[op] = max(s.most[op], s.inflight[op])
	if s.inflight[op] == s.n {
		close(all)
	}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inflight[op]--
		s.mu.Unlock()
	}()
	select {
	case <-all:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// seen returns the most calls of op in flight at once, and their deadlines.
func (s *barrierStore) seen(op string) (most int, deadlines []time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.most[op], append([]time.Time(nil), s.deadlines[op]...)
}

func (s *barrierStore) Load(_ context.Context, server string) (*supervisor.ResumeState, error) {
	return nil, &hub.StoreError{Op: "load", Server: server, Err: hub.ErrNotFound}
}

func (s *barrierStore) Save(ctx context.Context, _ string, _ *supervisor.ResumeState) error {
	return s.pass(ctx, "write")
}

func (s *barrierStore) Delete(ctx context.Context, _ string) error { return s.pass(ctx, "write") }

// leasingBarrierStore grants every lease at once.
type leasingBarrierStore struct{ *barrierStore }

func (s leasingBarrierStore) Acquire(_ context.Context, _ string, _ time.Duration) (hub.Lease, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens++
	return &barrierLease{s: s.barrierStore, token: s.tokens}, nil
}

type barrierLease struct {
	s     *barrierStore
	token uint64
}

func (l *barrierLease) Token() uint64                       { return l.token }
func (l *barrierLease) Renew(context.Context) (bool, error) { return false, nil }
func (l *barrierLease) Save(ctx context.Context, _ *supervisor.ResumeState) error {
	return l.s.pass(ctx, "write")
}
func (l *barrierLease) Delete(ctx context.Context) error  { return l.s.pass(ctx, "write") }
func (l *barrierLease) Release(ctx context.Context) error { return l.s.pass(ctx, "release") }

// Close with a Store that answers slowly took one StoreTimeout per
// server: the last writes ran one after another, each with a timeout of its
// own, and each lease was released after the one before. Now every server's
// last write runs at once, then every release, all under one deadline:
// the barrier store answers only when all 24 are in flight together, and
// every call saw the same deadline.
func TestCloseWritesEveryServerAtOnceUnderOneDeadline(t *testing.T) {
	for _, leasing := range []bool{false, true} {
		t.Run(fmt.Sprintf("leasing=%v", leasing), func(t *testing.T) {
			f := newFixture(t, map[string]mcptest.Options{"search": {Tools: 1}})
			bs := newBarrierStore(slowServers)
			var store hub.Store = bs
			if leasing {
				store = leasingBarrierStore{bs}
			}
			cfg := f.config(store)
			// Long enough that a call left waiting fails the test by the
			// counts below, not by a race with the clock.
			cfg.StoreTimeout = 5 * time.Second
			h := hub.New(cfg)
			defer h.Close()
			for i := range slowServers {
				require.NoError(t, h.Add(f.ctx, hub.ServerConfig{Name: fmt.Sprintf("s%02d", i), URL: f.servers["search"].URL()}))
			}
			require.NoError(t, h.WaitReady(f.ctx, hub.All))
			if leasing {
				for _, hl := range h.Health() {
					require.Equal(t, hub.LeaseHeld, hl.Lease, hl.Server)
				}
			}
			for range slowServers { // each session's state, saved once ready
				<-bs.saved
			}

			bs.arm()
			require.NoError(t, h.Close())
			ops := []string{"write"}
			if leasing {
				ops = append(ops, "release")
			}
			var first time.Time
			for _, op := range ops {
				most, deadlines := bs.seen(op)
				require.Equal(t, slowServers, most, "every %s in flight at once", op)
				require.Len(t, deadlines, slowServers)
				if first.IsZero() {
					first = deadlines[0]
				}
				for _, d := range deadlines {
					require.Equal(t, first, d, "one deadline shared by every %s", op)
				}
			}
		})
	}
}
