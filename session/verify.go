package session

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/classify"
)

// DefaultVerifyTimeout bounds a verification's Alive when
// VerifyConfig.Timeout is zero.
const DefaultVerifyTimeout = 10 * time.Second

// VerifyConfig configures [Verify]; the zero value is ready.
type VerifyConfig struct {
	// Timeout bounds a verification's Alive. Zero: DefaultVerifyTimeout.
	Timeout time.Duration
	// Clock times the bound; nil: the real clock.
	Clock clockwork.Clock
	// Observe gets a Verified fact after each verification, before a failed
	// one ends the session; it must not block. nil: none.
	Observe func(Fact)
}

// Verify returns s under the two rules by which a request's failure ends a
// session (DESIGN.md section 2). A session-expired answer ends it before the
// request returns (streamable-http.mdx, Session Management: the client "MUST
// start a new session"). A transport failure while its caller waits starts
// one Alive, bounded by Timeout, Status Verifying meanwhile: an answer keeps
// the session ([PingProvesDead]), none ends it (Endable.Fail); one answered
// covers every request sent before it. Close and Detach wait for it. Safe for
// concurrent use.
func Verify(s Endable, cfg VerifyConfig) Endable {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultVerifyTimeout
	}
	if cfg.Clock == nil {
		cfg.Clock = clockwork.NewRealClock()
	}
	if cfg.Observe == nil {
		cfg.Observe = func(Fact) {}
	}
	v := &verified{inner: s, cfg: cfg, change: make(chan struct{})}
	v.life, v.stop = context.WithCancel(context.Background())
	return v
}

// Endable is a Session that a rule outside its transport may end (see
// [Verify]). A Session that embeds an [End] has Fail.
type Endable interface {
	Session
	// Fail ends the session with err unless it has ended (the first cause
	// wins), Done closed before it returns, and reports whether this call
	// ended it.
	Fail(err error) bool
	// AfterEnd runs f once the session has ended (End.AfterEnd).
	AfterEnd(f func())
}

// Verified is the outcome of one verification (see [Verify]): Alive, or
// not with Err, the Alive's error, and the session ends.
type Verified struct {
	Alive bool
	Err   error
}

func (Verified) fact() {}

type verified struct {
	inner Endable
	cfg   VerifyConfig
	life  context.Context // ends on Close or Detach: a running Alive is canceled
	stop  context.CancelFunc
	wg    sync.WaitGroup // the verification running

	mu        sync.Mutex
	verifying bool
	closing   bool          // Close or Detach began: no verification starts
	pings     uint64        // verifications started
	answered  uint64        // the number of the last one answered
	change    chan struct{} // closed at the next change of status
}

// Fail ends the session with err and wakes those waiting on its status;
// it reports whether this call ended it.
func (v *verified) Fail(err error) bool {
	ended := v.inner.Fail(err)
	if ended {
		v.changed()
	}
	return ended
}

func (v *verified) changed() {
	v.mu.Lock()
	v.wake()
	v.mu.Unlock()
}

// wake closes the status channel and makes the next; v.mu is held.
func (v *verified) wake() {
	close(v.change)
	v.change = make(chan struct{})
}

// sent returns the verifications started so far, for a request about to
// go out.
func (v *verified) sent() uint64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.pings
}

// failed applies the two rules to the error of a request sent when
// sent() was seq.
func (v *verified) failed(ctx context.Context, seq uint64, err error) {
	switch classify.Classify(ctx, err).Class {
	case classify.SessionExpired:
		v.Fail(err)
	case classify.Transport:
		v.verify(seq)
	}
}

func (v *verified) verify(seq uint64) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closing || v.inner.Err() != nil || v.verifying || v.answered > seq {
		return
	}
	v.verifying = true
	v.pings++
	v.wake()
	v.wg.Add(1)
	go v.alive(v.pings)
}

