package supervisor

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/mcpsup/mcpsup/httpsession"
)

// callClock is the context of one call: its parent's values, done when the
// parent is (until detach), or, for a call bounded by CallTimeout, when the
// timeout passes without progress (Err context.DeadlineExceeded: a timeout
// verdict); each notifications/progress of its token starts the timeout
// over, up to the ceiling. Derived contexts register through AfterFunc, so
// the timeout reaches them as DeadlineExceeded. Safe for concurrent use.
type callClock struct {
	context.Context                       // the parent: values and its own end
	ex              httpsession.Exchanges // the call's exchanges (httpsession.WithExchange)

	clock   clockwork.Clock
	timeout time.Duration
	ceiling time.Time

	mu         sync.Mutex
	expiry     time.Time
	timer      clockwork.Timer
	done       chan struct{}
	err        error
	stopParent func() bool
	detached   atomic.Bool
	after      []*func() // run once on end
}

// newCallClock returns the clock of a call on parent; timeout 0: the
// caller's deadline bounds the call. A timed clock's parent has no
// deadline (boundCall): Deadline, the parent's, reports none.
func newCallClock(parent context.Context, clock clockwork.Clock, timeout, ceiling time.Duration) *callClock {
	c := &callClock{Context: parent, clock: clock, timeout: timeout, done: make(chan struct{})}
	if timeout > 0 {
		now := clock.Now()
		c.ceiling = now.Add(ceiling)
		c.expiry = now.Add(min(timeout, ceiling))
		c.timer = clock.AfterFunc(c.expiry.Sub(now), func() { c.end(context.DeadlineExceeded) })
	}
	c.stopParent = context.AfterFunc(parent, c.finish)
	return c
}

// finish ends the call with the parent's error; once detached, releases it.
func (c *callClock) finish() {
	if c.detached.Load() {
		c.release()
		return
	}
	c.end(c.Context.Err())
}

// detach unties the clock from its parent: the caller's cancel as it
// returns would cut the answer's stream, and the connection with it.
func (c *callClock) detach() {
	c.detached.Store(true)
	c.stopParent()
}

func (c *callClock) Done() <-chan struct{} { return c.done }

// Value answers the wire layer's key with the call's exchanges.
func (c *callClock) Value(key any) any {
	if v, ok := c.ex.Value(key); ok {
		return v
	}
	return c.Context.Value(key)
}

func (c *callClock) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// end ends the call with err, once.
func (c *callClock) end(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	close(c.done)
	after := c.after
	c.after = nil
	c.mu.Unlock()
	for _, f := range after {
		go (*f)()
	}
}

// AfterFunc calls f in its own goroutine once the clock is done, as
// context.AfterFunc does (the context package calls it holding a lock).
func (c *callClock) AfterFunc(f func()) (stop func() bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		go f()
		return func() bool { return false }
	}
	p := &f
	c.after = append(c.after, p)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		n := len(c.after)
		c.after = slices.DeleteFunc(c.after, func(q *func()) bool { return q == p })
		return len(c.after) < n
	}
}

func (c *callClock) progressed() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil || c.timer == nil {
		return
	}
	now := c.clock.Now()
	c.expiry = now.Add(min(c.timeout, c.ceiling.Sub(now)))
	c.timer.Reset(c.expiry.Sub(now))
}

func (c *callClock) cancel() { c.end(context.Canceled) }

// release ends the clock, then stops its timer (a racing progress finds it
// ended).
func (c *callClock) release() {
	c.end(context.Canceled)
	stopAll(c.timer)
	c.stopParent()
}

// progressCalls holds the bounded calls by progressKey. A token "MUST be
// unique across all active requests" (MCP 2025-11-25 basic/utilities/
// progress); a host's two calls in flight that share one are both
// extended by its progress, which cannot say which it is of. The zero
// value is ready; safe for concurrent use.
type progressCalls struct {
	mu    sync.Mutex
	calls map[string][]*callClock
}

func (p *progressCalls) add(key string, c *callClock) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.calls == nil {
		p.calls = make(map[string][]*callClock)
	}
	p.calls[key] = append(p.calls[key], c)
}

func (p *progressCalls) remove(key string, c *callClock) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if cs := slices.DeleteFunc(p.calls[key], func(o *callClock) bool { return o == c }); len(cs) > 0 {
		p.calls[key] = cs
	} else {
		delete(p.calls, key)
	}
}

// of returns the calls of key.
func (p *progressCalls) of(key string) []*callClock {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.calls[key])
}

// progressKey is a progress token (a string or a number, MCP progress) as
// a map key; a number sent as 7 comes back as 7.0: keyed by float64.
func progressKey(token any) (string, bool) {
	switch t := token.(type) {
	case nil:
		return "", false
	case int:
		token = float64(t)
	case int64:
		token = float64(t)
	}
	return fmt.Sprintf("%T:%v", token, token), true
}

// progressed extends the calls of token.
func (p *progressCalls) progressed(token any) {
	if key, ok := progressKey(token); ok {
		for _, c := range p.of(key) {
			c.progressed()
		}
	}
}

// boundCall returns the clock of a call and its release: bounded by the
// caller's deadline, or else by CallTimeout, extended by token's progress.
func (s *Supervisor) boundCall(ctx context.Context, token any) (*callClock, func()) {
	timeout := s.cfg.Limits.CallTimeout
	if _, ok := ctx.Deadline(); ok {
		timeout = 0
	}
	c := newCallClock(ctx, s.cfg.Observe.Clock, timeout, s.cfg.Limits.CallTimeoutCeiling)
	key, ok := progressKey(token)
	if !ok || timeout == 0 {
		return c, c.finish // detached by then: the release
	}
	s.progress.add(key, c)
	return c, func() {
		s.progress.remove(key, c)
		c.release()
	}
}
