package supervisor

import (
	"context"
	"errors"
	"net/http"

	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/httpsession"
	"github.com/mcpsup/mcpsup/msgcheck"
	seam "github.com/mcpsup/mcpsup/session"
)

// CallTool calls a tool through the live session (MCP `tools/call`).
//
// In ready the call goes out at once. While the connection recovers
// (connecting, resuming, probing, stale-recovering, a retrying failed state)
// it waits for ready, bounded by ctx and Config.Limits.MaxCallWait, and is then sent
// exactly once; a wait that ends first fails not sent with a *CallError
// wrapping a *StateError that names the state and the last failure's
// verdict (its Err is ErrWaitTimeout, or ctx's error: the call's verdict is
// then canceled). In idle, closed or a terminal failed state it fails at once
// with a *CallError (not sent) wrapping a *StateError (ErrNotReady or
// ErrClosed). A tool the catalog does not have fails locally, the call not
// sent, with a *CallError wrapping ErrUnknownTool; the supervisor then
// re-lists the catalog (at most every 30s) in case the server added it.
//
// A failed call returns a *CallError with the verdict and how far the request
// got. Only a session-expired verdict, or a transport one whose session then
// fails to answer a ping, costs the session (failure story S4); the session
// then ended before the call returns, so a call made right after it waits
// for the new session. The call is
// never replayed but in two cases, and then once: on a 2026-07-28 session
// whose response stream for the call broke before the response, it is
// re-issued as a new request with a new id, as that era requires (changelog
// item 9), unless Config.Recovery.NoReissue is set: a tool that is not idempotent may
// then run twice; or, when Config.Recovery.Resend is ResendSafe and the CallError is
// Resendable, it is sent once more after recovery. A call sent twice that
// fails again names its first attempt (CallError.First). A tool's own error
// (CallToolResult.IsError) is a result, not an error.
func (s *Supervisor) CallTool(ctx context.Context, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	if params == nil {
		return nil, errors.New("mcpsup: CallTool: nil params")
	}
	return do(s, ctx, "tools/call", params.Name, params.GetProgressToken(), func(ctx context.Context, sess seam.Session) (*mcp.CallToolResult, error) {
		return sess.CallTool(ctx, params)
	})
}

// GetPrompt gets a prompt (MCP `prompts/get`); calls behave as for CallTool,
// without the catalog check.
func (s *Supervisor) GetPrompt(ctx context.Context, params *mcp.GetPromptParams) (*mcp.GetPromptResult, error) {
	if params == nil {
		return nil, errors.New("mcpsup: GetPrompt: nil params")
	}
	return do(s, ctx, "prompts/get", params.Name, params.GetProgressToken(), func(ctx context.Context, sess seam.Session) (*mcp.GetPromptResult, error) {
		return sess.GetPrompt(ctx, params)
	})
}

// ReadResource reads a resource (MCP `resources/read`); calls behave as for
// CallTool, without the catalog check.
func (s *Supervisor) ReadResource(ctx context.Context, params *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error) {
	if params == nil {
		return nil, errors.New("mcpsup: ReadResource: nil params")
	}
	return do(s, ctx, "resources/read", params.URI, params.GetProgressToken(), func(ctx context.Context, sess seam.Session) (*mcp.ReadResourceResult, error) {
		return sess.ReadResource(ctx, params)
	})
}

// Complete asks for argument completions (MCP `completion/complete`).
func (s *Supervisor) Complete(ctx context.Context, params *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	if params == nil {
		return nil, errors.New("mcpsup: Complete: nil params")
	}
	name := ""
	if params.Ref != nil {
		name = params.Ref.Name + params.Ref.URI
	}
	return do(s, ctx, "completion/complete", name, nil, func(ctx context.Context, sess seam.Session) (*mcp.CompleteResult, error) {
		return sess.Complete(ctx, params)
	})
}

