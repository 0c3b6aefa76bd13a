package supervisor

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcpsup/mcpsup/classify"
	seam "github.com/mcpsup/mcpsup/session"
)

// CallHandler is told of the part of a host call's life that no request
// middleware sees: the wait for ready while the connection recovers, and the
// session a failed call cost. It is where a tracer starts one span for the
// whole call, with the requests the call sent as its children
// (mcpsupotel.Observer.CallHandler). The shape is grpc-go's stats.Handler:
// TagCall once, then HandleCall for each stage.
//
// Calls are CallTool, GetPrompt, ReadResource, Complete, Subscribe,
// Unsubscribe and SetLoggingLevel. Both methods run on the caller's
// goroutine, synchronously, outside any lock of the supervisor: they must not
// block, and may be called concurrently for different calls. A method that
// panics has the panic logged (Config.Observe.Logger, level error) and the call goes
// on as if it had returned (a TagCall that panics, returns nil, or returns a
// context not derived from the one it was given, which would cut the call
// from its caller's cancellation, keeps the caller's context), as an events sink that panics has its event dropped: an
// observer's bug never turns a call the server answered into a crash of the
// caller, who could not tell whether the call ran. Close waits for the
// stages of the calls in flight; a call made once Close began is told its
// TagCall and its CallEnd (ErrClosed, not sent) on its own goroutine, also
// after Close returned.
type CallHandler interface {
	// TagCall is called when a call enters the supervisor, before it waits
	// or is sent. The context it returns is the call's from then on: the
	// requests the call sends, and the HandleCall of its stages, get it (or
	// one derived from it).
	TagCall(ctx context.Context, info CallInfo) context.Context
	// HandleCall is told each stage of the call, in this order: a
	// *CallWaited when the call had to wait, a *CallSessionLost when its
	// failure cost the session; a *CallReissued (a 2026-07-28 response
	// stream that broke) or, with Config.Recovery.Resend, a *CallResent, and the
	// stages of the second sending; and always a *CallEnd, last.
	HandleCall(ctx context.Context, stage CallStage)
}

// CallInfo names a call for a CallHandler.
type CallInfo struct {
	// Server is the supervisor's Config.Name, credentials masked as in
	// events (events.Event.Server).
	Server string
	// Op is the MCP method (tools/call, prompts/get, resources/read, ...).
	Op string
	// Name is the tool or prompt name, or the resource URI; "" when the
	// method has none.
	Name string
}

// CallStage is one stage of a call told to a CallHandler: *CallWaited,
// *CallSessionLost, *CallReissued, *CallResent or *CallEnd.
type CallStage interface{ callStage() }

// CallWaited is the stage of a call that found the connection not ready and
// waited for it (Config.Limits.MaxCallWait bounds the wait).
type CallWaited struct {
	// From is the state the call found, and FromGeneration the generation
	// of the latest session then (0 before the first).
	From           State
	FromGeneration uint64
	// Waited is how long the call waited, on Config.Observe.Clock.
	Waited time.Duration
	// Generation is the session the call then went out on; 0 when the
	// wait ended without ready (the call fails, not sent). A Generation
	// other than FromGeneration means the call waited for a new session.
	Generation uint64
}

// CallSessionLost is the stage of a call whose failure cost the connection
// its session: the session the call went out on had ended when the call
// returned (its verdict was session-expired, or the session ended by
// itself meanwhile, failure story S4), and the supervisor recovers.
// A transport failure whose session is still being verified (one ping on
// the same session, DESIGN.md section 3) is not reported here: the events
// tell whether the ping found it dead.
type CallSessionLost struct {
	// Generation is the session the call failed on.
	Generation uint64
	// To is the connection's state when the call returned: the session
	// has ended, and the supervisor replaces it once its loop takes the
	// end, so To may still be ready (of the old generation), or already
	// connecting, stale-recovering, failed ...; a later recovery does not
	// change it. Closed when the supervisor stopped first.
	To State
	// Verdict is the call's verdict.
	Verdict classify.Verdict
}

// CallResent is the stage of a call that failed resendable and that
// Config.Recovery.Resend sends once more, after recovery (the call-resent event
// says so too). The stages of the second sending follow.
type CallResent struct {
	// Err is the first sending's error.
	Err *CallError
}

