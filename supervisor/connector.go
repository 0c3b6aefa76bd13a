package supervisor

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/probes"
	"github.com/mcpsup/mcpsup/wire"
)

// wireConnector opens go-sdk sessions on mcpsup's wire transport.
type wireConnector struct {
	s *Supervisor

	mu  sync.Mutex
	era wire.Era // Config.Era, then learned: a 2025-era server gets no server/discover
}

// newWireConnector starts from the configured era hint, or the era of the
// persisted session.
func newWireConnector(s *Supervisor) *wireConnector {
	c := &wireConnector{s: s, era: s.cfg.Era.toWire()}
	if c.era == wire.EraAuto && s.cfg.Resume != nil {
		c.learn(s.cfg.Resume.ProtocolVersion)
	}
	return c
}

// learn keeps the era of a protocol version a session negotiated or
// persisted, for the next handshakes; "" teaches nothing. Versions are
// dates, so they compare as strings: before 2026-07-28 is the 2025 era.
func (c *wireConnector) learn(version string) {
	if version == "" {
		return
	}
	era := wire.Era20260728
	if version < "2026-07-28" {
		era = wire.Era2025
	}
	c.mu.Lock()
	c.era = era
	c.mu.Unlock()
}

func (c *wireConnector) Dial(ctx context.Context, spec dialSpec) (session, error) {
	return c.connect(spec, func(opts wire.Options) (*wire.Session, error) { return wire.Open(ctx, opts) })
}

func (c *wireConnector) Attach(ctx context.Context, spec dialSpec) (session, error) {
	return c.connect(spec, func(opts wire.Options) (*wire.Session, error) {
		return wire.Resume(ctx, opts, spec.resume.wireState())
	})
}

// connect opens a session with open and learns the era it negotiated.
func (c *wireConnector) connect(spec dialSpec, open func(wire.Options) (*wire.Session, error)) (session, error) {
	w := &wireWatch{}
	opts := c.options(spec, w)
	c.s.roots.attach(opts.Client) // the roots, and their later changes
	ws, err := open(opts)
	if err != nil {
		c.s.roots.detach(opts.Client)
		return nil, err
	}
	c.learn(ws.ProtocolVersion())
	sess := newWireSession(ws, w)
	cl := opts.Client // captured alone: opts would stay on the heap with the session
	sess.unroot = func() { c.s.roots.detach(cl) }
	// go-sdk serves ping only before 2026-07-28 (ClientOptions.KeepAlive).
	if every := c.s.cfg.KeepAlive; every > 0 && ws.ProtocolVersion() < "2026-07-28" {
		sess.ka = startKeepalive(c.s.cfg.Clock, every, c.s.cfg.Logger, sess.Ping, func() { _ = ws.Detach() })
	}
	return sess, nil
}

func (c *wireConnector) options(spec dialSpec, w *wireWatch) wire.Options {
	cfg := c.s.cfg
	c.mu.Lock()
	era := c.era
	c.mu.Unlock()
	opts := wire.Options{
		Endpoint:   cfg.Endpoint,
		HTTPClient: cfg.HTTPClient,
		Client:     c.client(spec.hooks),
		Era:        era,
		Wire: wire.Config{
			Switch:           c.s.streams, // every session inherits the decision
			Clock:            cfg.Clock,
			Logger:           cfg.Logger,
			OnExchange:       w.exchange,
			OnStreamRestored: spec.hooks.streamRestored,
			OnDroppedEvent:   c.droppedEvent(spec.gen),
			Stream:           cfg.StreamKeeper.toWire(),
			OAuthHandler:     cfg.OAuthHandler,
		},
	}
	cfg.AnswerLimits.apply(&opts.Wire)
	return opts
}

// droppedEvent relays the stream keeper's dropped events of generation gen
// into events of ours; the session is unaffected.
func (c *wireConnector) droppedEvent(gen uint64) func(*wire.EventError) {
	return func(e *wire.EventError) {
		c.s.post(streamEventDropped{gen: gen, detail: e.Error()})
	}
}

// client builds the go-sdk client of one session: the host's options with
// the list-changed handlers chained to the supervisor's re-listing.
func (c *wireConnector) client(h sessionHooks) *mcp.Client {
	cfg := c.s.cfg
	opts := cfg.ClientOptions
	opts.KeepAlive = 0 // go-sdk's sends DELETE on any failed ping; New mapped it to Config.KeepAlive
	opts.ToolListChangedHandler = relistThen(func() { h.listChanged(probes.Tools) }, opts.ToolListChangedHandler)
	opts.PromptListChangedHandler = relistThen(func() { h.listChanged(probes.Prompts) }, opts.PromptListChangedHandler)
	opts.ResourceListChangedHandler = relistThen(func() { h.listChanged(probes.Resources) }, opts.ResourceListChangedHandler)
	opts.ProgressNotificationHandler = progressThen(&c.s.progress, opts.ProgressNotificationHandler)
	cl := mcp.NewClient(cfg.Implementation, &opts)
	// Every request's error carries its wire facts, so discovery and calls
	// classify by the HTTP answer, not by go-sdk's text. Added first, they
	// are innermost (each AddSendingMiddleware wraps the handler built so
	// far): the host's middleware wraps them and sees those errors.
	cl.AddSendingMiddleware(wire.FactsMiddleware(), noListCache)
	cl.AddSendingMiddleware(cfg.SendingMiddleware...)
	cl.AddReceivingMiddleware(cfg.ReceivingMiddleware...)
	return cl
}

