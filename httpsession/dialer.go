package httpsession

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/msgcheck"
	"github.com/mcpsup/mcpsup/session"
)

// DialerOptions configure a [Dialer]. Only Endpoint is required; every
// other zero field is its default.
type DialerOptions struct {
	Endpoint   string              // the MCP endpoint URL
	HTTPClient *http.Client        // the host's client ([Options.HTTPClient]); nil: http.DefaultClient
	ClientInfo *mcp.Implementation // [Options.ClientInfo]
	// Era is the host's era hint: [Era2025] is kept for good, any other is
	// learned from the sessions opened (decision record 0013).
	Era Era
	// EraReprobe is how long a learned 2025 era lasts. 0 means
	// [DefaultEraReprobe] (10 min); negative: for good.
	EraReprobe time.Duration
	// ResumedVersion is the protocol version of the persisted session the
	// supervisor resumes, if any: under [EraAuto] the era starts from it.
	ResumedVersion string
	// Stream, HostileRule, HostileMemory and RememberedStream are the
	// [SwitchConfig] (Mode, Rule, Memory, Remembered) every session shares.
	Stream           StreamMode
	HostileRule      HostilityRule
	HostileMemory    time.Duration
	RememberedStream StreamDecision
	// AnswerLimits bound the answers of every session, in place of the
	// Config's own bounds.
	AnswerLimits AnswerLimits
	// Transport configures every session ([Options.Wire]); its Switch,
	// OnExchange, OnStreamRestored, OnStreamDeclined, OnDroppedEvent,
	// OnDroppedResponse and FallbackAfterOutage are the dialer's.
	Transport Config
	// KeepAlive, when positive, pings each session at this interval
	// (session.StartKeepAlive); a dead ping ends the session.
	KeepAlive time.Duration
	// Observe receives the facts of no one session: each change of the
	// stream decision (session.StreamDecided), on the goroutine that
	// observed it; it must not block. nil: none wanted.
	Observe func(session.Fact)
	// Served reports whether the session of a generation has served (past
	// its handshake and first listing): a refusal of its era then ends it
	// at most once per EraReprobe. nil: every session is still opening.
	Served func(generation uint64) bool
}

// Dialer opens the streamable HTTP sessions of one supervisor
// (session.Dialer) and keeps what outlives a session: the era (changes are
// session.EraChanged facts to the Spec's Observe) and the stream decision
// (session.StreamDecided facts to DialerOptions.Observe). Safe for
// concurrent use; Close stops the decision's timer.
type Dialer struct {
	opts    DialerOptions // Transport and HTTPClient are in cfg
	cfg     *Config       // every session's, shared: defaults applied, never written
	clock   clockwork.Clock
	era     *eraMemory
	streams *StreamSwitch
}

var _ session.Dialer = (*Dialer)(nil)

// NewDialer returns a Dialer configured by opts.
func NewDialer(opts DialerOptions) *Dialer {
	cfg := opts.Transport
	opts.AnswerLimits.apply(&cfg)
	cfg.OnExchange, cfg.OnStreamRestored, cfg.OnStreamDeclined, cfg.OnDroppedEvent, cfg.OnDroppedResponse = nil, nil, nil, nil, nil
	cfg.FallbackAfterOutage = false // the dialer's: hooks
	cfg = cfg.withDefaults(opts.HTTPClient)
	opts.Transport, opts.HTTPClient = Config{}, nil
	d := &Dialer{opts: opts, cfg: &cfg, clock: cfg.Clock, era: newEraMemory(opts.Era, opts.EraReprobe)}
	if opts.Era == EraAuto && opts.ResumedVersion != "" {
		d.era.learn(d.clock.Now(), opts.ResumedVersion, nil)
	}
	observe := opts.Observe // the closure keeps this, not a copy of opts
	d.streams = NewStreamSwitch(SwitchConfig{Mode: opts.Stream, Rule: opts.HostileRule, Memory: opts.HostileMemory,
		Remembered: opts.RememberedStream, Clock: d.clock, OnStream: func(sd StreamDecision) {
			if observe != nil {
				observe(sd)
			}
		}})
	d.cfg.Switch = d.streams // every session inherits the decision
	return d
}

// StreamDecision is the stream decision now, as the resume state keeps it.
func (d *Dialer) StreamDecision() session.StreamDecided { return d.streams.Decision() }