// Subscribe subscribes to a resource's updates (MCP `resources/subscribe`).
// The supervisor remembers the subscription and re-subscribes on every new
// session, since the server lost it with the old one.
func (s *Supervisor) Subscribe(ctx context.Context, params *mcp.SubscribeParams) error {
	if params == nil {
		return errors.New("mcpsup: Subscribe: nil params")
	}
	// Remembered before the call, so a session opened meanwhile restores it.
	s.setSnapshot(func(sn *snapshot) {
		if sn.subs == nil {
			sn.subs = map[string]bool{}
		}
		sn.subs[params.URI] = true
	})
	_, err := do(s, ctx, "resources/subscribe", params.URI, nil, func(ctx context.Context, sess seam.Session) (struct{}, error) {
		return struct{}{}, sess.Subscribe(ctx, params)
	})
	if err != nil {
		s.setSnapshot(func(sn *snapshot) { delete(sn.subs, params.URI) })
	}
	return err
}

// Unsubscribe ends a subscription (MCP `resources/unsubscribe`) and, once
// the server confirmed, forgets it.
func (s *Supervisor) Unsubscribe(ctx context.Context, params *mcp.UnsubscribeParams) error {
	if params == nil {
		return errors.New("mcpsup: Unsubscribe: nil params")
	}
	_, err := do(s, ctx, "resources/unsubscribe", params.URI, nil, func(ctx context.Context, sess seam.Session) (struct{}, error) {
		return struct{}{}, sess.Unsubscribe(ctx, params)
	})
	if err == nil {
		s.setSnapshot(func(sn *snapshot) { delete(sn.subs, params.URI) })
	}
	return err
}

// SetLoggingLevel sets the level of the log messages the server sends. On
// a 2025-era session it sends MCP `logging/setLevel`, and the supervisor
// restores the level on every new session. On a 2026-07-28 session it
// sends nothing: that era removed `logging/setLevel` (changelog.mdx, item
// 5), and the level travels in the `_meta` of each later request under
// `io.modelcontextprotocol/logLevel` (server/utilities/logging.mdx,
// "Per-request log level"); without it the server sends no log message.
//
//lint:ignore SA1019 logging/setLevel is deprecated from protocol 2026-07-28 on, and still served by 2025-era servers
func (s *Supervisor) SetLoggingLevel(ctx context.Context, params *mcp.SetLoggingLevelParams) error {
	if params == nil {
		return errors.New("mcpsup: SetLoggingLevel: nil params")
	}
	_, err := do(s, ctx, "logging/setLevel", string(params.Level), nil, func(ctx context.Context, sess seam.Session) (struct{}, error) {
		if msgcheck.ModernVersion(sess.Info().ProtocolVersion) {
			return struct{}{}, nil // stored below: the next requests carry it
		}
		return struct{}{}, sess.SetLoggingLevel(ctx, params)
	})
	if err == nil {
		level := string(params.Level)
		s.logLevel.Store(&level)
	}
	return err
}

// do runs one host call (send), sends it once more when the resend policy
// allows (Config.Recovery.Resend), and tells Config.Observe.CallHandler, if any, of the
// call's stages. progress is the request's progressToken (nil when none):
// progress notifications for it extend Config.Limits.CallTimeout. Close waits for
// the call, its handler's last stage included.
func do[T any](s *Supervisor, ctx context.Context, op, name string, progress any, call func(context.Context, seam.Session) (T, error)) (T, error) {
	closed := s.enter(op, name)
	if closed == nil {
		defer s.calls.Done()
	}
	h := s.cfg.Observe.CallHandler
	if h == nil {
		if closed != nil {
			var zero T
			return zero, closed
		}
		return resend(s, ctx, nil, op, name, progress, call)
	}
	ctx = s.tagCall(ctx, h, CallInfo{Server: s.callServer, Op: op, Name: name})
	var res T
	err := error(closed)
	if closed == nil {
		res, err = resend(s, ctx, h, op, name, progress, call)
	}
	s.handleCall(ctx, h, &CallEnd{Err: err})
	return res, err
}

// enter counts a call in (Supervisor.calls, which Close waits for), or
// returns its error, not sent, once Close began.
func (s *Supervisor) enter(op, name string) *CallError {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		se := &StateError{State: s.snap.state, Err: ErrClosed}
		return &CallError{redactor: &s.redact.Redactor, Op: op, Name: name, Verdict: classify.Verdict{Class: classify.Canceled}, Delivery: NotSent, Err: se}
	}
	s.calls.Add(1)
	return nil
}

