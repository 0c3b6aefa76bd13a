package hub

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcpsup/mcpsup/supervisor"
)

// Leaser is a Store shared by replicas that also grants leases: the right
// to serve one server, held by one replica at a time. Safe for concurrent
// use.
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

// LeaseConfig sets the lease rule, used when Config.Store implements
// Leaser; the zero value is ready to use. Per server: acquire, then load
// and start; renew every TTL/3 (a failed renewal again after TTL/12); with
// no renewal accepted TTL*3/4 after the last accepted one was sent, or one
// refused, detach, leave the merged catalog, save fenced, release
// (KindLeaseLost). Standing by, try again TTL/50 after the holder's lease
// would end; an unreachable leaser after TTL/10 doubling to TTL. Every
// request of a held server passes a gate on the hub's clock
// (*HoldEndedError once the hold ended). docs/DESIGN.md section 8.
type LeaseConfig struct {
	// TTL is the lease's time to live at the leaser. Default 15s; at
	// least 300ms.
	TTL time.Duration
}

// MinLeaseTTL is the shortest LeaseConfig.TTL the hub uses.
const MinLeaseTTL = 300 * time.Millisecond

func (c LeaseConfig) ttl() time.Duration {
	switch {
	case c.TTL <= 0:
		return 15 * time.Second
	case c.TTL < MinLeaseTTL:
		return MinLeaseTTL
	}
	return c.TTL
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
