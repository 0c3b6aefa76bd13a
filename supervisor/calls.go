package supervisor

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/httpsession"
	seam "github.com/mcpsup/mcpsup/session"
)

// CallTool calls a tool through the live session (MCP `tools/call`).
//
// In ready the call goes out at once; while the connection recovers it
// waits for ready, bounded by ctx and Config.Limits.MaxCallWait (then a
// *CallError, not sent, wrapping a *StateError with ErrWaitTimeout or ctx's
// error). In idle, closed or a terminal failed state it fails at once
// (ErrNotReady, ErrClosed). A tool not in the catalog fails locally with
// ErrUnknownTool, and the catalog is re-listed (at most every 30s).
//
// A failure is a *CallError: the verdict and how far the request got. Only
// session-expired, or a transport failure the session then fails a ping
// for, costs the session (failure story S4). A call is sent a second time
// only when re-issued (RecoveryConfig.NoReissue) or resent
// (RecoveryConfig.Resend). CallToolResult.IsError is a result.
func (s *Supervisor) CallTool(ctx context.Context, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	return request(s, ctx, "CallTool", "tools/call", params, func(p *mcp.CallToolParams) (string, any) { return p.Name, p.GetProgressToken() }, seam.Session.CallTool)
}

// GetPrompt gets a prompt (MCP `prompts/get`); calls behave as for CallTool,
// without the catalog check.
func (s *Supervisor) GetPrompt(ctx context.Context, params *mcp.GetPromptParams) (*mcp.GetPromptResult, error) {
	return request(s, ctx, "GetPrompt", "prompts/get", params, func(p *mcp.GetPromptParams) (string, any) { return p.Name, p.GetProgressToken() }, seam.Session.GetPrompt)
}

// ReadResource reads a resource (MCP `resources/read`); calls behave as for
// CallTool, without the catalog check.
func (s *Supervisor) ReadResource(ctx context.Context, params *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error) {
	return request(s, ctx, "ReadResource", "resources/read", params, func(p *mcp.ReadResourceParams) (string, any) { return p.URI, p.GetProgressToken() }, seam.Session.ReadResource)
}

// Complete asks for argument completions (MCP `completion/complete`).
func (s *Supervisor) Complete(ctx context.Context, params *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	return request(s, ctx, "Complete", "completion/complete", params, func(p *mcp.CompleteParams) (string, any) {
		if p.Ref == nil {
			return "", nil
		}
		return p.Ref.Name + p.Ref.URI, nil
	}, seam.Session.Complete)
}

// Subscribe subscribes to a resource's updates (MCP `resources/subscribe`),
// again on every new session.
func (s *Supervisor) Subscribe(ctx context.Context, params *mcp.SubscribeParams) error {
	if params != nil { // remembered before the call, so a session opened meanwhile restores it
		s.setSnapshot(func(sn *snapshot) { sn.subs[params.URI] = true })
	}
	_, err := request(s, ctx, "Subscribe", "resources/subscribe", params, func(p *mcp.SubscribeParams) (string, any) { return p.URI, nil }, noResult(seam.Session.Subscribe))
	if err != nil && params != nil {
		s.setSnapshot(func(sn *snapshot) { delete(sn.subs, params.URI) })
	}
	return err
}

// Unsubscribe ends a subscription (MCP `resources/unsubscribe`).
func (s *Supervisor) Unsubscribe(ctx context.Context, params *mcp.UnsubscribeParams) error {
	_, err := request(s, ctx, "Unsubscribe", "resources/unsubscribe", params, func(p *mcp.UnsubscribeParams) (string, any) { return p.URI, nil }, noResult(seam.Session.Unsubscribe))
	if err == nil {
		s.setSnapshot(func(sn *snapshot) { delete(sn.subs, params.URI) })
	}
	return err
}