// resend is do without the handler's first and last stage; h may be nil.
// A call is sent at most twice: re-issued after a 2026-07-28 response
// stream broke (Config.Recovery.NoReissue), or else resent (Config.Recovery.Resend).
func resend[T any](s *Supervisor, ctx context.Context, h CallHandler, op, name string, progress any, call func(context.Context, seam.Session) (T, error)) (T, error) {
	res, sent, err := send(s, ctx, h, op, name, progress, call, nil)
	if sent == nil {
		return res, err
	}
	reissue := s.reissues(ctx, sent)
	switch {
	case reissue:
		if h != nil {
			s.handleCall(ctx, h, &CallReissued{Err: sent})
		}
	case s.resends(ctx, sent):
		s.post(callResent{err: sent})
		if h != nil {
			s.handleCall(ctx, h, &CallResent{Err: sent})
		}
	default:
		return res, err
	}
	var id string // the second request's JSON-RPC id
	res, again, err := send(s, ctx, h, op, name, progress, call, &id)
	if again != nil {
		again.First = sent
		if again.Delivery == NotSent {
			again.Delivery = sent.Delivery // the first may have run
		}
		id = again.RequestID
	}
	if reissue {
		s.post(callReissued{first: sent, id: id})
	}
	return res, err
}

// reissues reports whether the failed call ce is re-issued: its request
// went out on a 2026-07-28 session whose response stream broke before the
// response (classify.Exchange.StreamLost: "A broken response stream loses
// the in-flight request; clients MUST re-issue it as a new request with a
// new request ID", changelog item 9), Config.Recovery.NoReissue is unset, and
// neither its caller nor Close gave up on it.
func (s *Supervisor) reissues(caller context.Context, ce *CallError) bool {
	if s.cfg.Recovery.NoReissue || ce.Verdict.Class == classify.Canceled || caller.Err() != nil || s.callLife.Err() != nil {
		return false
	}
	facts, ok := errors.AsType[*classify.HTTPError](ce.Err)
	return ok && facts.StreamLost
}

// send sends one host call: wait for ready, check the catalog and the
// rate-limit window, send once, classify a failure and report its events.
// A failure of the call sent on a session also comes back as sent
// (the resend policy looks at it); a refusal does not. When id is not nil,
// a call that succeeds sets it to its request's JSON-RPC id.
func send[T any](s *Supervisor, ctx context.Context, h CallHandler, op, name string, progress any, call func(context.Context, seam.Session) (T, error), id *string) (T, *CallError, error) {
	var zero T
	// Verdicts are classified with the caller's own context: only the caller
	// giving up is "canceled".
	live, gen, err := s.awaitReady(ctx, h, op, name)
	if err != nil {
		return zero, nil, s.refused(ctx, op, name, gen, err)
	}
	caller := ctx
	// The call ends when its caller gives up, when its session is released
	// (expired, died, replaced: its answers can no longer arrive) and on
	// Close, instead of waiting for its deadline: the clock's cancel is
	// what ends it. A caller without a deadline gets CallTimeout, extended
	// by progress.
	var c *callClock
	var release func()
	if _, ok := caller.Deadline(); ok {
		c = newCallClock(ctx, s.cfg.Observe.Clock, 0, 0)
		release = c.finish // detached by then: the release
	} else {
		c, release = s.boundCall(ctx, progress)
	}
	defer s.inflight.leave(s.inflight.join(live, c))
	// The call's context ends once its answer's stream is closed, not
	// before, nor when its caller ends its own context as it returns: a
	// request cut before its body's end costs its connection.
	ctx = c // its exchanges too (httpsession.Exchanges)
	defer httpsession.AfterAnswers(ctx, release)
	res, err := call(ctx, live.sess)
	c.detach()
	if err == nil {
		if id != nil {
			if x, ok := httpsession.LastExchange(ctx); ok {
				*id = x.RequestID
			}
		}
		return res, nil, nil
	}
	ce := s.failed(caller, op, name, gen, err)
	if h != nil {
		s.reportSessionLost(caller, h, ce, live.sess)
	}
	return zero, ce, ce
}

// headerMismatch reports a verdict of HTTP 400 with JSON-RPC -32020
// (HeaderMismatch, MCP 2026-07-28 streamable-http.mdx, Server Validation):
// the request's Mcp-* headers did not match its body.
func headerMismatch(v classify.Verdict) bool {
	return v.HTTPStatus == http.StatusBadRequest && v.RPC.Present && v.RPC.Code == httpsession.CodeHeaderMismatch
}

