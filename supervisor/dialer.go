package supervisor

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/probes"
	seam "github.com/mcpsup/mcpsup/session"
)

// seamConnector opens sessions through a transport's seam.Dialer: it
// builds each session's go-sdk client, turns the transport's facts into
// inputs of the loop, and ends what the supervisor runs for a session (the
// server's requests' handlers, the roots) when the session is released.
type seamConnector struct {
	s *Supervisor
	d seam.Dialer
}

func (c *seamConnector) Dial(ctx context.Context, spec dialSpec) (seam.Endable, error) {
	return c.open(spec, func(sp seam.Spec) (seam.Session, error) { return c.d.Dial(ctx, sp) })
}

func (c *seamConnector) Attach(ctx context.Context, spec dialSpec) (seam.Endable, error) {
	return c.open(spec, func(sp seam.Spec) (seam.Session, error) { return c.d.Attach(ctx, sp) })
}

func (c *seamConnector) open(spec dialSpec, open func(seam.Spec) (seam.Session, error)) (seam.Endable, error) {
	reqs := c.s.serverRequests(spec.gen)
	var cl *mcp.Client
	sp := seam.Spec{
		Generation: spec.gen,
		Client: func(facts mcp.Middleware) *mcp.Client {
			cl = c.s.sessionClient(spec.hooks, reqs, facts)
			c.s.roots.attach(cl) // the roots, and their later changes
			return cl
		},
		Observe: c.s.observer(spec.hooks),
	}
	if spec.resume != nil {
		r := spec.resume // the session part of the persisted state
		sp.Resume = &seam.Resume{SessionID: r.SessionID, ProtocolVersion: r.ProtocolVersion, InitializeResult: r.InitializeResult}
	}
	end := func() {
		reqs.handlers.close() // before go-sdk's Close, which waits for the handlers
		if cl != nil {
			c.s.roots.detach(cl)
		}
	}
	sess, err := open(sp)
	if err != nil {
		end()
		return nil, err
	}
	e, ok := sess.(seam.Endable)
	if !ok { // a transport's session embeds a seam.End, which has Fail
		_ = sess.Close()
		end()
		return nil, fmt.Errorf("mcpsup: the transport's session %T has no Fail (seam.Endable)", sess)
	}
	return &releasing{Endable: e, end: end}, nil
}

// releasing is a transport's session that, when the supervisor releases
// it, ends what the supervisor runs for it (the server's requests'
// handlers, the roots) before the transport's own end.
type releasing struct {
	seam.Endable
	end func()
}

func (r *releasing) Close() error  { r.end(); return r.Endable.Close() }
func (r *releasing) Detach() error { r.end(); return r.Endable.Detach() }

// observer turns the facts of the session of generation h.gen into
// inputs of the loop. A drop has an event for each of the first maxDropEvents,
// then every dropEventEvery-th, naming the count (reportDrop), so a flood
// of drops does not flood the sink. Called on the transport's goroutines.
func (s *Supervisor) observer(h *sessionHooks) func(seam.Fact) {
	gen := h.gen
	return func(f seam.Fact) {
		switch f := f.(type) {
		case seam.Verified:
			s.post(sessionVerified{gen: gen, f: f})
		case seam.EraChanged:
			s.post(eraChanged{gen: gen, detail: f.Detail})
		case seam.StreamRestored:
			s.post(relistWanted{gen: gen})
		case seam.StreamDeclined:
			h.declined.Store(true)
			s.post(streamDeclined{gen: gen, detail: declinedText(f.Status, f.ContentType)})
		case seam.StreamDecided:
			s.post(streamDecided{d: f})
		case seam.EventDropped:
			if reportDrop(f.Count) {
				s.post(streamEventDropped{gen: gen, detail: fmt.Sprintf("%s (%d dropped in all)", f.Err.Error(), f.Count)})
			}
		case seam.ResponseDropped:
			if reportDrop(f.Count) {
				s.post(responseDropped{gen: gen, detail: fmt.Sprintf(
					"response to a request of the server dropped (%d already in flight; %d dropped in all)", f.Bound, f.Count)})
			}
		case seam.LineDropped:
			if reportDrop(f.Count) {
				s.post(stdoutLineDropped{gen: gen, n: f.Count, why: f.Why})
			}
		case seam.ProcessExited:
			s.post(processExitedFact{gen: gen, err: f.Err})
		}
	}
}

// streamDecided: the standalone-stream decision of the transport changed.
type streamDecided struct{ d seam.StreamDecided }

func (in streamDecided) take(s *Supervisor) {
	kind := events.KindStreamEnabled
	if in.d.Off {
		kind = events.KindStreamDisabled
	}
	gen := s.loop.m.Generation()
	s.emitEvent(events.Event{Kind: kind, Generation: gen, Detail: in.d.Why})
	if in.d.Off && s.loop.m.State() == Ready {
		s.armPoll(gen) // no list_changed can arrive now
	}
}

// processExitedFact: a stdio server's process exited.
type processExitedFact struct {
	gen uint64
	err error
}

func (in processExitedFact) take(s *Supervisor) {
	s.emitEvent(events.Event{Kind: events.KindProcessExited, Generation: in.gen, Detail: in.err.Error()})
}

// sessionVerified: a verification of the session of gen (seam.Verify)
// had its outcome.
type sessionVerified struct {
	gen uint64
	f   seam.Verified
}