// Close stops the stream decision's timer; sessions close on their own.
func (d *Dialer) Close() error {
	d.streams.Close()
	return nil
}

// Dial opens a new session with a full handshake, in the era remembered.
func (d *Dialer) Dial(ctx context.Context, spec session.Spec) (session.Session, error) {
	return d.open(spec, func(opts Options) (*Session, error) { return Open(ctx, opts) })
}

// Attach re-attaches spec.Resume without a handshake on the wire (see
// [Resume]); a spec without one is refused with session.ErrNoResume.
func (d *Dialer) Attach(ctx context.Context, spec session.Spec) (session.Session, error) {
	if spec.Resume == nil {
		return nil, session.ErrNoResume
	}
	r := spec.Resume
	st := ResumeState{SessionID: r.SessionID, ProtocolVersion: r.ProtocolVersion, InitializeResult: r.InitializeResult}
	return d.open(spec, func(opts Options) (*Session, error) { return Resume(ctx, opts, st) })
}

// open opens a session with open and learns the era it negotiated.
func (d *Dialer) open(spec session.Spec, open func(Options) (*Session, error)) (session.Session, error) {
	observe := spec.Observe
	if observe == nil {
		observe = func(session.Fact) {}
	}
	s := &httpSession{}
	opts := d.options(spec, s, observe)
	ws, err := open(opts)
	if err != nil {
		if c := d.era.dialFailed(opts.Era, err); c != nil {
			observe(*c)
		}
		return nil, err
	}
	var discover *Exchange
	if x, ok := ws.c.discovered(); ok {
		discover = &x
	}
	if c := d.era.learn(d.clock.Now(), ws.ProtocolVersion(), discover); c != nil {
		observe(*c)
	}
	s.start(ws, d.opts.KeepAlive, d.clock, d.cfg.Logger)
	d.watchEra(spec.Generation, s, observe)
	return s, nil
}

func (d *Dialer) options(spec session.Spec, s *httpSession, observe func(session.Fact)) Options {
	era, fallback := d.era.next(d.clock.Now())
	var client *mcp.Client
	if spec.Client != nil {
		client = spec.Client(FactsMiddleware())
	}
	return Options{Endpoint: d.opts.Endpoint, Client: client, Era: era, ClientInfo: d.opts.ClientInfo,
		shared: d.cfg, on: hooks{observe: observe, exchange: s.exchange, fallback: fallback}}
}