// resends reports whether Config.Recovery.Resend sends the failed call ce once more:
// it is Resendable, and neither its caller nor Close gave up on it.
func (s *Supervisor) resends(caller context.Context, ce *CallError) bool {
	return s.cfg.Recovery.Resend == ResendSafe && ce.Resendable() && ce.Verdict.Class != classify.Canceled &&
		caller.Err() == nil && s.callLife.Err() == nil
}

// refused returns the error of a call that was not sent: refused locally
// (unknown tool, rate-limit window), or the connection not ready. Failure
// paths live outside do, so a call that succeeds allocates nothing for them.
func (s *Supervisor) refused(caller context.Context, op, name string, gen uint64, err error) error {
	if errors.Is(err, ErrUnknownTool) {
		// The server may have added it while we could not hear. post never
		// blocks (the inbox is a queue): no goroutine per refused call.
		s.post(relistWanted{gen: gen})
	}
	var ce *CallError
	if errors.As(err, &ce) {
		return err // refused locally: unknown tool or rate-limit window
	}
	if s.callLife.Err() != nil {
		err = &StateError{State: Closed, Err: ErrClosed}
	}
	v := classify.Classify(caller, err)
	var se *StateError
	if errors.As(err, &se) && se.Verdict.Class != classify.None && se.Err != caller.Err() {
		// The failure that keeps the connection down; a caller that gave
		// up first keeps canceled, that failure named in the error's text.
		v = se.Verdict
	}
	return &CallError{redactor: &s.redact.Redactor, Op: op, Name: name, Verdict: v, Delivery: NotSent, Err: err}
}

// failed classifies the error of a call that was sent on the session of
// gen, builds its CallError, opens the rate-limit window of a 429 with
// Retry-After, and posts its events without waiting. It never steps the
// machine: a session that the failure cost has ended already (seam.Verify),
// and the loop learns it from the session's Done.
func (s *Supervisor) failed(caller context.Context, op, name string, gen uint64, err error) *CallError {
	// The error carries the request's wire facts (httpsession.FactsMiddleware):
	// with them, the request went out (classify.DeliveryOf).
	// A call go-sdk refused unsent carries a *classify.NotSentError, which
	// classify takes for a failed connection.
	judge := caller
	if s.callLife.Err() != nil {
		// Close canceled the call on the caller's behalf: classify is told
		// with the ended context, and says canceled whatever the wire saw.
		err = errors.Join(&StateError{State: Closed, Err: ErrClosed}, err)
		judge = s.callLife
	}
	v := classify.Classify(judge, err)
	v = s.redact.Verdict(v) // go-sdk's text may carry the session id
	ce := &CallError{redactor: &s.redact.Redactor, Op: op, Name: name, Verdict: v, Delivery: delivery(err, v), Generation: gen, Err: err}
	if facts, ok := errors.AsType[*classify.HTTPError](err); ok {
		ce.RequestID = facts.RequestID
	}
	ce.repeatable = s.toolRepeatable(op, name) // the catalog at failure time
	if op == "tools/call" && headerMismatch(v) {
		// streamable-http.mdx, Client Behavior: after a HeaderMismatch "the
		// client SHOULD call tools/list to check for changes to the tool's
		// inputSchema": go-sdk derives the Mcp-Param-* headers from the
		// listed schema, so without a re-list every later call fails alike.
		// Spaced like any re-list of a change gone unnoticed (relistGap).
		s.post(relistWanted{gen: gen})
	}
	if v.Class == classify.RateLimited && v.RetryAfter > 0 && !s.cfg.Limits.DisableRateLimitWindow {
		// The window is the verdict's Retry-After as it stands: classify
		// parsed and capped it (classify.MaxRetryAfter), so the error, the
		// event and the window agree. Set before the caller returns: a
		// call made right after it is refused locally.
		until := s.cfg.Observe.Clock.Now().Add(v.RetryAfter)
		s.setSnapshot(func(sn *snapshot) { sn.rate = &rateWindow{until: until, verdict: v} })
	}
	s.post(callFailed{gen: gen, err: ce})
	return ce
}

