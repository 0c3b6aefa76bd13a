package hub

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/supervisor"
)

// The hub's lease events (with a Leaser as Store).
const (
	// KindLeaseAcquired: this replica serves the server now. Token is the
	// lease's; SessionID the hash of the session it resumes, "" when fresh.
	KindLeaseAcquired events.Kind = "lease-acquired"
	// KindLeaseLost: this replica stopped serving the server, before the
	// lease ended at the leaser; Reason says why (ReasonLeaseTaken, with the
	// leaser's error as Detail, or ReasonHoldEnded).
	KindLeaseLost events.Kind = "lease-lost"
)

// Why a lease was lost (KindLeaseLost's Reason).
const (
	// ReasonLeaseTaken: the leaser refused a renewal (ErrLeaseLost):
	// another replica acquired the lease.
	ReasonLeaseTaken events.Reason = "lease-taken"
	// ReasonHoldEnded: no renewal was accepted within TTL*3/4 of the last
	// one's sending; the lease ends at the leaser within TTL/4.
	ReasonHoldEnded events.Reason = "hold-ended"
)

// The lease rule's fractions of LeaseConfig.TTL.
const (
	renewDiv        = 3  // renew every TTL/3
	renewRetryDiv   = 12 // a failed renewal again after TTL/12
	acquireSlackDiv = 50 // a held lease tried again TTL/50 after it would end
	acquireMinDiv   = 20 // after losing the lease to another, wait TTL/20
	acquireErrDiv   = 10 // an unreachable leaser: TTL/10, doubling to TTL
)

// holdDeadline is when a hold ends whose last accepted renewal (or
// acquisition) was sent at sent.
func holdDeadline(sent time.Time, ttl time.Duration) time.Time { return sent.Add(ttl * 3 / 4) }

// holdLease is the server's lease loop until it leaves the hub; leave ends
// the last term.
func (h *Hub) holdLease(e *entry) {
	defer close(e.leaseDone)
	ttl := h.cfg.Lease.ttl()
	clock := h.cfg.Supervisor.Observe.Clock
	errWait := ttl / acquireErrDiv
	var retry time.Time // the next try; from absolute times, so a late wake-up waits no more
	for sleepUntil(e.ctx, clock, retry) {
		// An acquisition that takes long leaves a short hold: bound it.
		ctx, cancel := context.WithTimeout(e.ctx, min(h.cfg.StoreTimeout, ttl/4))
		sent := clock.Now()
		lease, err := h.leaser.Acquire(ctx, e.name, ttl)
		cancel()
		if err == nil && lease == nil {
			err = ErrNoLease
		}
		if lease != nil && (err != nil || e.ctx.Err() != nil) { // the error decides
			h.releaseLease(context.Background(), e.name, lease)
		}
		held, isHeld := errors.AsType[*LeaseHeldError](err)
		switch {
		case e.ctx.Err() != nil:
		case isHeld:
			left := cmp.Or(max(held.Remaining, 0), ttl/acquireErrDiv) // unknown: as if unreachable
			retry, errWait = sent.Add(min(left+ttl/acquireSlackDiv, ttl)), ttl/acquireErrDiv
		case err != nil:
			h.storeFailed("acquire", e.name, err)
			retry, errWait = sent.Add(errWait), min(2*errWait, ttl)
		default:
			errWait = ttl / acquireErrDiv
			taken, ended := h.serve(e, lease, sent, ttl)
			retry = ended.Add(errWait)
			if taken {
				retry = ended.Add(ttl / acquireMinDiv)
			}
		}
	}
}

