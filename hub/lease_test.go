package hub_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/hub"
	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/supervisor"
)

// memLeaser is a Leaser in memory on a clock: one lease per server, a
// fence per server, and a switch that makes it unreachable.
type memLeaser struct {
	hub.FileStore
	clock clockwork.Clock

	mu       sync.Mutex
	holder   map[string]string // server -> holder of the live lease
	expires  map[string]time.Time
	fence    map[string]string
	token    uint64
	states   map[string]*supervisor.ResumeState
	down     bool
	renews   chan time.Time // each renewal attempt, at its clock time
	acquires chan time.Time // each acquisition attempt, at its clock time
}

var errDown = errors.New("memLeaser: unreachable")

func newMemLeaser(clock clockwork.Clock) *memLeaser {
	return &memLeaser{clock: clock, holder: map[string]string{}, expires: map[string]time.Time{},
		fence: map[string]string{}, states: map[string]*supervisor.ResumeState{},
		renews: make(chan time.Time, 64), acquires: make(chan time.Time, 64)}
}

func (m *memLeaser) setDown(down bool) {
	m.mu.Lock()
	m.down = down
	m.mu.Unlock()
}

func (m *memLeaser) Load(_ context.Context, server string) (*supervisor.ResumeState, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return nil, errDown
	}
	if rs := m.states[server]; rs != nil {
		return rs, nil
	}
	return nil, &hub.StoreError{Op: "load", Server: server, Err: hub.ErrNotFound}
}

func (m *memLeaser) live(server string) bool {
	return m.holder[server] != "" && m.clock.Now().Before(m.expires[server])
}

func (m *memLeaser) Acquire(_ context.Context, server string, ttl time.Duration) (hub.Lease, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	select {
	case m.acquires <- m.clock.Now():
	default:
	}
	if m.down {
		return nil, errDown
	}
	if m.live(server) {
		return nil, &hub.LeaseHeldError{Server: server, Remaining: m.expires[server].Sub(m.clock.Now())}
	}
	m.token++
	id := fmt.Sprint(m.token)
	m.holder[server], m.expires[server], m.fence[server] = id, m.clock.Now().Add(ttl), id
	return &memLease{m: m, server: server, id: id, token: m.token, ttl: ttl}, nil
}

type memLease struct {
	m      *memLeaser
	server string
	id     string
	token  uint64
	ttl    time.Duration
}

func (l *memLease) Token() uint64 { return l.token }

func (l *memLease) Renew(context.Context) (bool, error) {
	m := l.m
	m.mu.Lock()
	defer m.mu.Unlock()
	m.renews <- m.clock.Now()
	if m.down {
		return false, errDown
	}
	if m.fence[l.server] != l.id {
		return false, hub.ErrLeaseLost
	}
	m.holder[l.server], m.expires[l.server] = l.id, m.clock.Now().Add(l.ttl)
	return false, nil
}

func (l *memLease) write(rs *supervisor.ResumeState) error {
	m := l.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return errDown
	}
	if m.fence[l.server] != l.id {
		return hub.ErrLeaseLost
	}
	m.states[l.server] = rs
	return nil
}

func (l *memLease) Save(_ context.Context, rs *supervisor.ResumeState) error { return l.write(rs) }
func (l *memLease) Delete(context.Context) error                             { return l.write(nil) }

func (l *memLease) Release(context.Context) error {
	m := l.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return errDown
	}
	if m.holder[l.server] == l.id {
		m.holder[l.server] = ""
	}
	return nil
}

