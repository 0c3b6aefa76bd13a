package supervisor

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/httpsession"
	"github.com/mcpsup/mcpsup/probes"
	seam "github.com/mcpsup/mcpsup/session"
	"github.com/mcpsup/mcpsup/stdio"
)

func newStdioDialer(s *Supervisor) *stdio.Dialer {
	cfg := s.cfg
	version := "" // EraAuto: go-sdk's latest
	if cfg.Era != EraAuto {
		version = cfg.Era.String()
	}
	return stdio.NewDialer(stdio.Options{
		Command: *cfg.Command, Name: cfg.Name, ProtocolVersion: version,
		Logger: cfg.Observe.Logger,
		Limits: cfg.Limits.AnswerLimits.MessageLimits(cfg.Limits.MaxItems), MaxResponses: cfg.Limits.MaxResponsesInFlight,
		Redactor: &s.redact.Redactor,
	})
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

// newHTTPDialer's dialer keeps the era and the stream decision across
// sessions.
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
		Stream: httpsession.SwitchConfig{Mode: cfg.Stream.Policy, Rule: cfg.Stream.HostileRule, Memory: cfg.Stream.HostileMemory,
			Remembered: remembered, OnStream: s.streamDecided},
		AnswerLimits: cfg.Limits.AnswerLimits, Transport: t, Served: s.served,
	})
}

// seamConnector opens sessions through a transport's seam.Dialer.
type seamConnector struct {
	s *Supervisor
	d seam.Dialer
}

func (c *seamConnector) Open(ctx context.Context, spec dialSpec) (seam.Endable, error) {
	h := spec.hooks
	sp := seam.Spec{
		Generation: spec.gen,
		Client: func(facts mcp.Middleware) *mcp.Client {
			h.client = c.s.sessionClient(h, facts)
			c.s.roots.attach(h.client) // the roots, and their later changes
			return h.client
		},
		Observe: h.observe,
	}
	open := c.d.Dial
	if spec.resume != nil {
		r := seam.Resume(spec.resume.ResumeState)
		sp.Resume, open = &r, c.d.Attach
	}
	sess, err := open(ctx, sp)
	if err != nil {
		c.s.roots.detach(h.client) // nil when none was made: nothing
		h.endCalls()
	}
	return sess, err
}

// observe turns a fact of the session of h.gen into inputs of the loop.
// Transport goroutines.
func (h *held) observe(f seam.Fact) {
	s, gen := h.s, h.gen
	e := events.Event{Generation: gen}
	switch f := f.(type) {
	case seam.Verified:
		e.Kind, e.Alive = events.KindSessionVerified, f.Alive
		if !f.Alive {
			e.Verdict = classify.Error(f.Err)
		}
	case seam.EraChanged:
		e.Kind, e.EraFrom, e.EraTo, e.EraWhy = events.KindEraChanged, f.From, f.To, string(f.Why)
		e.Op, e.HTTPStatus, e.RPCCode = f.Method, f.Status, f.Code
	case seam.StreamRestored:
		s.post(func(s *Supervisor) { s.relistSoon(gen) })
	case seam.StreamDeclined:
		h.declined.Store(true)
		e.Kind, e.HTTPStatus, e.ContentType = events.KindStreamDeclined, f.Status, f.ContentType
		s.post(func(s *Supervisor) { s.streamChanged(e, true) })
		return
	case seam.EventDropped:
		e.Kind, e.Count, e.Why, e.Bytes, e.Bound = events.KindStreamEventDropped, f.Count, string(f.Why), f.Bytes, f.Bound
	case seam.ResponseDropped:
		e.Kind, e.Count, e.Bound = events.KindResponseDropped, f.Count, f.Bound
	case seam.LineDropped:
		e.Kind, e.Count, e.Why, e.Bound, e.RequestID = events.KindStdoutLineDropped, f.Count, string(f.Why), f.Bound, f.RequestID
	case seam.ProcessExited:
		e.Kind, e.Detail = events.KindProcessExited, f.Err.Error()
		if exit := (*stdio.ProcessExitError)(nil); errors.As(f.Err, &exit) {
			e.ExitCode, e.Signal, e.Stop, e.Detail = exit.Code, int(exit.Signal), string(exit.Stop), exit.Stderr
		}
	}
	if e.Kind != "" && (e.Count == 0 || reportDrop(e.Count)) {
		s.post(emit(e))
	}
}

// streamDecided takes a change of the stream decision, of no one session.
func (s *Supervisor) streamDecided(d httpsession.StreamDecision) {
	e := events.Event{Kind: events.KindStreamEnabled, Why: string(d.Why)}
	if d.Off {
		e.Kind = events.KindStreamDisabled
	}
	s.post(func(s *Supervisor) { s.streamChanged(e, d.Off) })
}

// streamChanged takes a change of the push stream of the session of
// e.Generation (0: the current one); off: a ready session is polled.
func (s *Supervisor) streamChanged(e events.Event, off bool) {
	gen := s.loop.m.Generation()
	if e.Generation != 0 && e.Generation != gen {
		return // an earlier session's: its successor asks again
	}
	e.Generation = gen
	s.emitEvent(e)
	if off && s.loop.m.State() == Ready {
		s.armPoll(gen)
	}
}

// sessionClient builds one session's go-sdk client: the host's options,
// its handlers after the supervisor's (go-sdk's 2026-07-28 listen asks for
// the list_changed notifications it has handlers for), the facts middleware
// innermost (the host's middleware sees their errors).
func (s *Supervisor) sessionClient(h *held, facts mcp.Middleware) *mcp.Client {
	cfg := &s.cfg.Client
	opts := cfg.ClientOptions
	opts.ToolListChangedHandler = then(func(*mcp.ToolListChangedRequest) { h.listChanged(probes.Tools) }, opts.ToolListChangedHandler)
	opts.PromptListChangedHandler = then(func(*mcp.PromptListChangedRequest) { h.listChanged(probes.Prompts) }, opts.PromptListChangedHandler)
	opts.ResourceListChangedHandler = then(func(*mcp.ResourceListChangedRequest) { h.listChanged(probes.Resources) }, opts.ResourceListChangedHandler)
	opts.ProgressNotificationHandler = then(func(r *mcp.ProgressNotificationClientRequest) {
		if r != nil && r.Params != nil { // extends the bounded calls of its token
			s.progress.progressed(r.Params.ProgressToken)
		}
	}, opts.ProgressNotificationHandler)
	cl := mcp.NewClient(cfg.Implementation, &opts)
	cl.AddSendingMiddleware(facts, noListCache(h.listTTL), s.logLevelMeta())
	cl.AddSendingMiddleware(present(cfg.SendingMiddleware)...)
	cl.AddReceivingMiddleware(h.middleware)
	cl.AddReceivingMiddleware(present(cfg.ReceivingMiddleware)...)
	return cl
}

// then is go-sdk's handler that runs ours, then the host's, if any.
func then[R any](ours func(R), host func(context.Context, R)) func(context.Context, R) {
	return func(ctx context.Context, r R) {
		ours(r)
		if host != nil {
			host(ctx, r)
		}
	}
}

func present(ms []mcp.Middleware) []mcp.Middleware {
	return slices.DeleteFunc(slices.Clone(ms), func(m mcp.Middleware) bool { return m == nil })
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
	hooks  *held        // of gen, before the session
}

// opener opens the loop's sessions (seamConnector; tests script their
// own): Dial, or Attach given spec.resume.
type opener interface {
	Open(ctx context.Context, spec dialSpec) (seam.Endable, error)
}