func (in sessionVerified) take(s *Supervisor) {
	e := events.Event{Kind: events.KindSessionVerified, Generation: in.gen, Detail: "answered: the session lives"}
	if !in.f.Alive {
		e.Verdict = classify.Error(in.f.Err)
		e.Detail = "not answered: the session ended"
	}
	s.emitEvent(e)
}

// ---- Temporary: the lead deletes from here to the end of the file at
// merge, once the HTTP and stdio transports implement seam.Dialer. ----

// session, connector and sdkCalls are the legacy session types the
// wire and command connectors still speak.
type session interface {
	probes.Lister
	CallTool(ctx context.Context, p *mcp.CallToolParams) (*mcp.CallToolResult, error)
	GetPrompt(ctx context.Context, p *mcp.GetPromptParams) (*mcp.GetPromptResult, error)
	ReadResource(ctx context.Context, p *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error)
	Complete(ctx context.Context, p *mcp.CompleteParams) (*mcp.CompleteResult, error)
	Subscribe(ctx context.Context, p *mcp.SubscribeParams) error
	Unsubscribe(ctx context.Context, p *mcp.UnsubscribeParams) error
	//lint:ignore SA1019 logging/setLevel is deprecated from protocol 2026-07-28 on, and still served by 2025-era servers
	SetLoggingLevel(ctx context.Context, p *mcp.SetLoggingLevelParams) error
	Alive(ctx context.Context) error
	ID() string
	ProtocolVersion() string
	InitializeResult() *mcp.InitializeResult
	Wait() error
	Close() error
	Detach() error
}

type connector interface {
	Dial(ctx context.Context, spec dialSpec) (session, error)
	Attach(ctx context.Context, spec dialSpec) (session, error)
}

type sdkCalls struct{ cs *mcp.ClientSession }

func (c sdkCalls) CallTool(ctx context.Context, p *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	return c.cs.CallTool(ctx, p)
}
func (c sdkCalls) GetPrompt(ctx context.Context, p *mcp.GetPromptParams) (*mcp.GetPromptResult, error) {
	return c.cs.GetPrompt(ctx, p)
}
func (c sdkCalls) ReadResource(ctx context.Context, p *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error) {
	return c.cs.ReadResource(ctx, p)
}
func (c sdkCalls) Complete(ctx context.Context, p *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	return c.cs.Complete(ctx, p)
}
func (c sdkCalls) Subscribe(ctx context.Context, p *mcp.SubscribeParams) error {
	return c.cs.Subscribe(ctx, p)
}
func (c sdkCalls) Unsubscribe(ctx context.Context, p *mcp.UnsubscribeParams) error {
	return c.cs.Unsubscribe(ctx, p)
}

//lint:ignore SA1019 logging/setLevel is deprecated from protocol 2026-07-28 on, and still served by 2025-era servers
func (c sdkCalls) SetLoggingLevel(ctx context.Context, p *mcp.SetLoggingLevelParams) error {
	//lint:ignore SA1019 logging/setLevel is deprecated from protocol 2026-07-28 on, and still served by 2025-era servers
	return c.cs.SetLoggingLevel(ctx, p)
}

// opener returns what opens the loop's sessions: the one set at
// construction, else the legacy connector (Supervisor.conn) adapted.
func (s *Supervisor) opener() opener {
	if s.dial != nil {
		return s.dial
	}
	return legacyConnector{s.conn}
}

// legacyConnector adapts a legacy connector to the seam.
type legacyConnector struct{ c connector }

func (l legacyConnector) Dial(ctx context.Context, spec dialSpec) (seam.Endable, error) {
	return adaptLegacy(l.c.Dial(ctx, spec))
}

func (l legacyConnector) Attach(ctx context.Context, spec dialSpec) (seam.Endable, error) {
	return adaptLegacy(l.c.Attach(ctx, spec))
}

// errEndedQuietly is a legacy session's end without a cause.
var errEndedQuietly = errors.New("mcpsup: the session ended by itself")

// legacySession is a legacy session as a seam.Session: one goroutine feeds
// its End from Wait; Close and Detach end it first with their own cause.
type legacySession struct {
	session
	end seam.End
	wg  sync.WaitGroup
}

func adaptLegacy(ls session, err error) (seam.Endable, error) {
	if err != nil {
		return nil, err
	}
	l := &legacySession{session: ls}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		err := ls.Wait()
		if err == nil {
			err = errEndedQuietly
		}
		l.end.Fail(err)
	}()
	return l, nil
}

func (l *legacySession) Info() seam.Info {
	return seam.Info{ID: l.ID(), ProtocolVersion: l.ProtocolVersion(), Initialize: l.InitializeResult()}
}

func (l *legacySession) Status() (seam.Status, <-chan struct{}) {
	if l.end.Ended() {
		return seam.Ended, nil
	}
	return seam.Live, l.end.Done()
}

func (l *legacySession) Done() <-chan struct{} { return l.end.Done() }
func (l *legacySession) Fail(err error) bool   { return l.end.Fail(err) }
func (l *legacySession) Err() error            { return l.end.Err() }

func (l *legacySession) Close() error {
	l.end.Fail(seam.ErrClosed)
	err := l.session.Close()
	l.wg.Wait()
	return err
}

func (l *legacySession) Detach() error {
	l.end.Fail(seam.ErrDetached)
	err := l.session.Detach()
	l.wg.Wait()
	return err
}

// pushDeclined (declined.go) moves out with the HTTP transport: the loop
// learns of a declined push stream from its fact (sessionHooks.declined).
var _ = pushDeclined