// awaitReady returns the live session, waiting while the connection
// recovers (DESIGN.md section 2, calls by state) and while the live
// session is not Live (seam.Status: being verified, or ended before the
// loop took its end). Once ready, the call must also be admitted (see
// admit): a refusal comes back with the session's generation.
func (s *Supervisor) awaitReady(ctx context.Context, h CallHandler, op, name string) (live *held, gen uint64, err error) {
	var timer clockwork.Timer // armed only if the call has to wait
	wait := waitTrace{h: h}
	defer func() {
		if timer != nil {
			timer.Stop()
		}
		wait.end(ctx, s, gen)
	}()
	for {
		s.mu.Lock()
		st, reason, verdict := s.snap.state, s.snap.reason, s.snap.failure()
		gen, live = s.snap.gen, s.snap.live
		stopped, started := s.stopped, s.started
		var refused error
		var ch, status <-chan struct{}
		ready := st == Ready && live != nil
		if ready {
			var now seam.Status
			if now, status = live.sess.Status(); now != seam.Live {
				ready = false
			}
		}
		if !stopped && ready {
			refused = s.admit(op, name)
		} else {
			ch = s.changedLocked() // only a call that may wait asks for one
		}
		s.mu.Unlock()
		switch {
		case stopped || st == Closed:
			return nil, 0, &StateError{State: st, Err: ErrClosed}
		case ready:
			return live, gen, refused
		case st == Idle && !started, st == Failed && reason != events.ReasonNone:
			// Idle after Start is the moment before the first trigger: wait.
			return nil, 0, &StateError{State: st, Reason: reason, Verdict: verdict, Err: ErrNotReady, redactor: &s.redact.Redactor}
		}
		if timer == nil {
			wait.begin(s, st, gen) // before the timer: a test's clock moves once it exists
			timer = s.cfg.Observe.Clock.NewTimer(s.cfg.Limits.MaxCallWait)
		}
		select {
		case <-ch:
		case <-status: // nil unless the live session is not Live
		case <-s.callLife.Done():
			return nil, 0, &StateError{State: Closed, Err: ErrClosed}
		case <-ctx.Done():
			// The caller gave up (the verdict stays canceled); the error
			// still says what kept the connection down.
			return nil, 0, &StateError{State: st, Reason: reason, Verdict: verdict, Err: ctx.Err(), redactor: &s.redact.Redactor}
		case <-timer.Chan():
			return nil, 0, &StateError{State: st, Verdict: verdict, Err: ErrWaitTimeout, redactor: &s.redact.Redactor}
		}
	}
}

// admit refuses, locally, a call to a tool the catalog lacks and any call
// inside an open rate-limit window. Called with s.mu held.
func (s *Supervisor) admit(op, name string) error {
	if op == "tools/call" && (s.snap.catalog == nil || s.snap.catalog.Tool(name) == nil) {
		return &CallError{redactor: &s.redact.Redactor, Op: op, Name: name, Verdict: classify.Verdict{Class: classify.Application, Method: op, Detail: "not in the catalog"}, Delivery: NotSent, Err: ErrUnknownTool}
	}
	if w := s.snap.rate; w != nil && !s.cfg.Limits.DisableRateLimitWindow && s.cfg.Observe.Clock.Now().Before(w.until) {
		return &CallError{redactor: &s.redact.Redactor, Op: op, Name: name, Verdict: w.verdict, Delivery: NotSent, Err: ErrRateLimited}
	}
	return nil
}

// delivery is how far a failed call got, by classify.DeliveryOf. Every
// session's client carries httpsession.FactsMiddleware, so an error with no wire
// facts never went out on the transport: not sent.
func delivery(err error, v classify.Verdict) Delivery {
	switch classify.DeliveryOf(err, v) {
	case classify.DeliveryAnswered:
		return Answered
	case classify.DeliveryOutcomeUnknown:
		return OutcomeUnknown
	}
	return NotSent
}

// callFailed emits the events of a failed call: its rate-limit window
// (set by failed) and the failure. Loop goroutine.
func (s *Supervisor) callFailed(gen uint64, ce *CallError) {
	v := ce.Verdict
	if v.Class == classify.RateLimited && v.RetryAfter > 0 && !s.cfg.Limits.DisableRateLimitWindow {
		s.emitEvent(events.Event{Kind: events.KindRateLimitWindow, Generation: gen, Delay: v.RetryAfter, Verdict: v})
	}
	s.emitEvent(events.Event{Kind: events.KindCallFailed, Generation: gen, Op: ce.Op, Name: ce.Name, Delivery: ce.Delivery.String(), Verdict: v})
}
