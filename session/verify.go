package session

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/internal/lazyctx"
)

// DefaultVerifyTimeout bounds a verification's Alive when
// VerifyConfig.Timeout is zero.
const DefaultVerifyTimeout = 10 * time.Second

// VerifyConfig configures [Verify]; the zero value is ready.
type VerifyConfig struct {
	// Timeout bounds a verification's Alive. Zero: DefaultVerifyTimeout.
	Timeout time.Duration
	// KeepAlive, when positive, sends an Alive at this interval, each
	// bounded by it: transport, session-expired or two in a row unanswered
	// end the session; -32601 (Method not found) stops the pinging; any
	// other failure keeps the session (decision record 0005). Zero: none.
	KeepAlive time.Duration
	// Clock times both; nil: the real clock.
	Clock clockwork.Clock
	// Logger gets the keepalive's debug records; nil: none.
	Logger *slog.Logger
	// Observe gets a Verified fact after each verification, before a failed
	// one ends the session; it must not block. nil: none.
	Observe func(Fact)
}

// Verify returns s under the two rules by which a request's failure ends a
// session (DESIGN.md section 2), and its keepalive. A session-expired answer
// ends it before the request returns (streamable-http.mdx, Session
// Management: the client "MUST start a new session"). A transport failure
// while its caller waits starts one Alive, bounded by Timeout, Status
// Verifying meanwhile: an answer keeps the session ([PingProvesDead]), none
// ends it (Endable.Fail); one answered covers every request sent before it.
// Close and Detach wait for both. Safe for concurrent use.
func Verify(s Endable, cfg VerifyConfig) Endable {
	cfg.Timeout = cmp.Or(max(cfg.Timeout, 0), DefaultVerifyTimeout)
	cfg.Clock = cmp.Or[clockwork.Clock](cfg.Clock, clockwork.NewRealClock())
	cfg.Logger = cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
	if cfg.Observe == nil {
		cfg.Observe = func(Fact) {}
	}
	v := &verified{Endable: s, cfg: cfg}
	s.AfterEnd(v.changed) // wakes those waiting on the status
	if cfg.KeepAlive > 0 {
		v.wg.Add(1)
		go v.keepAlive(v.life.Context(context.Background()), cfg.KeepAlive)
	}
	return v
}

// Verified is the outcome of one verification (see [Verify]): Alive, or
// not with Err, the Alive's error, and the session ends.
type Verified struct {
	Alive bool
	Err   error
}

func (Verified) fact() {}

// verified is a session under [Verify]: its requests are overridden, the
// rest is the inner session's.
type verified struct {
	Endable // the inner session
	cfg     VerifyConfig
	wg      sync.WaitGroup // the verification running, the keepalive

	pings atomic.Uint64 // verifications started, written under mu

	life lazyctx.Life // ends on Close or Detach: a running Alive is canceled

	mu        sync.Mutex
	verifying bool
	answered  uint64        // the number of the last one answered
	change    chan struct{} // closed at the next change of status; nil until asked for
}

func (v *verified) changed() {
	v.mu.Lock()
	v.wake()
	v.mu.Unlock()
}

// wake closes the status channel, if one was asked for; v.mu is held.
func (v *verified) wake() {
	if v.change != nil {
		close(v.change)
		v.change = nil
	}
}

// judge applies the two rules to *err, the error of a request sent when
// pings was seq: deferred by every request, its seq taken before it.
func (v *verified) judge(ctx context.Context, seq uint64, err *error) {
	if *err == nil {
		return
	}
	switch classify.Classify(ctx, *err).Class {
	case classify.SessionExpired:
		v.Fail(*err)
	case classify.Transport:
		v.verify(seq)
	}
}

func (v *verified) verify(seq uint64) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.life.Ended() || v.Endable.Err() != nil || v.verifying || v.answered > seq {
		return // closing, ended, or answered for
	}
	v.verifying = true
	v.wake()
	v.wg.Add(1)
	go v.alive(v.life.Context(context.Background()), v.pings.Add(1))
}

