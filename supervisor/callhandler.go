package supervisor

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpsup/mcpsup/classify"
	seam "github.com/mcpsup/mcpsup/session"
)

// CallHandler is told what no request middleware sees of a host call (the
// wait for ready, the session a failure cost), so a tracer can make one span
// of the whole call (mcpsupotel.Observer.CallHandler). The shape is grpc-go's
// stats.Handler: TagCall once, then HandleCall per stage.
//
// Both methods run on the caller's goroutine, outside any lock: they must not
// block, and may run concurrently for different calls. A panic is logged
// (level error) and the call goes on; a TagCall that panics, returns nil or
// a context not derived from its argument keeps the caller's context. Close
// waits for the stages of the calls in flight; a call made once Close began
// gets its TagCall and CallEnd (ErrClosed), maybe after Close returned.
type CallHandler interface {
	// TagCall is called when a call enters, before it waits or is sent; the
	// context it returns is the call's from then on.
	TagCall(ctx context.Context, info CallInfo) context.Context
	// HandleCall is told each stage, in order: *CallWaited, *CallSessionLost,
	// *CallReissued or *CallResent and the second sending's stages, and
	// always *CallEnd, last.
	HandleCall(ctx context.Context, stage CallStage)
}

// CallInfo names a call for a CallHandler.
type CallInfo struct {
	Server string // Config.Name, credentials masked
	Op     string // the MCP method: tools/call, prompts/get ...
	Name   string // the tool or prompt name, the resource URI; "" for none
}

// CallStage is one stage of a call told to a CallHandler: *CallWaited,
// *CallSessionLost, *CallReissued, *CallResent or *CallEnd.
type CallStage interface{ callStage() }

// CallWaited is the stage of a call that waited for ready.
type CallWaited struct {
	From           State         // found
	FromGeneration uint64        // the latest session then; 0 before the first
	Waited         time.Duration // on Config.Observe.Clock
	Generation     uint64        // the session it went out on; 0: not sent
}

// CallSessionLost is the stage of a call whose session had ended by itself
// when the call returned (failure story S4).
type CallSessionLost struct {
	Generation uint64
	To         State // when the call returned: maybe still ready (the end not yet taken); Closed once stopped
	Verdict    classify.Verdict
}

// CallResent is the stage of a call ResendSafe sends once more; Err is the
// first sending's error.
type CallResent struct{ Err *CallError }

// CallReissued is the stage of a call re-issued after its 2026-07-28
// response stream broke; Err is the first sending's error.
type CallReissued struct{ Err *CallError }

// CallEnd is the last stage of every call; Err is nil on success.
type CallEnd struct{ Err error }

func (*CallWaited) callStage()      {}
func (*CallSessionLost) callStage() {}
func (*CallResent) callStage()      {}
func (*CallReissued) callStage()    {}
func (*CallEnd) callStage()         {}

// reportSessionLost tells the handler when the call that failed as ce cost
// sess (seam.Verify ended it before the call returns).
func (s *Supervisor) reportSessionLost(ctx context.Context, ce *CallError, sess seam.Session) {
	if s.cfg.Observe.CallHandler == nil || !endedOnItsOwn(sess) {
		return // live, or released by the supervisor
	}
	st := s.State()
	if s.callLife.Err() != nil {
		st = Closed
	}
	s.handleCall(ctx, &CallSessionLost{Generation: ce.Generation, To: st, Verdict: ce.Verdict})
}

// tagCall runs the handler's TagCall, if any, keeping ctx when it panics,
// returns nil or a context not derived from ctx (CallHandler).
func (s *Supervisor) tagCall(ctx context.Context, info CallInfo) (tagged context.Context) {
	h, tagged := s.cfg.Observe.CallHandler, ctx
	if h == nil {
		return ctx
	}
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

// tagProbe is the key, and its pointer the value, that marks tagCall's ctx.
type tagProbe struct{ _ byte }

func (s *Supervisor) handleCall(ctx context.Context, stage CallStage) {
	h := s.cfg.Observe.CallHandler
	if h == nil {
		return
	}
	defer func() {
		if r := recover(); r != nil {
			s.cfg.Observe.Logger.Error("mcpsup: the call handler's HandleCall panicked", "server", s.callServer, "stage", fmt.Sprintf("%T", stage), "panic", r)
		}
	}()
	h.HandleCall(ctx, stage)
}
