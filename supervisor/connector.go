package supervisor

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/httpsession"
	"github.com/mcpsup/mcpsup/msgcheck"
	"github.com/mcpsup/mcpsup/probes"
	seam "github.com/mcpsup/mcpsup/session"
)

// wireConnector opens go-sdk sessions on mcpsup's wire transport.
type wireConnector struct {
	s   *Supervisor
	era *eraMemory // which handshake a new session starts with (era.go)
}

// newWireConnector starts from the configured era hint, or the era of the
// persisted session.
func newWireConnector(s *Supervisor) *wireConnector {
	c := &wireConnector{s: s, era: newEraMemory(s.cfg)}
	if s.cfg.Era == EraAuto && s.cfg.Resume != nil {
		c.era.learn(s.cfg.Clock.Now(), s.cfg.Resume.ProtocolVersion, nil)
	}
	return c
}

func (c *wireConnector) Dial(ctx context.Context, spec dialSpec) (session, error) {
	return c.connect(spec, func(opts httpsession.Options) (*httpsession.Session, error) { return httpsession.Open(ctx, opts) })
}

func (c *wireConnector) Attach(ctx context.Context, spec dialSpec) (session, error) {
	return c.connect(spec, func(opts httpsession.Options) (*httpsession.Session, error) {
		return httpsession.Resume(ctx, opts, spec.resume.wireState())
	})
}

// connect opens a session with open and learns the era it negotiated.
func (c *wireConnector) connect(spec dialSpec, open func(httpsession.Options) (*httpsession.Session, error)) (session, error) {
	w := &wireWatch{}
	reqs := c.s.serverRequests(spec.gen)
	opts := c.options(spec, w, reqs)
	c.s.roots.attach(opts.Client) // the roots, and their later changes
	ws, err := open(opts)
	if err != nil {
		reqs.handlers.close()
		c.s.roots.detach(opts.Client)
		if detail := c.era.dialFailed(opts.Era, err); detail != "" {
			c.s.post(eraChanged{gen: spec.gen, detail: detail})
		}
		return nil, err
	}
	var discover *httpsession.Exchange
	if x, ok := ws.Transport().DiscoverExchange(); ok {
		discover = &x
	}
	if detail := c.era.learn(c.s.cfg.Clock.Now(), ws.ProtocolVersion(), discover); detail != "" {
		c.s.post(eraChanged{gen: spec.gen, detail: detail})
	}
	c.watchEra(spec.gen, ws, w)
	sess := newWireSession(ws, w)
	sess.requests = reqs
	cl := opts.Client // captured alone: opts would stay on the heap with the session
	sess.unroot = func() { c.s.roots.detach(cl) }
	if every := c.s.cfg.KeepAlive; every > 0 {
		sess.ka = seam.StartKeepAlive(c.s.cfg.Clock, every, c.s.cfg.Logger, sess.Alive, func() { _ = ws.Detach() })
	}
	return sess, nil
}

func (c *wireConnector) options(spec dialSpec, w *wireWatch, reqs *serverRequests) httpsession.Options {
	cfg := c.s.cfg
	era, fallback := c.era.next(cfg.Clock.Now())
	opts := httpsession.Options{
		Endpoint:   cfg.Endpoint,
		HTTPClient: cfg.HTTPClient,
		Client:     c.client(spec.hooks, reqs),
		Era:        era,
		ClientInfo: cfg.Implementation,
		Wire: httpsession.Config{
			Switch:               c.s.streams, // every session inherits the decision
			Clock:                cfg.Clock,
			Logger:               cfg.Logger,
			OnExchange:           w.exchange,
			OnStreamRestored:     spec.hooks.streamRestored,
			OnStreamDeclined:     spec.hooks.streamDeclined,
			OnDroppedEvent:       c.droppedEvent(spec.gen),
			OnDroppedResponse:    c.droppedResponse(spec.gen),
			MaxResponsesInFlight: cfg.MaxResponsesInFlight,
			Stream:               cfg.StreamKeeper.toWire(),
			OAuthHandler:         cfg.OAuthHandler,
			OnCredential:         c.s.redact.addCredential,
			MaxListItems:         cfg.MaxItems, // a page past the list's bound is refused undecoded

			FallbackAfterOutage: fallback,
		},
	}
	cfg.AnswerLimits.apply(&opts.Wire)
	return opts
}