// CallReissued is the stage of a call of a 2026-07-28 session whose
// response stream broke before its response, and that is re-issued once as
// a new request (Config.Recovery.NoReissue unset; the call-reissued event says so
// too). The stages of the second sending follow.
type CallReissued struct {
	// Err is the first sending's error; its RequestID is the lost request's.
	Err *CallError
}

// CallEnd is the last stage of every call.
type CallEnd struct {
	// Err is the call's error (a *CallError, or the error of nil params);
	// nil when the call succeeded.
	Err error
}

func (*CallWaited) callStage()      {}
func (*CallSessionLost) callStage() {}
func (*CallResent) callStage()      {}
func (*CallReissued) callStage()    {}
func (*CallEnd) callStage()         {}

// waitTrace records a call's wait for a CallHandler; the zero value (no
// handler) records nothing and reads no clock.
type waitTrace struct {
	h       CallHandler
	waiting bool
	from    State
	fromGen uint64
	start   time.Time
}

// begin notes the first time the call has to wait.
func (w *waitTrace) begin(s *Supervisor, st State, gen uint64) {
	if w.h == nil || w.waiting {
		return
	}
	w.waiting, w.from, w.fromGen, w.start = true, st, gen, s.cfg.Observe.Clock.Now()
}

// end reports the wait, if there was one; gen is the session the call goes
// out on, 0 for none.
func (w *waitTrace) end(ctx context.Context, s *Supervisor, gen uint64) {
	if !w.waiting {
		return
	}
	s.handleCall(ctx, w.h, &CallWaited{From: w.from, FromGeneration: w.fromGen, Waited: s.cfg.Observe.Clock.Since(w.start), Generation: gen})
}

// reportSessionLost tells h when the call that failed as ce cost its
// session: sess, the session it went out on, has ended by the time the
// call returns (seam.Verify ends it before). To is the connection's state
// then: the loop may not have taken the end yet (ready, of the old
// generation), or closed when the supervisor stopped first.
func (s *Supervisor) reportSessionLost(ctx context.Context, h CallHandler, ce *CallError, sess seam.Session) {
	if st, _ := sess.Status(); st != seam.Ended {
		return
	}
	if errors.Is(sess.Err(), seam.ErrClosed) || errors.Is(sess.Err(), seam.ErrDetached) {
		return // released by the supervisor, not lost to the failure
	}
	st := s.State()
	if s.callLife.Err() != nil {
		st = Closed
	}
	s.handleCall(ctx, h, &CallSessionLost{Generation: ce.Generation, To: st, Verdict: ce.Verdict})
}

// tagCall runs h.TagCall, keeping ctx when it panics, returns nil, or
// returns a context not derived from ctx (see CallHandler): one that lacks
// ctx's values, or that a canceled ctx would not cancel
// (context.WithoutCancel). Such a context, context.Background() for one,
// cut the call from its caller: a canceled call waited on a server that
// never answered.
func (s *Supervisor) tagCall(ctx context.Context, h CallHandler, info CallInfo) (tagged context.Context) {
	tagged = ctx
	defer func() {
		if r := recover(); r != nil {
			s.cfg.Observe.Logger.Error("mcpsup: the call handler's TagCall panicked", "server", s.callServer, "op", info.Op, "panic", r)
			tagged = ctx
		}
	}()
	probe := &tagProbe{}
	c := h.TagCall(context.WithValue(ctx, tagProbe{}, probe), info)
	switch {
	case c == nil:
		return ctx
	case c.Value(tagProbe{}) != probe || (ctx.Done() != nil && c.Done() == nil):
		s.cfg.Observe.Logger.Warn("mcpsup: the call handler's TagCall returned a context not derived from the call's; the call keeps its own",
			"server", s.callServer, "op", info.Op)
		return ctx
	}
	return c
}

// tagProbe is the key, and its pointer the value, that tells tagCall a
// context derived from the one it gave TagCall.
type tagProbe struct{ _ byte }

// handleCall runs h.HandleCall, logging a panic (see CallHandler).
func (s *Supervisor) handleCall(ctx context.Context, h CallHandler, stage CallStage) {
	defer func() {
		if r := recover(); r != nil {
			s.cfg.Observe.Logger.Error("mcpsup: the call handler's HandleCall panicked", "server", s.callServer, "stage", fmt.Sprintf("%T", stage), "panic", r)
		}
	}()
	h.HandleCall(ctx, stage)
}