func TestLeaseNotRenewedEndsTheHoldBeforeTheTTL(t *testing.T) {
	const ttl = 3 * time.Second
	clock := clockwork.NewFakeClock()
	f := newFixture(t, map[string]mcptest.Options{"search": {Tools: 1}})
	leaser := newMemLeaser(clock)
	cfg := f.config(leaser)
	cfg.Supervisor.Observe.Clock = clock
	cfg.Lease = hub.LeaseConfig{TTL: ttl}
	start := clock.Now()
	h := f.hub(cfg) // acquires at start, then ready
	require.Equal(t, hub.LeaseHeld, h.Health()[0].Lease)
	srv := f.servers["search"]

	// The leaser becomes unreachable. The holder renews every TTL/3 and,
	// after a failure, every TTL/12; it keeps serving its live session
	// until TTL*3/4 after the last renewal accepted.
	leaser.setDown(true)
	var attempts []time.Duration
	renewal := func() {
		t.Helper()
		select {
		case at := <-leaser.renews:
			attempts = append(attempts, at.Sub(start))
		case <-f.ctx.Done():
			t.Fatalf("no renewal; those before at %v", attempts)
		}
		res, err := h.CallTool(f.ctx, &mcp.CallToolParams{Name: "search__" + mcptest.RecordTool, Arguments: map[string]any{"id": fmt.Sprint(len(attempts))}})
		require.NoError(t, err, "the holder keeps serving while its lease lives")
		require.False(t, res.IsError)
	}
	// The loop works from absolute times on the clock, so an Advance that
	// comes before it waits again is not lost.
	clock.Advance(ttl / 3)
	renewal()
	for range 4 {
		clock.Advance(ttl / 12)
		renewal()
	}
	clock.Advance(ttl / 12)
	_, err := f.rec.WaitFor(f.ctx, func(evs []events.Event) bool {
		for _, ev := range evs {
			if ev.Kind == hub.KindLeaseLost {
				return true
			}
		}
		return false
	})
	require.NoError(t, err)
	require.Equal(t, []time.Duration{ttl / 3, ttl/3 + ttl/12, ttl/3 + 2*ttl/12, ttl/3 + 3*ttl/12, ttl/3 + 4*ttl/12}, attempts)
	lost := f.eventsOf(hub.KindLeaseLost)[0]
	require.Equal(t, ttl*3/4, lost.Time.Sub(start), "the hold ends at TTL*3/4, before the TTL")
	require.Equal(t, hub.ReasonHoldEnded, lost.Reason)
	require.Empty(t, lost.Detail, "no foreign text")
	require.Equal(t, hub.LeaseStandby, h.Health()[0].Lease)
	require.Empty(t, h.MCPTools())
	require.Zero(t, srv.Log().CountVerb("DELETE"), "detached, not ended")
	require.Equal(t, supervisor.Idle, h.Health()[0].State)

	// Its last save was tried, fenced, and failed with the leaser down.
	_, err = f.rec.WaitFor(f.ctx, func(evs []events.Event) bool {
		for _, ev := range evs {
			if ev.Kind == hub.KindStoreFailed && ev.Op == "save" {
				return true
			}
		}
		return false
	})
	require.NoError(t, err)

	// The leaser is back. Its own lease, whose release failed, lives until
	// the TTL: the replica's try TTL/10 after the loss is refused, the next
	// comes when the lease ends; it acquires and resumes the state saved
	// when the session opened.
	leaser.setDown(false)
	clock.Advance(ttl / 4)
	if err := h.WaitReady(f.ctx, hub.All); err != nil {
		for _, ev := range f.rec.Events() {
			t.Logf("%s %s %s %s %s", ev.Kind, ev.Op, ev.To, ev.Time.Sub(start), ev.Detail)
		}
		t.Fatal(err)
	}
	acq := f.eventsOf(hub.KindLeaseAcquired)
	require.Len(t, acq, 2)
	require.Equal(t, 1, srv.Log().Count("initialize"), "resumed, not initialized again")
	require.Equal(t, []uint64{1, 2}, []uint64{acq[0].Token, acq[1].Token})
	require.Empty(t, acq[0].SessionID, "the first term starts fresh")
	require.Equal(t, events.HashSessionID(h.Supervisor("search").ResumeState().SessionID), acq[1].SessionID, "the second resumes")
	added := f.eventsOf(hub.KindServerAdded)
	require.Equal(t, []events.Event{{Kind: hub.KindServerAdded, Server: "search", Op: "standby"}}, added)
}

