package supervisor

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

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
	c := &wireConnector{s: s, era: s.cfg.Era}
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
	w := &wireWatch{t: wire.NewHostilityTracker(c.s.cfg.HostileRule), hostile: spec.hooks.streamHostile}
	ws, err := open(c.options(spec, w))
	if err != nil {
		return nil, err
	}
	c.learn(ws.ProtocolVersion())
	return newWireSession(ws, w), nil
}

func (c *wireConnector) options(spec dialSpec, w *wireWatch) wire.Options {
	cfg := c.s.cfg
	c.mu.Lock()
	era := c.era
	c.mu.Unlock()
	stream := wire.StreamOn
	if !spec.stream {
		stream = wire.StreamOff
	}
	return wire.Options{
		Endpoint:   cfg.Endpoint,
		HTTPClient: cfg.HTTPClient,
		Client:     c.client(spec.hooks),
		Era:        era,
		Stream:     stream,
		Wire: wire.Config{
			Clock:            cfg.Clock,
			Logger:           cfg.Logger,
			OnExchange:       w.exchange,
			OnStreamAttempt:  w.attempt,
			OnStreamRestored: spec.hooks.streamRestored,
			Stream:           cfg.StreamKeeper,
		},
	}
}

// client builds the go-sdk client of one session: the host's options with
// the list-changed handlers chained to the supervisor's re-listing.
func (c *wireConnector) client(h sessionHooks) *mcp.Client {
	cfg := c.s.cfg
	opts := cfg.ClientOptions
	opts.KeepAlive = cfg.KeepAlive
	opts.ToolListChangedHandler = relistThen(h.listChanged, opts.ToolListChangedHandler)
	opts.PromptListChangedHandler = relistThen(h.listChanged, opts.PromptListChangedHandler)
	opts.ResourceListChangedHandler = relistThen(h.listChanged, opts.ResourceListChangedHandler)
	return mcp.NewClient(cfg.Implementation, &opts)
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

// wireWatch watches one session's exchanges: it applies the GET-hostility
// rule (failure story S5) and remembers the answer that ended the session, so
// that "session died" carries the HTTP facts go-sdk reports only as text.
// Records arrive from the transport's goroutines.
type wireWatch struct {
	mu      sync.Mutex
	t       *wire.HostilityTracker
	hostile func(why string) // the rule fired
	fatal   *wire.Exchange   // the first answer that ends a session
}

func (w *wireWatch) exchange(x wire.Exchange) {
	w.mu.Lock()
	fired := w.t.ObserveExchange(x) // a POST can complete the rule's evidence
	_, why := w.t.Hostile()
	if w.fatal == nil && !x.Local && (x.SessionGone || x.Status == 401) {
		w.fatal = &x
	}
	w.mu.Unlock()
	if fired && w.hostile != nil {
		w.hostile(why)
	}
}

func (w *wireWatch) attempt(a wire.StreamAttempt) {
	w.mu.Lock()
	fired := w.t.ObserveAttempt(a)
	_, why := w.t.Hostile()
	w.mu.Unlock()
	if fired && w.hostile != nil {
		w.hostile(why)
	}
}

// cause annotates the error a session ended with.
func (w *wireWatch) cause(err error) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fatal == nil {
		return err
	}
	return w.fatal.HTTPError(err)
}

// wireSession adapts a wire.Session to the supervisor's session.
type wireSession struct {
	probes.Lister
	ws    *wire.Session
	cs    *mcp.ClientSession
	watch *wireWatch
}

func newWireSession(ws *wire.Session, w *wireWatch) *wireSession {
	return &wireSession{Lister: factLister{probes.SessionLister(ws.ClientSession())}, ws: ws, cs: ws.ClientSession(), watch: w}
}

// factLister attaches the wire facts of each list request to its error, so
// discovery classifies a 401, a 404 or S2's null-id 400 by the HTTP answer,
// not by go-sdk's text.
type factLister struct{ l probes.Lister }

func (f factLister) ListTools(ctx context.Context, cursor string) ([]*mcp.Tool, string, error) {
	ctx = wire.WithExchange(ctx)
	items, next, err := f.l.ListTools(ctx, cursor)
	return items, next, wire.Annotate(ctx, err)
}

func (f factLister) ListResources(ctx context.Context, cursor string) ([]*mcp.Resource, string, error) {
	ctx = wire.WithExchange(ctx)
	items, next, err := f.l.ListResources(ctx, cursor)
	return items, next, wire.Annotate(ctx, err)
}

func (f factLister) ListPrompts(ctx context.Context, cursor string) ([]*mcp.Prompt, string, error) {
	ctx = wire.WithExchange(ctx)
	items, next, err := f.l.ListPrompts(ctx, cursor)
	return items, next, wire.Annotate(ctx, err)
}

func (f factLister) ListResourceTemplates(ctx context.Context, cursor string) ([]*mcp.ResourceTemplate, string, error) {
	ctx = wire.WithExchange(ctx)
	items, next, err := f.l.ListResourceTemplates(ctx, cursor)
	return items, next, wire.Annotate(ctx, err)
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

func (w *wireSession) Ping(ctx context.Context) error { return w.cs.Ping(ctx, nil) }

func (w *wireSession) ID() string                              { return w.ws.ID() }
func (w *wireSession) ProtocolVersion() string                 { return w.ws.ProtocolVersion() }
func (w *wireSession) InitializeResult() *mcp.InitializeResult { return w.ws.InitializeResult() }
func (w *wireSession) Wait() error                             { return w.watch.cause(w.ws.Wait()) }
func (w *wireSession) Close() error                            { return w.ws.Close() }
func (w *wireSession) Detach() error                           { return w.ws.Detach() }
func (w *wireSession) HoldStream(hold bool)                    { w.ws.Transport().HoldStream(hold) }