// alive runs verification num: one Alive bounded by cfg.Timeout and life.
func (v *verified) alive(life context.Context, num uint64) {
	defer v.wg.Done()
	cut, err := bounded(life, v.cfg.Clock, v.cfg.Timeout, v.Endable.Alive)
	if cut {
		err = fmt.Errorf("mcpsup/session: verification: no answer within %s: %w", v.cfg.Timeout, context.DeadlineExceeded)
	}
	ended := life.Err() != nil || v.Endable.Err() != nil // the session ended meanwhile
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

func (v *verified) Status() (Status, <-chan struct{}) {
	st, ch := v.Endable.Status()
	if st != Live {
		return st, ch
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.Endable.Err() != nil {
		// Ended since the read above: its one wake (changed) may have run
		// already, and would close no channel made now.
		return Ended, nil
	}
	if v.change == nil {
		v.change = make(chan struct{})
	}
	if v.verifying {
		return Verifying, v.change
	}
	return Live, v.change
}

func (v *verified) Close() error  { return v.finish(v.Endable.Close) }
func (v *verified) Detach() error { return v.finish(v.Endable.Detach) }

// finish cancels the verification running and the keepalive, waits for
// them, then ends the session with end: a keepalive that found the session
// dead has released it detached by then, so end sends no DELETE.
func (v *verified) finish(end func() error) error {
	v.mu.Lock()
	v.life.End() // under mu: no verification starts after it
	v.mu.Unlock()
	v.wg.Wait()
	return end()
}

func (v *verified) ListTools(ctx context.Context, cursor string) (_ []*mcp.Tool, _ string, err error) {
	defer v.judge(ctx, v.pings.Load(), &err)
	return v.Endable.ListTools(ctx, cursor)
}
func (v *verified) ListResources(ctx context.Context, cursor string) (_ []*mcp.Resource, _ string, err error) {
	defer v.judge(ctx, v.pings.Load(), &err)
	return v.Endable.ListResources(ctx, cursor)
}
func (v *verified) ListPrompts(ctx context.Context, cursor string) (_ []*mcp.Prompt, _ string, err error) {
	defer v.judge(ctx, v.pings.Load(), &err)
	return v.Endable.ListPrompts(ctx, cursor)
}
func (v *verified) ListResourceTemplates(ctx context.Context, cursor string) (_ []*mcp.ResourceTemplate, _ string, err error) {
	defer v.judge(ctx, v.pings.Load(), &err)
	return v.Endable.ListResourceTemplates(ctx, cursor)
}
func (v *verified) CallTool(ctx context.Context, p *mcp.CallToolParams) (_ *mcp.CallToolResult, err error) {
	defer v.judge(ctx, v.pings.Load(), &err)
	return v.Endable.CallTool(ctx, p)
}
func (v *verified) GetPrompt(ctx context.Context, p *mcp.GetPromptParams) (_ *mcp.GetPromptResult, err error) {
	defer v.judge(ctx, v.pings.Load(), &err)
	return v.Endable.GetPrompt(ctx, p)
}
func (v *verified) ReadResource(ctx context.Context, p *mcp.ReadResourceParams) (_ *mcp.ReadResourceResult, err error) {
	defer v.judge(ctx, v.pings.Load(), &err)
	return v.Endable.ReadResource(ctx, p)
}
func (v *verified) Complete(ctx context.Context, p *mcp.CompleteParams) (_ *mcp.CompleteResult, err error) {
	defer v.judge(ctx, v.pings.Load(), &err)
	return v.Endable.Complete(ctx, p)
}
func (v *verified) Subscribe(ctx context.Context, p *mcp.SubscribeParams) (err error) {
	defer v.judge(ctx, v.pings.Load(), &err)
	return v.Endable.Subscribe(ctx, p)
}
func (v *verified) Unsubscribe(ctx context.Context, p *mcp.UnsubscribeParams) (err error) {
	defer v.judge(ctx, v.pings.Load(), &err)
	return v.Endable.Unsubscribe(ctx, p)
}

//lint:ignore SA1019 logging/setLevel is deprecated from protocol 2026-07-28 on, and still served by 2025-era servers
func (v *verified) SetLoggingLevel(ctx context.Context, p *mcp.SetLoggingLevelParams) (err error) {
	defer v.judge(ctx, v.pings.Load(), &err)
	return v.Endable.SetLoggingLevel(ctx, p)
}

// Alive is judged as any request (a host's ping); a verification's own
// Alive goes to the inner session, past the rules.
func (v *verified) Alive(ctx context.Context) (err error) {
	defer v.judge(ctx, v.pings.Load(), &err)
	return v.Endable.Alive(ctx)
}