// watchEra ends a session whose request is answered with a refusal of its
// era ([VersionRefusal] on 2026-07-28, [LegacyRefusal] on 2025 unless
// pinned), detached, so that the next session discovers again.
func (d *Dialer) watchEra(gen uint64, s *httpSession, observe func(session.Fact)) {
	version := s.ws.ProtocolVersion()
	refusal := VersionRefusal
	if !msgcheck.ModernVersion(version) {
		if d.era.pinned {
			return
		}
		refusal = LegacyRefusal
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.eraWatch = func(x Exchange) bool {
		if !refusal(x) {
			return false
		}
		served := d.opts.Served != nil && d.opts.Served(gen)
		if d.era.refused(d.clock.Now(), served) && s.endedForEra(x) {
			why := session.EraRefusedOpening
			if served {
				why = session.EraRefusedLive
			}
			observe(*eraChange(version, "", why, x))
			go func() { _ = s.ws.Detach() }() // not on the conn's goroutine, which is inside a request
		}
		return true
	}
}

// Causes of a session's end, recorded until go-sdk's session has ended.
var (
	errEndedByWatch     = errors.New("mcpsup/httpsession: ended by an answer") // session gone, or its era refused
	errEndedByKeepAlive = errors.New("mcpsup/httpsession: ended by the keepalive")
	// ErrSessionEnded is the end of a session go-sdk ended by itself
	// without an error of its own (its connection closed).
	ErrSessionEnded = errors.New("mcpsup/httpsession: session ended")
)

// httpSession is one streamable HTTP session as session.Session, reporting
// its own end once, the first cause winning: a session-gone answer or a
// refusal of its era (a *classify.HTTPError carrying it), a dead keepalive,
// Close (session.ErrClosed) or Detach (session.ErrDetached). Safe for
// concurrent use.
type httpSession struct {
	session.ClientRequests
	session.End // Done, Err, AfterEnd
	ws          *Session
	ka          *session.KeepAlive // nil without a keepalive

	mu    sync.Mutex
	first error     // the first cause recorded, nil before
	fatal *Exchange // the first answer that ends the session
	// eraWatch reports an answer that refuses the era, ending the session
	// once (endedForEra); nil: not watched, or ended.
	eraWatch func(Exchange) bool
}

var _ session.Endable = (*httpSession)(nil)

// start runs the session on ws: its keepalive and the report of its end.
func (s *httpSession) start(ws *Session, every time.Duration, clock clockwork.Clock, log *slog.Logger) {
	s.ws = ws
	s.ClientRequests = session.NewClientRequests(ws.ClientSession())
	if every > 0 {
		s.ka = session.StartKeepAlive(clock, every, log, s.Alive, func() {
			s.record(errEndedByKeepAlive)
			_ = ws.Detach()
		})
	}
	// go-sdk closes its connection (conn.Close ends c.ctx) as its session
	// ends, and is done right after: no goroutine waits while it lives.
	context.AfterFunc(ws.c.ctx, func() {
		err := ws.Wait()
		s.End.Fail(s.cause(err))
	})
}

// record keeps err as the session's cause unless one came first.
func (s *httpSession) record(err error) {
	s.mu.Lock()
	if s.first == nil {
		s.first = err
	}
	s.mu.Unlock()
}

// endedBy keeps x as the answer that ends the session, unless one came first.
func (s *httpSession) endedBy(x Exchange) {
	s.mu.Lock()
	if s.fatal == nil {
		s.fatal = &x
	}
	if s.first == nil {
		s.first = errEndedByWatch
	}
	s.mu.Unlock()
}

// cause is why the session ended, go-sdk's wait having returned err.
func (s *httpSession) cause(err error) error {
	s.mu.Lock()
	first, fatal := s.first, s.fatal
	s.mu.Unlock()
	switch {
	case first == errEndedByKeepAlive:
		return s.ka.EndedBy()
	case first != nil && first != errEndedByWatch:
		return first
	case fatal != nil:
		return &classify.HTTPError{Exchange: *fatal, Err: err}
	}
	return cmp.Or(err, ErrSessionEnded)
}

// Fail ends the session with err (session.Verify) unless it ended already.
func (s *httpSession) Fail(err error) bool {
	s.record(err)
	return s.End.Fail(err)
}

func (s *httpSession) Info() session.Info {
	return session.Info{ID: s.ws.ID(), ProtocolVersion: s.ws.ProtocolVersion(), Initialize: s.ws.InitializeResult()}
}

// Status is Live until the session ends, then Ended.
func (s *httpSession) Status() (session.Status, <-chan struct{}) {
	if s.Ended() {
		return session.Ended, s.Done()
	}
	return session.Live, s.Done()
}

// Alive pings a 2025-era session; a 2026-07-28 one has no ping (go-sdk
// answers -32601), so it sends server/discover ([Session.Discover]).
func (s *httpSession) Alive(ctx context.Context) error {
	ctx = WithExchange(ctx)
	if !msgcheck.ModernVersion(s.ws.ProtocolVersion()) {
		return Annotate(ctx, s.ws.ClientSession().Ping(ctx, nil))
	}
	return Annotate(ctx, s.ws.Discover(ctx))
}

// Close ends the session with DELETE and waits for its end.
func (s *httpSession) Close() error { return s.stop(session.ErrClosed, s.ws.Close) }

// Detach ends the session without DELETE, resumable, and waits for its end.
func (s *httpSession) Detach() error { return s.stop(session.ErrDetached, s.ws.Detach) }

func (s *httpSession) stop(cause error, end func() error) error {
	s.record(cause)
	s.ka.Stop()
	err := end()
	<-s.Done()
	return err
}

// endedForEra records x as the answer the session ends with and stops the
// era watch: once per session.
func (s *httpSession) endedForEra(x Exchange) bool {
	s.mu.Lock()
	watched := s.eraWatch != nil
	s.eraWatch = nil
	s.mu.Unlock()
	if watched {
		s.endedBy(x)
	}
	return watched
}

// exchange watches the session's answers (Config.OnExchange).
func (s *httpSession) exchange(x Exchange) {
	if x.Local {
		return
	}
	s.mu.Lock()
	watch := s.eraWatch
	s.mu.Unlock()
	if watch != nil && watch(x) {
		return // a refusal of the era ends the session, or passes: re-discoveries are spaced
	}
	if x.SessionGone {
		s.endedBy(x) // only a session-gone answer ends a session
	}
}