// relistThen returns a list_changed handler that asks for a re-list, then
// calls the host's handler, if any.
func relistThen[R any](relist func(), host func(context.Context, R)) func(context.Context, R) {
	return func(ctx context.Context, r R) {
		relist()
		if host != nil {
			host(ctx, r)
		}
	}
}

// wireWatch remembers the answer that ended one session, so that "session
// died" carries the HTTP facts go-sdk reports only as text. Records arrive
// from the transport's goroutines.
type wireWatch struct {
	mu    sync.Mutex
	fatal *wire.Exchange // the first answer that ends a session
}

func (w *wireWatch) exchange(x wire.Exchange) {
	// Only a session-gone answer ends a session; a 401 (a call's, the
	// stream's) no longer does, and remembering one would make a later,
	// unrelated death look unauthorized, which is terminal.
	if x.Local || !x.SessionGone {
		return // every call's exchange: nothing kept, nothing allocated
	}
	fatal := new(wire.Exchange)
	*fatal = x
	w.mu.Lock()
	if w.fatal == nil {
		w.fatal = fatal
	}
	w.mu.Unlock()
}

// cause annotates the error a session ended with.
func (w *wireWatch) cause(err error) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fatal == nil {
		return err
	}
	return &classify.HTTPError{Exchange: *w.fatal, Err: err}
}

// wireSession adapts a wire.Session to the supervisor's session.
type wireSession struct {
	probes.Lister
	ws     *wire.Session
	cs     *mcp.ClientSession
	watch  *wireWatch
	ka     *keepalive // nil without Config.KeepAlive
	unroot func()     // stops root changes reaching the session's client
}

func newWireSession(ws *wire.Session, w *wireWatch) *wireSession {
	return &wireSession{Lister: probes.SessionLister(ws.ClientSession()), ws: ws, cs: ws.ClientSession(), watch: w}
}

func (w *wireSession) CallTool(ctx context.Context, p *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	return w.cs.CallTool(ctx, p)
}
func (w *wireSession) GetPrompt(ctx context.Context, p *mcp.GetPromptParams) (*mcp.GetPromptResult, error) {
	return w.cs.GetPrompt(ctx, p)
}
func (w *wireSession) ReadResource(ctx context.Context, p *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error) {
	return w.cs.ReadResource(ctx, p)
}
func (w *wireSession) Complete(ctx context.Context, p *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	return w.cs.Complete(ctx, p)
}
func (w *wireSession) Subscribe(ctx context.Context, p *mcp.SubscribeParams) error {
	return w.cs.Subscribe(ctx, p)
}
func (w *wireSession) Unsubscribe(ctx context.Context, p *mcp.UnsubscribeParams) error {
	return w.cs.Unsubscribe(ctx, p)
}

//lint:ignore SA1019 logging/setLevel is deprecated from protocol 2026-07-28 on, and still served by 2025-era servers
func (w *wireSession) SetLoggingLevel(ctx context.Context, p *mcp.SetLoggingLevelParams) error {
	//lint:ignore SA1019 logging/setLevel is deprecated from protocol 2026-07-28 on, and still served by 2025-era servers
	return w.cs.SetLoggingLevel(ctx, p)
}

func (w *wireSession) Ping(ctx context.Context) error {
	ctx = wire.WithExchange(ctx)
	return wire.Annotate(ctx, w.cs.Ping(ctx, nil))
}

func (w *wireSession) ID() string                              { return w.ws.ID() }
func (w *wireSession) ProtocolVersion() string                 { return w.ws.ProtocolVersion() }
func (w *wireSession) InitializeResult() *mcp.InitializeResult { return w.ws.InitializeResult() }

// Wait returns the failed keepalive ping that ended the session, or why it
// ended by itself.
func (w *wireSession) Wait() error {
	err := w.ws.Wait()
	if cause := w.ka.endedBy(); cause != nil {
		return cause
	}
	return w.watch.cause(err)
}

func (w *wireSession) Close() error  { w.end(); return w.ws.Close() }
func (w *wireSession) Detach() error { w.end(); return w.ws.Detach() }

func (w *wireSession) end() {
	w.ka.stop()
	if w.unroot != nil {
		w.unroot()
	}
}
