package supervisor

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/httpsession"
)

// A call the supervisor bounds with Config.Limits.CallTimeout (its caller's context
// has no deadline) runs on a callClock: its timeout starts over at each
// progress notification for the call (MCP notifications/progress carrying
// the request's progressToken), never past Config.Limits.CallTimeoutCeiling from
// the call's start. A long-running tool that streams progress is not cut
// off; one that goes silent still is.

// callClock is the context of one call: its parent's values, and done when
// the parent is (until [callClock.detach]), or, for a bounded call, when the
// timeout passes without progress (Err: context.DeadlineExceeded, as a
// context.WithTimeout gives, so the verdict is timeout); a bounded call has
// no fixed Deadline. Safe for concurrent use.
//
// Contexts derived from it (net/http derives one per request) register
// through its AfterFunc method, as they do with the context package's own
// types; without it, context.WithCancel starts a goroutine per derived
// context to watch Done.
type callClock struct {
	context.Context // the parent: values and its own end
	// ex collects the call's exchanges (httpsession.WithExchange, in the same
	// allocation).
	ex httpsession.Exchanges

	clock   clockwork.Clock
	timeout time.Duration
	ceiling time.Time // the hard end: start + Config.Limits.CallTimeoutCeiling

	mu         sync.Mutex
	expiry     time.Time // when the timer fires
	timer      clockwork.Timer
	done       chan struct{}
	err        error
	stopParent func() bool
	// finish is the clock's one function value, so that a call builds one
	// closure, not two: the parent's end calls it while the call runs (the
	// call ends with the parent's error); once detached, it is the
	// clock's release (see [callClock.release]).
	finish   func()
	detached atomic.Bool
	// after holds the functions AfterFunc registered, run once on end;
	// afterBuf is its first backing array, so a call's one or two derived
	// contexts cost no allocation for it.
	after    []afterFunc
	afterBuf [2]afterFunc
	afterIDs uint64
}

type afterFunc struct {
	id uint64
	f  func()
}

// newCallClock returns the clock of a call on parent; timeout 0 sets no
// timer of its own (the caller's deadline bounds the call: see
// [callClock.Deadline]).
func newCallClock(parent context.Context, clock clockwork.Clock, timeout, ceiling time.Duration) *callClock {
	c := &callClock{Context: parent, clock: clock, timeout: timeout, done: make(chan struct{})}
	c.after = c.afterBuf[:0]
	c.finish = func() {
		if c.detached.Load() {
			c.release()
			return
		}
		c.end(c.Context.Err())
	}
	if timeout > 0 {
		now := clock.Now()
		c.ceiling = now.Add(ceiling)
		c.expiry = minTime(now.Add(timeout), c.ceiling)
		c.timer = clock.AfterFunc(c.expiry.Sub(now), func() { c.end(context.DeadlineExceeded) })
	}
	if parent.Done() == nil {
		c.stopParent = neverStarted // the parent never ends: nothing to watch
	} else {
		c.stopParent = context.AfterFunc(parent, c.finish)
	}
	return c
}

func neverStarted() bool { return false }

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// Deadline is the parent's for a clock without a timer; a timed clock has
// no fixed one.
func (c *callClock) Deadline() (time.Time, bool) {
	if c.timer == nil {
		return c.Context.Deadline()
	}
	return time.Time{}, false
}

// detach makes the clock end no longer with its parent: once its call
// returned, the caller's cancel (a deferred one, at once) would cut the
// answer's stream before its end, and with it the connection, which
// net/http reuses only after EOF. release ends it instead.
func (c *callClock) detach() {
	c.detached.Store(true)
	c.stopParent()
}
func (c *callClock) Done() <-chan struct{} { return c.done }

// Value answers the wire layer's key with the call's exchanges, any other
// with the parent's value.
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

// end ends the call's context with err, once, and starts the functions
// AfterFunc registered.
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
	for _, a := range after {
		go a.f()
	}
}