// alive runs verification num: one Alive bounded by cfg.Timeout.
func (v *verified) alive(num uint64) {
	defer v.wg.Done()
	cut, err := bounded(v.life, v.cfg.Clock, v.cfg.Timeout, v.inner.Alive)
	if cut {
		err = fmt.Errorf("mcpsup/session: verification: no answer within %s: %w", v.cfg.Timeout, context.DeadlineExceeded)
	}
	ended := v.life.Err() != nil || v.inner.Err() != nil // the session ended meanwhile
	if !ended && err != nil && PingProvesDead(classify.Error(err)) {
		v.cfg.Observe(Verified{Err: err})
		v.Fail(fmt.Errorf("mcpsup/session: verification failed: %w", err))
		return
	}
	if !ended {
		v.cfg.Observe(Verified{Alive: true})
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.verifying = false
	if !ended {
		v.answered = num
		v.wake()
	}
}

func (v *verified) Info() Info { return v.inner.Info() }

func (v *verified) Status() (Status, <-chan struct{}) {
	st, ch := v.inner.Status()
	if st == Ended {
		return Ended, ch
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.verifying {
		return Verifying, v.change
	}
	if st != Live {
		return st, ch
	}
	return Live, v.change
}

func (v *verified) Done() <-chan struct{} { return v.inner.Done() }

// AfterEnd runs f once the session has ended (End.AfterEnd).
func (v *verified) AfterEnd(f func()) { v.inner.AfterEnd(f) }
func (v *verified) Err() error        { return v.inner.Err() }

func (v *verified) Close() error  { return v.finish(v.inner.Close) }
func (v *verified) Detach() error { return v.finish(v.inner.Detach) }

// finish ends the session with end and waits for the verification
// running, which it cancels.
func (v *verified) finish(end func() error) error {
	v.mu.Lock()
	v.closing = true
	v.mu.Unlock()
	v.stop()
	err := end()
	v.wg.Wait()
	v.changed()
	return err
}

// do runs one request under the two rules.
func do[T any](v *verified, ctx context.Context, req func(context.Context) (T, error)) (T, error) {
	seq := v.sent()
	res, err := req(ctx)
	if err != nil {
		v.failed(ctx, seq, err)
	}
	return res, err
}

func list[T any](v *verified, ctx context.Context, cursor string, l func(context.Context, string) ([]T, string, error)) ([]T, string, error) {
	seq := v.sent()
	items, next, err := l(ctx, cursor)
	if err != nil {
		v.failed(ctx, seq, err)
	}
	return items, next, err
}

func (v *verified) ListTools(ctx context.Context, cursor string) ([]*mcp.Tool, string, error) {
	return list(v, ctx, cursor, v.inner.ListTools)
}
func (v *verified) ListResources(ctx context.Context, cursor string) ([]*mcp.Resource, string, error) {
	return list(v, ctx, cursor, v.inner.ListResources)
}
func (v *verified) ListPrompts(ctx context.Context, cursor string) ([]*mcp.Prompt, string, error) {
	return list(v, ctx, cursor, v.inner.ListPrompts)
}
func (v *verified) ListResourceTemplates(ctx context.Context, cursor string) ([]*mcp.ResourceTemplate, string, error) {
	return list(v, ctx, cursor, v.inner.ListResourceTemplates)
}

func (v *verified) CallTool(ctx context.Context, p *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	return do(v, ctx, func(ctx context.Context) (*mcp.CallToolResult, error) { return v.inner.CallTool(ctx, p) })
}
func (v *verified) GetPrompt(ctx context.Context, p *mcp.GetPromptParams) (*mcp.GetPromptResult, error) {
	return do(v, ctx, func(ctx context.Context) (*mcp.GetPromptResult, error) { return v.inner.GetPrompt(ctx, p) })
}
func (v *verified) ReadResource(ctx context.Context, p *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error) {
	return do(v, ctx, func(ctx context.Context) (*mcp.ReadResourceResult, error) { return v.inner.ReadResource(ctx, p) })
}
func (v *verified) Complete(ctx context.Context, p *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	return do(v, ctx, func(ctx context.Context) (*mcp.CompleteResult, error) { return v.inner.Complete(ctx, p) })
}
func (v *verified) Subscribe(ctx context.Context, p *mcp.SubscribeParams) error {
	_, err := do(v, ctx, func(ctx context.Context) (struct{}, error) { return struct{}{}, v.inner.Subscribe(ctx, p) })
	return err
}
func (v *verified) Unsubscribe(ctx context.Context, p *mcp.UnsubscribeParams) error {
	_, err := do(v, ctx, func(ctx context.Context) (struct{}, error) { return struct{}{}, v.inner.Unsubscribe(ctx, p) })
	return err
}

//lint:ignore SA1019 logging/setLevel is deprecated from protocol 2026-07-28 on, and still served by 2025-era servers
func (v *verified) SetLoggingLevel(ctx context.Context, p *mcp.SetLoggingLevelParams) error {
	_, err := do(v, ctx, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, v.inner.SetLoggingLevel(ctx, p)
	})
	return err
}

// Alive is judged as any request (a host's ping); a verification's own
// Alive goes to the inner session, past the rules.
func (v *verified) Alive(ctx context.Context) error {
	_, err := do(v, ctx, func(ctx context.Context) (struct{}, error) { return struct{}{}, v.inner.Alive(ctx) })
	return err
}