// droppedEvent relays the stream keeper's dropped events of generation gen
// into events of ours, as [commandConnector.dropped] does stdout lines
// (each of the first maxDropEvents, then every dropEventEvery-th, naming
// the count): a stream that puts a good event between its bad ones is
// never refused for drops in a row, and would flood the sink. The session
// is unaffected.
func (c *wireConnector) droppedEvent(gen uint64) func(*httpsession.EventError) {
	var n atomic.Int64
	return func(e *httpsession.EventError) {
		if k := int(n.Add(1)); reportDrop(k) {
			c.s.post(streamEventDropped{gen: gen, detail: fmt.Sprintf("%s (%d dropped in all)", e.Error(), k)})
		}
	}
}

// droppedResponse relays the responses the wire layer dropped in
// generation gen into events, as [commandConnector.dropped] does stdout
// lines: each of the first maxDropEvents, then every dropEventEvery-th.
func (c *wireConnector) droppedResponse(gen uint64) func(*httpsession.ResponseDroppedError) {
	return func(e *httpsession.ResponseDroppedError) {
		if reportDrop(e.Dropped) {
			c.s.post(responseDropped{gen: gen, detail: e.Error()})
		}
	}
}

// client builds the go-sdk client of one session, with the wire layer's
// facts on every request's error.
func (c *wireConnector) client(h *sessionHooks, reqs *serverRequests) *mcp.Client {
	return c.s.sessionClient(h, reqs, httpsession.FactsMiddleware())
}

// sessionClient builds the go-sdk client of one session of either
// connector: the host's options with the list-changed and progress handlers
// chained to the supervisor's, facts innermost (they tell classify how far
// each request got), then the host's middleware.
func (s *Supervisor) sessionClient(h *sessionHooks, reqs *serverRequests, facts mcp.Middleware) *mcp.Client {
	cfg := s.cfg
	opts := cfg.ClientOptions
	opts.KeepAlive = 0 // go-sdk's sends DELETE on any failed ping; New mapped it to Config.KeepAlive
	opts.ToolListChangedHandler = relistThen(h.toolsChanged, opts.ToolListChangedHandler)
	opts.PromptListChangedHandler = relistThen(h.promptsChanged, opts.PromptListChangedHandler)
	opts.ResourceListChangedHandler = relistThen(h.resourcesChanged, opts.ResourceListChangedHandler)
	opts.ProgressNotificationHandler = progressThen(&s.progress, opts.ProgressNotificationHandler)
	cl := mcp.NewClient(cfg.Implementation, &opts)
	// Every request's error carries its facts, so discovery and calls
	// classify by the answer, not by go-sdk's text. Added first, they are
	// innermost (each AddSendingMiddleware wraps the handler built so far):
	// the host's middleware wraps them and sees those errors.
	cl.AddSendingMiddleware(facts, noListCache(h.listTTL), s.logLevelMeta())
	cl.AddSendingMiddleware(present(cfg.SendingMiddleware)...)
	cl.AddReceivingMiddleware(reqs.middleware) // innermost: the host's sees its refusals
	cl.AddReceivingMiddleware(present(cfg.ReceivingMiddleware)...)
	return cl
}

// present returns ms without its nil entries, which go-sdk would call (a
// host's optional middleware left unset, the hub's ServerMiddleware with
// nothing for a server): a nil middleware is none.
func present(ms []mcp.Middleware) []mcp.Middleware {
	var out []mcp.Middleware
	for _, m := range ms {
		if m != nil {
			out = append(out, m)
		}
	}
	return out
}

// relistThen returns a list_changed handler that asks for a re-list
// (ours), then calls the host's handler, if any.
func relistThen[R any](ours, host func(context.Context, R)) func(context.Context, R) {
	if host == nil {
		return ours
	}
	return func(ctx context.Context, r R) {
		ours(ctx, r)
		host(ctx, r)
	}
}

// wireWatch remembers the answer that ended one session, so that "session
// died" carries the HTTP facts go-sdk reports only as text. Records arrive
// from the transport's goroutines.
type wireWatch struct {
	mu    sync.Mutex
	fatal *httpsession.Exchange // the first answer that ends a session
	// eraRefused hears each answer refusal reports as a refusal of the
	// session's era (era.go) until one ends the session (endedForEra).
	// nil: not watched, or ended already.
	eraRefused func(httpsession.Exchange)
	refusal    func(httpsession.Exchange) bool
}