// AfterFunc arranges to call f in its own goroutine once the clock is done,
// as context.AfterFunc does; stop reports whether it kept f from running.
// The context package calls it while holding the derived context's lock, so
// f never runs on the caller's goroutine.
func (c *callClock) AfterFunc(f func()) (stop func() bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		go f()
		return neverStarted
	}
	c.afterIDs++
	id := c.afterIDs
	c.after = append(c.after, afterFunc{id: id, f: f})
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		for i, a := range c.after {
			if a.id == id {
				c.after = append(c.after[:i], c.after[i+1:]...)
				return true
			}
		}
		return false
	}
}

// progressed starts the timeout over, up to the ceiling.
func (c *callClock) progressed() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil || c.timer == nil {
		return
	}
	now := c.clock.Now()
	c.expiry = minTime(now.Add(c.timeout), c.ceiling)
	c.timer.Reset(c.expiry.Sub(now))
}

// cancel ends the call's context with context.Canceled, as a
// context.WithCancel's cancel does: a released session or Close ends the
// call with it.
func (c *callClock) cancel() { c.end(context.Canceled) }

// release stops the timers once the call returned.
func (c *callClock) release() {
	if c.timer != nil {
		c.timer.Stop()
	}
	c.stopParent()
	c.end(context.Canceled)
}

// progressCalls holds the bounded calls that carry a progress token, by
// token, for the progress notifications to find them.
type progressCalls struct {
	mu    sync.Mutex
	calls map[string][]*callClock
}

// progressKey is a progress token as a map key. A token is a string or a
// number (MCP spec, progress); a number sent as 7 comes back decoded as 7.0,
// so numbers are keyed by their float64 value.
func progressKey(token any) (string, bool) {
	switch t := token.(type) {
	case nil:
		return "", false
	case string:
		return "s:" + t, true
	case int:
		return fmt.Sprintf("n:%v", float64(t)), true
	case int64:
		return fmt.Sprintf("n:%v", float64(t)), true
	case float64:
		return fmt.Sprintf("n:%v", t), true
	}
	return fmt.Sprintf("%T:%v", token, token), true
}

func (p *progressCalls) add(key string, c *callClock) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.calls == nil {
		p.calls = map[string][]*callClock{}
	}
	p.calls[key] = append(p.calls[key], c)
}

func (p *progressCalls) remove(key string, c *callClock) {
	p.mu.Lock()
	defer p.mu.Unlock()
	list := p.calls[key]
	for i, o := range list {
		if o == c {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(p.calls, key)
	} else {
		p.calls[key] = list
	}
}

// progressed extends the calls of token.
func (p *progressCalls) progressed(token any) {
	key, ok := progressKey(token)
	if !ok {
		return
	}
	p.mu.Lock()
	list := append([]*callClock(nil), p.calls[key]...)
	p.mu.Unlock()
	for _, c := range list {
		c.progressed()
	}
}

// boundCall returns the context a call whose caller gave no deadline runs
// on (Config.Limits.CallTimeout, extended by progress for token up to
// Config.Limits.CallTimeoutCeiling), and the function that releases it.
func (s *Supervisor) boundCall(ctx context.Context, token any) (*callClock, func()) {
	c := newCallClock(ctx, s.cfg.Observe.Clock, s.cfg.Limits.CallTimeout, s.cfg.Limits.CallTimeoutCeiling)
	key, ok := progressKey(token)
	if !ok {
		return c, c.finish // detached by then: the release
	}
	s.progress.add(key, c)
	return c, func() {
		s.progress.remove(key, c)
		c.release()
	}
}

// progressThen returns a progress handler that extends the calls of the
// notification's token, then calls the host's handler, if any.
func progressThen(p *progressCalls, host func(context.Context, *mcp.ProgressNotificationClientRequest)) func(context.Context, *mcp.ProgressNotificationClientRequest) {
	return func(ctx context.Context, r *mcp.ProgressNotificationClientRequest) {
		if r != nil && r.Params != nil {
			p.progressed(r.Params.ProgressToken)
		}
		if host != nil {
			host(ctx, r)
		}
	}
}