// A renewal refused because another replica acquired the lease ends the
// hold at once: lease-lost says why by its Reason, the leaser's error in
// Detail (DESIGN.md section 8).
func TestLeaseTakenByAnotherEndsTheHold(t *testing.T) {
	const ttl = 3 * time.Second
	clock := clockwork.NewFakeClock()
	f := newFixture(t, map[string]mcptest.Options{"search": {Tools: 1}})
	leaser := newMemLeaser(clock)
	cfg := f.config(leaser)
	cfg.Supervisor.Observe.Clock = clock
	cfg.Lease = hub.LeaseConfig{TTL: ttl}
	h := f.hub(cfg)
	require.Equal(t, hub.LeaseHeld, h.Health()[0].Lease)

	leaser.mu.Lock()
	leaser.fence["search"] = "other"
	leaser.mu.Unlock()
	clock.Advance(ttl / 3)
	<-leaser.renews
	_, err := f.rec.WaitFor(f.ctx, func(evs []events.Event) bool {
		return slices.ContainsFunc(evs, func(ev events.Event) bool { return ev.Kind == hub.KindLeaseLost })
	})
	require.NoError(t, err)
	lost := f.eventsOf(hub.KindLeaseLost)[0]
	require.Equal(t, hub.ReasonLeaseTaken, lost.Reason)
	require.Equal(t, hub.ErrLeaseLost.Error(), lost.Detail, "the leaser's error")
	require.Equal(t, ttl/3, lost.Time.Sub(f.eventsOf(hub.KindLeaseAcquired)[0].Time), "at the refusal, not at TTL*3/4")
}

func TestStandbyRetriesOnABoundedScheduleUntilClose(t *testing.T) {
	const ttl = 10 * time.Second
	clock := clockwork.NewFakeClock()
	f := newFixture(t, map[string]mcptest.Options{"search": {Tools: 1}})
	leaser := newMemLeaser(clock)
	start := clock.Now()
	// Another replica holds the lease for 4s more.
	leaser.holder["search"], leaser.expires["search"], leaser.fence["search"] = "other", start.Add(4*time.Second), "other"
	cfg := f.config(leaser)
	cfg.Supervisor.Observe.Clock = clock
	cfg.Lease = hub.LeaseConfig{TTL: ttl}
	h := hub.New(cfg)
	require.NoError(t, h.Add(f.ctx, hub.ServerConfig{Name: "search", URL: f.servers["search"].URL()}))

	attempt := func() time.Duration {
		t.Helper()
		select {
		case at := <-leaser.acquires:
			return at.Sub(start)
		case <-f.ctx.Done():
			t.Fatal("no acquisition attempt")
			return 0
		}
	}
	require.Equal(t, time.Duration(0), attempt())
	require.Equal(t, hub.LeaseStandby, h.Health()[0].Lease)
	require.Zero(t, f.servers["search"].Log().CountVerb("POST"), "a standby replica sends nothing to the server")
	_, err := h.CallTool(f.ctx, &mcp.CallToolParams{Name: "search__t0"})
	require.ErrorIs(t, err, hub.ErrUnknownName)
	require.Contains(t, err.Error(), "search (idle, lease standby: another replica serves it)", "the error says why the name is unknown here")

	// The next try comes TTL/50 after the holder's lease would end; the
	// leaser is unreachable by then: tries every TTL/10, doubling to TTL.
	leaser.setDown(true)
	var got []time.Duration
	for _, at := range []time.Duration{4*time.Second + ttl/50, 4*time.Second + ttl/50 + ttl/10, 4*time.Second + ttl/50 + 3*ttl/10,
		4*time.Second + ttl/50 + 7*ttl/10, 4*time.Second + ttl/50 + 15*ttl/10, 4*time.Second + ttl/50 + 25*ttl/10} {
		clock.Advance(at - clock.Since(start))
		got = append(got, attempt())
		require.Equal(t, at, got[len(got)-1], "attempts so far at %v", got)
	}
	_, err = f.rec.WaitFor(f.ctx, func(evs []events.Event) bool {
		n := 0
		for _, ev := range evs {
			if ev.Kind == hub.KindStoreFailed && ev.Op == "acquire" {
				n++
			}
		}
		return n == len(got)
	})
	require.NoError(t, err, "each unreachable try is an event")
	require.Zero(t, f.servers["search"].Log().CountVerb("POST"))

	// Close stops the loop (goleak checks that no goroutine is left).
	require.NoError(t, h.Close())
	clock.Advance(2 * ttl)
	select {
	case at := <-leaser.acquires:
		t.Fatalf("an attempt at %v after Close", at.Sub(start))
	default:
	}
}