// request runs the host call fn, MCP method op, with params p (nil: a
// plain error), resent as resend says, and tells the CallHandler its first
// and last stage; name gives the call's name and progressToken.
func request[P, R any](s *Supervisor, ctx context.Context, fn, op string, p *P, name func(*P) (string, any), call func(seam.Session, context.Context, *P) (R, error)) (res R, err error) {
	if p == nil {
		return res, fmt.Errorf("mcpsup: %s: nil params", fn)
	}
	n, progress := name(p)
	s.mu.Lock()
	stopped := s.stopped // no call counted in once Close began
	if !stopped {
		s.calls.Add(1)
	}
	s.mu.Unlock()
	ctx = s.tagCall(ctx, CallInfo{Server: s.callServer, Op: op, Name: n})
	if stopped {
		err = s.refused(ctx, op, n, &StateError{State: Closed, Err: ErrClosed})
	} else {
		defer s.calls.Done()
		res, err = resend(s, ctx, op, n, progress, func(ctx context.Context, sess seam.Session) (R, error) { return call(sess, ctx, p) })
	}
	if s.cfg.Observe.CallHandler != nil { // no stage made for no handler
		s.handleCall(ctx, &CallEnd{Err: err})
	}
	return res, err
}

// noResult adapts a request that returns only an error.
func noResult[P any](f func(seam.Session, context.Context, *P) error) func(seam.Session, context.Context, *P) (struct{}, error) {
	return func(sess seam.Session, ctx context.Context, p *P) (struct{}, error) {
		return struct{}{}, f(sess, ctx, p)
	}
}

// resend sends a call, and a second time when re-issued or resent.
func resend[T any](s *Supervisor, ctx context.Context, op, name string, progress any, call func(context.Context, seam.Session) (T, error)) (T, error) {
	res, sent, err := send(s, ctx, op, name, progress, call, nil)
	if sent == nil {
		return res, err
	}
	reissue, resent := s.sendsAgain(ctx, sent)
	switch {
	case reissue:
		s.handleCall(ctx, &CallReissued{Err: sent})
	case resent:
		s.post(emit(events.Event{Kind: events.KindCallResent, Generation: sent.Generation, Op: op, Name: name,
			Delivery: sent.Delivery.String(), Verdict: sent.Verdict}))
		s.handleCall(ctx, &CallResent{Err: sent})
	default:
		return res, err
	}
	var id string // the second request's JSON-RPC id
	res, again, err := send(s, ctx, op, name, progress, call, &id)
	if again != nil {
		again.First = sent
		if again.Delivery == NotSent {
			again.Delivery = sent.Delivery // the first may have run
		}
		id = again.RequestID
	}
	if reissue { // RequestID the lost request's, ReissuedAs the new one's ("" when not sent)
		s.post(emit(events.Event{Kind: events.KindCallReissued, Generation: sent.Generation, Op: op, Name: name,
			Delivery: sent.Delivery.String(), Verdict: sent.Verdict, RequestID: sent.RequestID, ReissuedAs: id}))
	}
	return res, err
}

// sendsAgain reports how the failed call ce is sent once more, unless
// someone gave up on it: re-issued when its 2026-07-28 response stream
// broke (RecoveryConfig.NoReissue), else resent under ResendSafe when it is
// Resendable.
func (s *Supervisor) sendsAgain(caller context.Context, ce *CallError) (reissue, resend bool) {
	if ce.Verdict.Class == classify.Canceled || caller.Err() != nil || s.callLife.Err() != nil {
		return false, false
	}
	facts, ok := errors.AsType[*classify.HTTPError](ce.Err)
	reissue = ok && facts.StreamLost && !s.cfg.Recovery.NoReissue
	return reissue, !reissue && s.cfg.Recovery.Resend == ResendSafe && ce.Resendable()
}

