package supervisor

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/httpsession"
	"github.com/mcpsup/mcpsup/probes"
	seam "github.com/mcpsup/mcpsup/session"
	"github.com/mcpsup/mcpsup/stdio"
)

// newCommand is New for a Config with a Command: sessions by a stdio.Dialer.
func newCommand(cfg Config) (*Supervisor, error) {
	switch {
	case cfg.Endpoint != "":
		return nil, fmt.Errorf("%w: Config.Endpoint and Config.Command: set one (a server is either streamable HTTP or stdio)", ErrConfigConflict)
	case cfg.Resume != nil:
		return nil, fmt.Errorf("%w: Config.Resume and Config.Command: a stdio server has no session to resume", ErrConfigConflict)
	case cfg.HTTP != HTTPConfig{}:
		return nil, fmt.Errorf("%w: Config.HTTP and Config.Command: a stdio server has no HTTP", ErrConfigConflict)
	case cfg.Stream != StreamConfig{}:
		return nil, fmt.Errorf("%w: Config.Stream and Config.Command: a stdio server has no standalone stream", ErrConfigConflict)
	}
	if err := cfg.Command.Validate(); err != nil {
		return nil, err
	}
	cfg, err := cfg.hostOptions()
	if err != nil {
		return nil, err
	}
	s := newSupervisor(cfg.withDefaults(), nil)
	version := "" // EraAuto: go-sdk's latest
	if s.cfg.Era != EraAuto {
		version = s.cfg.Era.String() // the era's protocol version
	}
	s.dial = &seamConnector{s: s, d: stdio.NewDialer(stdio.Options{
		Command: *s.cfg.Command, Name: s.cfg.Name, ProtocolVersion: version,
		KeepAlive: s.cfg.Recovery.KeepAlive, Clock: s.cfg.Observe.Clock, Logger: s.cfg.Observe.Logger,
		Limits: s.cfg.Limits.AnswerLimits.MessageLimits(s.cfg.Limits.MaxItems), MaxResponses: s.cfg.Limits.MaxResponsesInFlight,
		Redactor: &s.redact.Redactor,
	})}
	s.roots.add(cfg.Client.Roots)
	return s, nil
}

// addCommandSecrets masks a stdio server's Command.Env values and the
// credentials its Args carry (`--api-key VALUE`, an upstream URL's): a
// server may print them on stderr or stdout.
func (r *redactor) addCommandSecrets(cmd *stdio.Command) {
	if cmd == nil {
		return
	}
	for _, kv := range cmd.Env {
		_, v, _ := strings.Cut(kv, "=")
		r.AddLikelySecret(v)
	}
	r.AddCommandLineSecrets(cmd.Args)
}

// newHTTPDialer is the httpsession.Dialer of s.cfg; it keeps the era and
// the stream decision across sessions.
func newHTTPDialer(s *Supervisor) *httpsession.Dialer {
	cfg := s.cfg
	var remembered httpsession.StreamDecision
	resumed := ""
	if rs := cfg.Resume; rs != nil {
		remembered = httpsession.StreamDecision{Off: rs.StandaloneStream.Off, Since: rs.StandaloneStream.DecidedAt}
		resumed = rs.ProtocolVersion
	}
	t := httpsession.Config{
		Clock:                cfg.Observe.Clock,
		Logger:               cfg.Observe.Logger,
		MaxResponsesInFlight: cfg.Limits.MaxResponsesInFlight,
		Stream:               cfg.Stream.Keeper,
		OAuthHandler:         cfg.HTTP.OAuthHandler,
		OnCredential:         s.redact.addCredential,
		MaxListItems:         cfg.Limits.MaxItems,
	}
	return httpsession.NewDialer(httpsession.DialerOptions{
		Endpoint: cfg.Endpoint, HTTPClient: cfg.HTTP.HTTPClient, ClientInfo: cfg.Client.Implementation,
		Era: cfg.Era, EraReprobe: cfg.HTTP.EraReprobe, ResumedVersion: resumed,
		Stream: cfg.Stream.Policy, HostileRule: cfg.Stream.HostileRule, HostileMemory: cfg.Stream.HostileMemory,
		RememberedStream: remembered, AnswerLimits: cfg.Limits.AnswerLimits, Transport: t, KeepAlive: cfg.Recovery.KeepAlive,
		Observe: s.observer(&sessionHooks{s: s}), Served: s.served, // a StreamDecided is of no one generation
	})
}

// seamConnector opens sessions through a transport's seam.Dialer with the
// supervisor's go-sdk client, observer and roots.
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
		reqs.end() // before go-sdk's Close, which waits for the handlers
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

// releasing is a transport's session that ends what the supervisor runs
// for it (server requests' handlers, roots) before its own end.
type releasing struct {
	seam.Endable
	end func()
}

func (r *releasing) Close() error  { r.end(); return r.Endable.Close() }
func (r *releasing) Detach() error { r.end(); return r.Endable.Detach() }