// setEraRefused watches the session's answers for a refusal of its era, as
// refusal tells one: each is put to f until f ends the session for one
// (endedForEra). A refusal f lets pass, because re-discoveries are spaced,
// keeps the watch, so a refusal after the spacing still ends the session.
func (w *wireWatch) setEraRefused(refusal func(httpsession.Exchange) bool, f func(httpsession.Exchange)) {
	w.mu.Lock()
	w.refusal, w.eraRefused = refusal, f
	w.mu.Unlock()
}

// endedForEra records x as the answer the session ends with, and stops the
// era watch: once per session.
func (w *wireWatch) endedForEra(x httpsession.Exchange) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.eraRefused == nil {
		return false // another refusal ended it
	}
	w.eraRefused = nil
	if w.fatal == nil {
		w.fatal = &x
	}
	return true
}

func (w *wireWatch) exchange(x httpsession.Exchange) {
	if !x.Local && x.RPC.Present && (x.Status == http.StatusBadRequest || x.Status == http.StatusNotFound) {
		// Every era refusal is a 400 or 404 with a JSON-RPC error: no
		// other answer takes the lock.
		w.mu.Lock()
		refusal, f := w.refusal, w.eraRefused
		w.mu.Unlock()
		if f != nil && refusal(x) {
			f(x) // ends the session through endedForEra, or lets it pass
			return
		}
	}
	// Only a session-gone answer ends a session; a 401 (a call's, the
	// stream's) no longer does, and remembering one would make a later,
	// unrelated death look unauthorized, which is terminal.
	if x.Local || !x.SessionGone {
		return // every call's exchange: nothing kept, nothing allocated
	}
	fatal := new(httpsession.Exchange)
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

// wireSession adapts a httpsession.Session to the supervisor's session.
type wireSession struct {
	probes.Lister
	sdkCalls
	ws     *httpsession.Session
	watch  *wireWatch
	ka     *seam.KeepAlive // nil without Config.KeepAlive
	unroot func()          // stops root changes reaching the session's client
	// requests ends the server's requests' handlers before the session's
	// Close waits for them.
	requests *serverRequests
}

func newWireSession(ws *httpsession.Session, w *wireWatch) *wireSession {
	return &wireSession{Lister: probes.SessionLister(ws.ClientSession()), sdkCalls: sdkCalls{ws.ClientSession()}, ws: ws, watch: w}
}

func (w *wireSession) Ping(ctx context.Context) error {
	ctx = httpsession.WithExchange(ctx)
	return httpsession.Annotate(ctx, w.cs.Ping(ctx, nil))
}

// Alive pings a 2025-era session; a 2026-07-28 one has no ping (a go-sdk
// server answers it -32601), so it sends server/discover
// (httpsession.Session.Discover), which every server of that era serves, without
// side effects.
func (w *wireSession) Alive(ctx context.Context) error {
	if !msgcheck.ModernVersion(w.ws.ProtocolVersion()) {
		return w.Ping(ctx)
	}
	ctx = httpsession.WithExchange(ctx)
	return httpsession.Annotate(ctx, w.ws.Discover(ctx))
}

func (w *wireSession) ID() string                              { return w.ws.ID() }
func (w *wireSession) ProtocolVersion() string                 { return w.ws.ProtocolVersion() }
func (w *wireSession) InitializeResult() *mcp.InitializeResult { return w.ws.InitializeResult() }

// Wait returns the failed keepalive ping that ended the session, or why it
// ended by itself.
func (w *wireSession) Wait() error {
	err := w.ws.Wait()
	if cause := w.ka.EndedBy(); cause != nil {
		return cause
	}
	return w.watch.cause(err)
}

func (w *wireSession) Close() error  { w.end(); return w.ws.Close() }
func (w *wireSession) Detach() error { w.end(); return w.ws.Detach() }

func (w *wireSession) end() {
	w.requests.handlers.close() // before go-sdk's Close, which waits for the handlers
	w.ka.Stop()
	if w.unroot != nil {
		w.unroot()
	}
}