// nilLeaser lies: its Acquire grants nothing and reports no error.
type nilLeaser struct{ *memLeaser }

func (n nilLeaser) Acquire(context.Context, string, time.Duration) (hub.Lease, error) {
	select {
	case n.acquires <- n.clock.Now():
	default:
	}
	return nil, nil
}

// A Leaser whose Acquire returns neither a lease nor an error broke its
// contract, and the hub took the missing lease for one: the lease loop
// called its Token and the host's process ended on a nil pointer. It is an
// acquisition that failed, a store-failed event naming it, tried again on
// the unreachable leaser's schedule; the server is not served.
func TestLeaserGrantingNoLeaseIsAFailedAcquisition(t *testing.T) {
	const ttl = 10 * time.Second
	clock := clockwork.NewFakeClock()
	f := newFixture(t, map[string]mcptest.Options{"search": {Tools: 1}})
	leaser := nilLeaser{newMemLeaser(clock)}
	cfg := f.config(leaser)
	cfg.Supervisor.Observe.Clock = clock
	cfg.Lease = hub.LeaseConfig{TTL: ttl}
	h := hub.New(cfg)
	t.Cleanup(func() { _ = h.Close() })
	require.NoError(t, h.Add(f.ctx, hub.ServerConfig{Name: "search", URL: f.servers["search"].URL()}))
	start := clock.Now()
	<-leaser.acquires
	ev, err := f.rec.WaitFor(f.ctx, func(evs []events.Event) bool {
		for _, ev := range evs {
			if ev.Kind == hub.KindStoreFailed && ev.Op == "acquire" {
				return true
			}
		}
		return false
	})
	require.NoError(t, err)
	require.NotEmpty(t, ev)
	require.Equal(t, hub.LeaseStandby, h.Health()[0].Lease)
	require.NoError(t, clock.BlockUntilContext(f.ctx, 1))
	clock.Advance(ttl / 10)
	at := <-leaser.acquires
	require.Equal(t, ttl/10, at.Sub(start), "tried again on the unreachable leaser's schedule")
	require.Zero(t, f.servers["search"].Log().CountVerb("POST"))
}

// bothLeaser grants the lease and says, in the same answer, that another
// replica holds it.
type bothLeaser struct{ *memLeaser }

func (b bothLeaser) Acquire(ctx context.Context, server string, ttl time.Duration) (hub.Lease, error) {
	l, err := b.memLeaser.Acquire(ctx, server, ttl)
	if err != nil {
		return nil, err
	}
	return l, &hub.LeaseHeldError{Server: server, Remaining: ttl}
}

// A Leaser whose Acquire returns a lease and an error broke its contract:
// the error decides (the server is not served) and the lease it handed out
// is released, not left held until its TTL runs out.
func TestLeaserGrantingALeaseWithAnErrorHasItReleased(t *testing.T) {
	const ttl = 10 * time.Second
	clock := clockwork.NewFakeClock()
	f := newFixture(t, map[string]mcptest.Options{"search": {Tools: 1}})
	mem := newMemLeaser(clock)
	cfg := f.config(bothLeaser{mem})
	cfg.Supervisor.Observe.Clock = clock
	cfg.Lease = hub.LeaseConfig{TTL: ttl}
	h := hub.New(cfg)
	t.Cleanup(func() { _ = h.Close() })
	require.NoError(t, h.Add(f.ctx, hub.ServerConfig{Name: "search", URL: f.servers["search"].URL()}))
	<-mem.acquires
	require.Eventually(t, func() bool {
		mem.mu.Lock()
		defer mem.mu.Unlock()
		return !mem.live("search")
	}, 10*time.Second, time.Millisecond, "the lease handed out with the error is released")
	require.Equal(t, hub.LeaseStandby, h.Health()[0].Lease)
	require.Zero(t, f.servers["search"].Log().CountVerb("POST"))
}