// send sends one host call: wait for ready and admission, send once,
// classify a failure (returned twice: as sent, and as the error; a refusal
// only as the error). Success sets *id, if not nil, to the JSON-RPC id.
func send[T any](s *Supervisor, ctx context.Context, op, name string, progress any, call func(context.Context, seam.Session) (T, error), id *string) (T, *CallError, error) {
	var zero T
	live, gen, err := s.awaitReady(ctx, op, name)
	if err != nil {
		return zero, nil, s.refused(ctx, op, name, err)
	}
	c, release := s.boundCall(ctx, progress) // ctx classifies: only the caller giving up is "canceled"
	defer context.AfterFunc(live.calls(), c.cancel)()
	// Released once its answer's stream is closed: a request cut before its
	// body's end costs its connection.
	defer httpsession.AfterAnswers(c, release)
	res, err := call(c, live.sess)
	c.detach()
	if err == nil {
		if id != nil {
			if x, ok := httpsession.LastExchange(c); ok {
				*id = x.RequestID
			}
		}
		return res, nil, nil
	}
	ce := s.failed(ctx, op, name, gen, err)
	s.reportSessionLost(ctx, ce, live.sess)
	return zero, ce, ce
}

// refused returns the error of a call not sent: refused locally, or the
// connection not ready.
func (s *Supervisor) refused(caller context.Context, op, name string, err error) error {
	if _, ok := errors.AsType[*CallError](err); ok {
		return err // refused locally
	}
	if s.callLife.Err() != nil || errors.Is(err, ErrClosed) {
		return &CallError{redactor: &s.redact.Redactor, Op: op, Name: name, Verdict: classify.Verdict{Class: classify.Canceled}, Delivery: NotSent,
			Err: &StateError{State: Closed, Err: ErrClosed}}
	}
	v := classify.Classify(caller, err)
	if se, ok := errors.AsType[*StateError](err); ok && se.Verdict.Class != classify.None && se.Err != caller.Err() {
		v = se.Verdict // what keeps the connection down; a caller that gave up first keeps canceled
	}
	return &CallError{redactor: &s.redact.Redactor, Op: op, Name: name, Verdict: v, Delivery: NotSent, Err: err}
}

// failed classifies the error of a call sent on the session of gen, opens
// a 429's rate-limit window and posts its events. A session the failure
// cost has ended already (seam.Verify): the loop hears it from there.
func (s *Supervisor) failed(caller context.Context, op, name string, gen uint64, err error) *CallError {
	judge := caller
	if s.callLife.Err() != nil { // Close canceled it, whatever the wire saw
		err = errors.Join(&StateError{State: Closed, Err: ErrClosed}, err)
		judge = s.callLife
	}
	v := classify.Classify(judge, err)
	v = s.redact.Verdict(v) // go-sdk's text may carry the session id
	ce := &CallError{redactor: &s.redact.Redactor, Op: op, Name: name, Verdict: v, Delivery: deliveries[classify.DeliveryOf(err, v)], Generation: gen, Err: err}
	if facts, ok := errors.AsType[*classify.HTTPError](err); ok {
		ce.RequestID = facts.RequestID
	}
	ce.repeatable = s.toolRepeatable(op, name) // the catalog at failure time
	if op == "tools/call" && v.HTTPStatus == http.StatusBadRequest && v.RPC.Present && v.RPC.Code == httpsession.CodeHeaderMismatch {
		// streamable-http.mdx, Client Behavior: after a HeaderMismatch (400,
		// -32020) "the client SHOULD call tools/list to check for changes to
		// the tool's inputSchema" (whence go-sdk's Mcp-Param-* headers).
		s.post(func(s *Supervisor) { s.relistSoon(gen) })
	}
	if v.Class == classify.RateLimited && v.RetryAfter > 0 && !s.cfg.Limits.DisableRateLimitWindow {
		until := s.cfg.Observe.Clock.Now().Add(v.RetryAfter) // set before the caller returns
		s.setSnapshot(func(sn *snapshot) { sn.rateUntil, sn.rateOf = until, v })
		s.post(emit(events.Event{Kind: events.KindRateLimitWindow, Generation: gen, Delay: v.RetryAfter, Verdict: v}))
	}
	s.post(emit(events.Event{Kind: events.KindCallFailed, Generation: gen, Op: op, Name: name, Delivery: ce.Delivery.String(), Verdict: v}))
	return ce
}