// observer turns the facts of the session of h.gen into inputs of the
// loop; drops are throttled (reportDrop). Transport goroutines.
func (s *Supervisor) observer(h *sessionHooks) func(seam.Fact) {
	gen := h.gen
	return func(f seam.Fact) {
		switch f := f.(type) {
		case seam.Verified:
			s.post(emit(verifiedEvent(gen, f)))
		case seam.EraChanged:
			s.post(emit(events.Event{Kind: events.KindEraChanged, Generation: gen, Detail: f.Detail}))
		case seam.StreamRestored:
			s.post(func(s *Supervisor) { s.relistSoon(gen) })
		case seam.StreamDeclined:
			h.declined.Store(true)
			s.post(func(s *Supervisor) {
				s.streamDeclined(events.Event{Kind: events.KindStreamDeclined, Generation: gen, HTTPStatus: f.Status, ContentType: f.ContentType})
			})
		case seam.StreamDecided:
			s.post(func(s *Supervisor) { s.streamDecided(f) })
		case seam.EventDropped:
			if reportDrop(f.Count) {
				s.post(emit(events.Event{Kind: events.KindStreamEventDropped, Generation: gen, Count: f.Count, Detail: f.Err.Error()}))
			}
		case seam.ResponseDropped:
			if reportDrop(f.Count) {
				s.post(emit(events.Event{Kind: events.KindResponseDropped, Generation: gen, Count: f.Count, Bound: f.Bound}))
			}
		case seam.LineDropped:
			if reportDrop(f.Count) {
				s.post(emit(events.Event{Kind: events.KindStdoutLineDropped, Generation: gen, Count: f.Count, Detail: f.Why}))
			}
		case seam.ProcessExited:
			e := events.Event{Kind: events.KindProcessExited, Generation: gen, Detail: f.Err.Error()}
			if exit := (*stdio.ProcessExitError)(nil); errors.As(f.Err, &exit) {
				e.ExitCode, e.Signal, e.Stop, e.Detail = exit.Code, int(exit.Signal), string(exit.Stop), exit.Stderr
			}
			s.post(emit(e))
		}
	}
}

// streamDecided takes a change of the transport's standalone-stream decision.
func (s *Supervisor) streamDecided(d seam.StreamDecided) {
	kind := events.KindStreamEnabled
	if d.Off {
		kind = events.KindStreamDisabled
	}
	gen := s.loop.m.Generation()
	s.emitEvent(events.Event{Kind: kind, Generation: gen, Detail: d.Why})
	if d.Off && s.loop.m.State() == Ready {
		s.armPoll(gen) // no list_changed can arrive now
	}
}

// verifiedEvent is the event of a verification of the session of gen
// (seam.Verify).
func verifiedEvent(gen uint64, f seam.Verified) events.Event {
	e := events.Event{Kind: events.KindSessionVerified, Generation: gen, Alive: f.Alive}
	if !f.Alive {
		e.Verdict = classify.Error(f.Err)
	}
	return e
}

// sessionClient builds one session's go-sdk client: the host's options,
// handlers chained after the supervisor's, facts middleware innermost (the
// host's sees their errors), then the host's middleware.
func (s *Supervisor) sessionClient(h *sessionHooks, reqs *serverRequests, facts mcp.Middleware) *mcp.Client {
	cfg := s.cfg
	opts := cfg.Client.ClientOptions
	opts.KeepAlive = 0 // New mapped it to Config.Recovery.KeepAlive
	opts.ToolListChangedHandler = onListChanged(h, probes.Tools, opts.ToolListChangedHandler)
	opts.PromptListChangedHandler = onListChanged(h, probes.Prompts, opts.PromptListChangedHandler)
	opts.ResourceListChangedHandler = onListChanged(h, probes.Resources, opts.ResourceListChangedHandler)
	opts.ProgressNotificationHandler = progressThen(&s.progress, opts.ProgressNotificationHandler)
	cl := mcp.NewClient(cfg.Client.Implementation, &opts)
	cl.AddSendingMiddleware(facts, noListCache(h.listTTL), s.logLevelMeta())
	cl.AddSendingMiddleware(present(cfg.Client.SendingMiddleware)...)
	cl.AddReceivingMiddleware(reqs.middleware)
	cl.AddReceivingMiddleware(present(cfg.Client.ReceivingMiddleware)...)
	return cl
}

// present returns ms without its nil entries, which go-sdk would call.
func present(ms []mcp.Middleware) []mcp.Middleware {
	var out []mcp.Middleware
	for _, m := range ms {
		if m != nil {
			out = append(out, m)
		}
	}
	return out
}

// streamDeclined takes the event of a declined push stream.
func (s *Supervisor) streamDeclined(e events.Event) {
	if e.Generation != s.loop.m.Generation() {
		return // an earlier session's: its successor asks again
	}
	s.emitEvent(e)
	if s.loop.m.State() == Ready {
		s.armPoll(e.Generation) // no list_changed can arrive on this session
	}
}

// Bounds of the events of one session's drops.
const (
	maxDropEvents  = 16
	dropEventEvery = 1024
)

// reportDrop reports whether the n-th drop (from 1) has an event: each of
// the first maxDropEvents, then every dropEventEvery-th.
func reportDrop(n int) bool { return n <= maxDropEvents || n%dropEventEvery == 0 }

// dialSpec is what one Dial or Attach needs besides the config.
type dialSpec struct {
	gen    uint64
	resume *ResumeState // Attach only
	// hooks into the supervisor, bound to this generation
	hooks *sessionHooks
}

// opener opens the loop's sessions: seamConnector; tests script their own.
type opener interface {
	// Dial opens a new session with a full handshake.
	Dial(ctx context.Context, spec dialSpec) (seam.Endable, error)
	// Attach re-attaches the persisted session spec.resume without a
	// handshake on the wire.
	Attach(ctx context.Context, spec dialSpec) (seam.Endable, error)
}