// serve runs one term (DESIGN.md section 8) until the lease is lost,
// returning whether another replica took it and when the hold ended, or
// until the server leaves.
func (h *Hub) serve(e *entry, lease Lease, sent time.Time, ttl time.Duration) (taken bool, ended time.Time) {
	clock := h.cfg.Supervisor.Observe.Clock
	deadline := holdDeadline(sent, ttl)
	gate := &holdGate{server: e.name, clock: clock}
	gate.extend(deadline)
	loadCtx, cancel := context.WithTimeout(e.ctx, min(h.cfg.StoreTimeout, ttl/4))
	rs, err := h.load(loadCtx, e.sc)
	cancel()
	var sup *supervisor.Supervisor
	if err == nil { // else starting fresh would orphan the stored session
		e.mu.Lock()
		rs = cmp.Or(rs, e.last) // the store lost it (an empty restart): this replica's is the best there is
		e.mu.Unlock()
		if sup, err = h.newSupervisor(e, rs, gate); err != nil { // validated at Add: said if it happens
			h.storeFailed("acquire", e.name, err)
		}
	}
	if err != nil {
		h.releaseLease(context.Background(), e.name, lease)
		return false, clock.Now()
	}
	termCtx, endTerm := context.WithCancel(e.ctx)
	defer endTerm()
	standby := e.setTerm(sup, lease, clock.Now())
	_ = standby.Close() // never started: nothing to end
	h.emit(events.Event{Kind: KindLeaseAcquired, Server: e.name, Time: clock.Now(), Token: lease.Token(), SessionID: resumed(rs)})
	h.notify()
	h.queueStart(termCtx, sup)

	next := sent.Add(ttl / renewDiv)
	var why events.Reason
	var refusal string // the leaser's error, when it refused
	for why == "" {
		now := clock.Now()
		switch {
		case !now.Before(deadline):
			why = ReasonHoldEnded
			continue
		case now.Before(next):
			if !sleepUntil(e.ctx, clock, slices.MinFunc([]time.Time{next, deadline}, time.Time.Compare)) {
				return false, now
			}
			continue
		}
		ctx, cancel := context.WithTimeout(e.ctx, min(h.cfg.StoreTimeout, deadline.Sub(now)))
		restored, err := lease.Renew(ctx)
		cancel()
		switch {
		case e.ctx.Err() != nil:
			return false, now
		case err == nil:
			deadline, next = holdDeadline(now, ttl), now.Add(ttl/renewDiv)
			gate.extend(deadline)
			if rs := sup.ResumeState(); restored && rs != nil { // the leaser lost the state with the lease
				h.saves.put(context.Background(), e.name, rs, lease)
			}
		case errors.Is(err, ErrLeaseLost):
			why, refusal, taken = ReasonLeaseTaken, err.Error(), true
		default:
			h.storeFailed("renew", e.name, err)
			next = now.Add(ttl / renewRetryDiv) // from the attempt, as after a success
		}
	}

	// Stop serving first; detached, for the next holder to resume.
	endTerm()
	ended = clock.Now()
	idle, _ := h.newSupervisor(e, nil, nil) // validated when added
	e.setTerm(idle, nil, ended)
	_ = sup.Detach()
	h.updateCatalog(e, supervisor.Catalog{}, true)
	h.emit(events.Event{Kind: KindLeaseLost, Server: e.name, Time: ended, Reason: why, Detail: refusal})
	h.notify()

	last := sup.ResumeState()
	e.mu.Lock()
	e.last = last
	e.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), h.cfg.StoreTimeout)
	defer cancel()
	if last != nil {
		h.saves.put(ctx, e.name, last, lease)
	}
	_ = h.saves.flush(ctx, e.name) // its errors were events
	h.releaseLease(ctx, e.name, lease)
	return taken, ended
}

func (h *Hub) releaseLease(ctx context.Context, server string, lease Lease) {
	ctx, cancel := context.WithTimeout(ctx, h.cfg.StoreTimeout)
	defer cancel()
	if err := lease.Release(ctx); err != nil {
		h.storeFailed("release", server, err)
	}
}

// sleepUntil waits on clock until the time until; false when ctx ended
// first. The clock is read again once the timer exists: a fake clock may
// have moved past until meanwhile.
func sleepUntil(ctx context.Context, clock clockwork.Clock, until time.Time) bool {
	d := until.Sub(clock.Now())
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := clock.NewTimer(d)
	defer t.Stop()
	if !clock.Now().Before(until) {
		return ctx.Err() == nil
	}
	select {
	case <-t.Chan():
		return true
	case <-ctx.Done():
		return false
	}
}

// holdGate passes a term's requests while its hold lasts, on the hub's clock.
type holdGate struct {
	server string
	clock  clockwork.Clock
	until  atomic.Pointer[time.Time] // the hold's end
}