// awaitReady returns the live session, waiting while the connection
// recovers or the session is not seam.Live; a call not admitted comes back
// refused, with the session's generation.
func (s *Supervisor) awaitReady(ctx context.Context, op, name string) (live *held, gen uint64, err error) {
	var timer clockwork.Timer // armed only if the call has to wait
	var waited *CallWaited
	var start time.Time
	defer func() {
		if timer != nil {
			timer.Stop()
		}
		if waited != nil {
			waited.Waited, waited.Generation = s.cfg.Observe.Clock.Since(start), gen
			s.handleCall(ctx, waited)
		}
	}()
	for {
		s.mu.Lock()
		gen, live = s.snap.gen, s.snap.live
		refused := s.refusalLocked()
		var ch, status <-chan struct{}
		now := seam.Ended
		if refused == nil && s.snap.state == Ready && live != nil {
			now, status = live.sess.Status()
		}
		ready := now == seam.Live
		var wait *StateError // how a wait that ends now ends
		if ready {
			refused = s.admit(op, name)
		} else {
			ch = s.changedLocked()
			wait = s.stateErrorLocked(nil)
		}
		s.mu.Unlock()
		switch {
		case ready:
			return live, gen, refused
		case refused != nil:
			return nil, 0, refused
		}
		if timer == nil {
			if s.cfg.Observe.CallHandler != nil { // before the timer: a test's clock moves once it exists
				waited, start = &CallWaited{From: wait.State, FromGeneration: gen}, s.cfg.Observe.Clock.Now()
			}
			timer = s.cfg.Observe.Clock.NewTimer(s.cfg.Limits.MaxCallWait)
		}
		select {
		case <-ch:
			continue
		case <-status: // nil unless the live session is not Live
			continue
		case <-s.callLife.Done():
			return nil, 0, &StateError{State: Closed, Err: ErrClosed}
		case <-ctx.Done(): // canceled; the error says what kept the connection down
			wait.Err = ctx.Err()
		case <-timer.Chan():
			wait.Err = ErrWaitTimeout
		}
		return nil, 0, wait
	}
}

// admit refuses, locally, a call to a tool the catalog lacks (and asks for
// a re-list) and any call inside an open rate-limit window. s.mu held.
func (s *Supervisor) admit(op, name string) error {
	if op == "tools/call" && (s.snap.catalog == nil || s.snap.catalog.Tool(name) == nil) {
		gen := s.snap.gen // added while we could not hear?
		s.post(func(s *Supervisor) { s.relistSoon(gen) })
		return &CallError{redactor: &s.redact.Redactor, Op: op, Name: name, Verdict: classify.Verdict{Class: classify.Application, Method: op, Detail: "not in the catalog"}, Delivery: NotSent, Err: ErrUnknownTool}
	}
	if !s.cfg.Limits.DisableRateLimitWindow && s.cfg.Observe.Clock.Now().Before(s.snap.rateUntil) {
		return &CallError{redactor: &s.redact.Redactor, Op: op, Name: name, Verdict: s.snap.rateOf, Delivery: NotSent, Err: ErrRateLimited}
	}
	return nil
}

// toolRepeatable reports whether op is a tools/call of a tool the catalog
// annotates readOnlyHint or idempotentHint.
func (s *Supervisor) toolRepeatable(op, name string) bool {
	t := s.Catalog().Tool(name)
	return op == "tools/call" && t != nil && t.Annotations != nil && (t.Annotations.ReadOnlyHint || t.Annotations.IdempotentHint)
}

// deliveries is how far a failed call got; without wire facts it never
// went out.
var deliveries = map[classify.Delivery]Delivery{classify.DeliveryOutcomeUnknown: OutcomeUnknown, classify.DeliveryAnswered: Answered}
