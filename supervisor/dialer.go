package supervisor

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/events"
	seam "github.com/mcpsup/mcpsup/session"
	"github.com/mcpsup/mcpsup/stdio"
)

// newCommand is New for a Config with a Command: a supervisor of a stdio
// server, its sessions opened by a stdio.Dialer.
func newCommand(cfg Config) (*Supervisor, error) {
	switch {
	case cfg.Endpoint != "":
		return nil, fmt.Errorf("%w: Config.Endpoint and Config.Command: set one (a server is either streamable HTTP or stdio)", ErrConfigConflict)
	case cfg.Resume != nil:
		return nil, fmt.Errorf("%w: Config.Resume and Config.Command: a stdio server has no session to resume", ErrConfigConflict)
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
	s.conn = &seamConnector{s: s, d: stdio.NewDialer(stdio.Options{
		Command: *s.cfg.Command, Name: s.cfg.Name, ProtocolVersion: version,
		KeepAlive: s.cfg.KeepAlive, Clock: s.cfg.Clock, Logger: s.cfg.Logger,
		Limits: s.cfg.AnswerLimits.decodeLimits(s.cfg.MaxItems), MaxResponses: s.cfg.MaxResponsesInFlight,
		Redactor: &s.redact.Redactor,
	})}
	s.roots.add(cfg.Roots)
	return s, nil
}

// addCommandSecrets registers the values of a stdio server's Command.Env
// as secrets (events.Redactor.AddLikelySecret), and the credentials its
// Args carry (events.Redactor.AddCommandLineSecrets: `--api-key VALUE`, an
// upstream URL's): they are the process's credentials, typically, and a
// server that prints one on stderr or stdout had it logged, quoted in a
// stdout-line-dropped event and in its exit's stderr tail. The hub does
// the same for a server's env values and args.
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

// seamConnector opens sessions through a transport's seam.Dialer: it
// builds each session's go-sdk client, turns the transport's facts into
// inputs of the loop, and ends what the supervisor runs for a session (the
// server's requests' handlers, the roots) when the session is released.
type seamConnector struct {
	s *Supervisor
	d seam.Dialer
}

func (c *seamConnector) Dial(ctx context.Context, spec dialSpec) (session, error) {
	return c.open(spec, func(sp seam.Spec) (seam.Session, error) { return c.d.Dial(ctx, sp) })
}

func (c *seamConnector) Attach(ctx context.Context, spec dialSpec) (session, error) {
	return c.open(spec, func(sp seam.Spec) (seam.Session, error) { return c.d.Attach(ctx, sp) })
}

func (c *seamConnector) open(spec dialSpec, open func(seam.Spec) (seam.Session, error)) (session, error) {
	reqs := c.s.serverRequests(spec.gen)
	var cl *mcp.Client
	sp := seam.Spec{
		Generation: spec.gen,
		Client: func(facts mcp.Middleware) *mcp.Client {
			cl = c.s.sessionClient(spec.hooks, reqs, facts)
			c.s.roots.attach(cl) // the roots, and their later changes
			return cl
		},
		Observe: c.s.observer(spec.gen),
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
	return &seamSession{Session: sess, end: end}, nil
}

// seamSession is a seam.Session as the loop drives it until the loop
// speaks the seam itself.
type seamSession struct {
	seam.Session
	end func()
}

func (w *seamSession) ID() string                              { return w.Info().ID }
func (w *seamSession) ProtocolVersion() string                 { return w.Info().ProtocolVersion }
func (w *seamSession) InitializeResult() *mcp.InitializeResult { return w.Info().Initialize }

// Wait returns why the session ended, once it has.
func (w *seamSession) Wait() error {
	<-w.Done()
	return w.Err()
}

func (w *seamSession) Close() error  { w.end(); return w.Session.Close() }
func (w *seamSession) Detach() error { w.end(); return w.Session.Detach() }

// observer turns the facts of the session of generation gen into inputs
// of the loop. A drop has an event for each of the first maxDropEvents,
// then every dropEventEvery-th, naming the count (reportDrop), so a flood
// of drops does not flood the sink. Called on the transport's goroutines.
func (s *Supervisor) observer(gen uint64) func(seam.Fact) {
	return func(f seam.Fact) {
		switch f := f.(type) {
		case seam.EraChanged:
			s.post(eraChanged{gen: gen, detail: f.Detail})
		case seam.StreamRestored:
			s.post(relistWanted{gen: gen})
		case seam.StreamDeclined:
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
				s.post(factEvent{events.Event{Kind: events.KindStdoutLineDropped, Generation: gen,
					Detail: fmt.Sprintf("stdout line %d dropped: %s", f.Count, f.Why)}})
			}
		case seam.ProcessExited:
			detail := f.Err.Error()
			if exit := (*stdio.ProcessExitError)(nil); errors.As(f.Err, &exit) && exit.Stderr != "" {
				detail += "; stderr: " + exit.Stderr
			}
			s.post(factEvent{events.Event{Kind: events.KindProcessExited, Generation: gen, Detail: detail}})
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

// Bounds of the events of one session's drops (stdout lines, responses,
// stream events, refused requests of the server).
const (
	maxDropEvents  = 16
	dropEventEvery = 1024
)

// reportDrop reports whether the n-th drop (from 1) has an event: each of
// the first maxDropEvents, then every dropEventEvery-th, so a flood of
// drops does not flood the sink.
func reportDrop(n int) bool { return n <= maxDropEvents || n%dropEventEvery == 0 }

// factEvent: a fact that is an event and nothing more.
type factEvent struct{ e events.Event }

func (in factEvent) take(s *Supervisor) { s.emitEvent(in.e) }