// HoldEndedError is a request refused unsent: this replica's hold on the
// server's lease ended. It wraps ErrLeaseLost.
type HoldEndedError struct {
	Server string
	Ended  time.Time
}

func (e *HoldEndedError) Error() string {
	return fmt.Sprintf("hub: not sent: the lease of %q is no longer held here (the hold ended %v)", e.Server, e.Ended.Format(time.RFC3339Nano))
}

func (e *HoldEndedError) Unwrap() error { return ErrLeaseLost }

func (g *holdGate) extend(until time.Time) { g.until.Store(&until) }

// check is nil while the hold lasts (or without a gate).
func (g *holdGate) check() error {
	if g == nil {
		return nil
	}
	if until := *g.until.Load(); !g.clock.Now().Before(until) {
		return &HoldEndedError{Server: g.server, Ended: until}
	}
	return nil
}

// Leaser is a Store shared by replicas that also grants leases, each the
// right of one replica to serve one server. Safe for concurrent use.
type Leaser interface {
	Store
	// Acquire takes the server's lease for ttl: a *LeaseHeldError when
	// another replica holds it; any other error, the leaser not reached.
	Acquire(ctx context.Context, server string, ttl time.Duration) (Lease, error)
}

// Lease is one replica's hold on one server: its fencing token and the
// writes only the holder may make. Each method is used from one goroutine
// at a time, but Save and Delete may run while Renew does.
type Lease interface {
	// Token is the fencing token: larger than every token of the server's
	// lease handed out before (while the leaser keeps its data).
	Token() uint64
	// Renew extends the lease by its TTL from when the leaser takes the
	// request: ErrLeaseLost when another replica acquired it; any other
	// error, the leaser not reached. restored: the leaser had lost the
	// lease and its data (restarted empty) and took it again.
	Renew(ctx context.Context) (restored bool, err error)
	// Save replaces the server's resume state, fenced: ErrLeaseLost once
	// another replica acquired the lease.
	Save(ctx context.Context, rs *supervisor.ResumeState) error
	// Delete removes the server's resume state, fenced like Save.
	Delete(ctx context.Context) error
	// Release gives the lease up (one no longer held is not an error).
	Release(ctx context.Context) error
}

// Lease errors; test with errors.Is.
var (
	// ErrLeaseHeld: another replica holds the server's lease.
	ErrLeaseHeld = errors.New("hub: lease held by another replica")
	// ErrLeaseLost: a renewal or a fenced write was refused.
	ErrLeaseLost = errors.New("hub: lease lost")
	// ErrNoLease: Acquire returned neither a lease nor an error.
	ErrNoLease = errors.New("hub: Acquire returned neither a lease nor an error")
)

// LeaseHeldError is Acquire's refusal: the server's lease is held by
// another replica for Remaining more (0 when unknown).
type LeaseHeldError struct {
	Server    string
	Remaining time.Duration
}

func (e *LeaseHeldError) Error() string {
	return fmt.Sprintf("hub: lease of %q held by another replica for %v more", e.Server, e.Remaining)
}

func (e *LeaseHeldError) Unwrap() error { return ErrLeaseHeld }

// LeaseConfig sets the lease rule of DESIGN.md section 8, used when
// Config.Store implements Leaser; the zero value is ready to use. The hold
// ends TTL*3/4 after the last accepted renewal was sent (KindLeaseLost);
// requests after it are refused unsent (*HoldEndedError).
type LeaseConfig struct {
	// TTL is the lease's time to live at the leaser. Default 15s; at
	// least 300ms.
	TTL time.Duration
}

// MinLeaseTTL is the shortest LeaseConfig.TTL the hub uses.
const MinLeaseTTL = 300 * time.Millisecond

func (c LeaseConfig) ttl() time.Duration {
	return max(cmp.Or(max(c.TTL, 0), 15*time.Second), MinLeaseTTL)
}

// LeaseState is a server's lease as its Health shows it.
type LeaseState string

const (
	// LeaseNone: the hub's Store grants no leases.
	LeaseNone LeaseState = ""
	// LeaseHeld: this replica holds the lease and serves the server.
	LeaseHeld LeaseState = "held"
	// LeaseStandby: this replica does not hold the lease; it tries to.
	LeaseStandby LeaseState = "standby"
)
