package supervisor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/fsm"
	"github.com/mcpsup/mcpsup/httpsession"
	"github.com/mcpsup/mcpsup/msgcheck"
)

// Supervisor keeps one MCP server connection alive (see the package doc).
// All its methods are safe for concurrent use.
type Supervisor struct {
	cfg  Config
	dial opener

	inbox *serial[input]
	life  context.Context // ends on Close or Detach: cancels commands
	end   context.CancelFunc
	// callLife ends first on Close or Detach: calls end before the session
	// (a server may hold a DELETE until its requests return).
	callLife context.Context
	endCalls context.CancelFunc
	cmds     sync.WaitGroup // command goroutines (dial, attach, discovery)
	bg       sync.WaitGroup // session closers
	calls    sync.WaitGroup // host calls
	stopOnce sync.Once

	// ending holds, by session id, a channel closed once that session's
	// Detach returned: a re-attach waits for it, so nothing of the old
	// go-sdk session (whose JSON-RPC ids the new one reuses) follows.
	ending sync.Map

	mu        sync.Mutex
	snap      snapshot
	changed   chan struct{} // closed on the next snapshot change
	started   bool
	stopped   bool
	detaching atomic.Bool // the stop in progress is a Detach

	loop       loopState
	callServer string // CallInfo.Server: Config.Name masked
	sink       *sinkQueue

	streams  *httpsession.Dialer // keeps the stream decision; nil on stdio
	roots    rootSet
	progress progressCalls
	redact   redactor
	logLevel atomic.Value   // SetLoggingLevel's string
	jitter   func() float64 // [0, 1) for the ttl re-lists
}

// snapshot is what the host's goroutines read, guarded by Supervisor.mu.
type snapshot struct {
	state   State
	reason  Reason
	verdict classify.Verdict // the failure that moved it to failed
	gen     uint64
	live    *held        // in Ready, else nil
	catalog *Catalog     // nil before the first
	resume  *ResumeState // nil before the first session
	// Until rateUntil, calls fail at once with the verdict of the 429 that
	// opened the window.
	rateUntil  time.Time
	rateOf     classify.Verdict
	subs       map[string]bool
	sessionsUp int
	// reconnects counts Reconnects the loop has not taken yet: the
	// terminal failure is about to be left, WaitForState does not report it.
	reconnects int
}

// New validates cfg and returns an idle supervisor (Start starts it). It
// refuses a missing or malformed cfg.Endpoint with an *EndpointError, a
// malformed cfg.Resume with a *ResumeStateError, a malformed cfg.Command
// with a *stdio.CommandError (or stdio.ErrUnsupported off Unix), and two
// fields that ask for different things with an error wrapping
// ErrConfigConflict.
func New(cfg Config) (*Supervisor, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return newSupervisor(cfg.withDefaults(), nil), nil
}

func (c Config) validate() error {
	if ka := c.Client.ClientOptions.KeepAlive; ka > 0 && c.Recovery.KeepAlive > 0 && ka != c.Recovery.KeepAlive {
		return fmt.Errorf("%w: ClientOptions.KeepAlive %s and Config.Recovery.KeepAlive %s: set one (both mean the supervisor's keepalive)", ErrConfigConflict, ka, c.Recovery.KeepAlive)
	}
	if c.Command != nil {
		switch {
		case c.Endpoint != "":
			return fmt.Errorf("%w: Config.Endpoint and Config.Command: set one (a server is either streamable HTTP or stdio)", ErrConfigConflict)
		case c.Resume != nil:
			return fmt.Errorf("%w: Config.Resume and Config.Command: a stdio server has no session to resume", ErrConfigConflict)
		case c.HTTP != HTTPConfig{}:
			return fmt.Errorf("%w: Config.HTTP and Config.Command: a stdio server has no HTTP", ErrConfigConflict)
		case c.Stream != StreamConfig{}:
			return fmt.Errorf("%w: Config.Stream and Config.Command: a stdio server has no standalone stream", ErrConfigConflict)
		}
		return c.Command.Validate()
	}
	if err := validEndpoint(c.Endpoint); err != nil || c.Resume == nil {
		return err
	}
	if err := c.Resume.Validate(); err != nil {
		return err
	}
	// Never send one server's session id to another.
	switch ep := c.Resume.Endpoint; {
	case ep == "":
		return &ResumeStateError{Field: "endpoint", Reason: "missing: a resume state names the endpoint it was saved for"}
	case ep != c.Endpoint:
		return &ResumeStateError{Field: "endpoint", Reason: fmt.Sprintf("the state was saved for %q, not for Config.Endpoint %q", endpointText(msgcheck.CutText(ep, 200), ep), endpointText(c.Endpoint, c.Endpoint))}
	}
	return nil
}

// validEndpoint accepts an absolute http or https URL with a host.
func validEndpoint(endpoint string) error {
	if endpoint == "" {
		return &EndpointError{Reason: "missing: Config.Endpoint (a streamable HTTP URL) or Config.Command (a stdio server) is required"}
	}
	shown := endpointText(msgcheck.CutText(endpoint, 200), endpoint)
	u, err := url.Parse(endpoint)
	if err != nil {
		why := err.Error() // url.Error prints the URL with its credentials: its cause alone
		if ue, ok := errors.AsType[*url.Error](err); ok {
			why = ue.Err.Error()
		}
		return &EndpointError{Endpoint: shown, Reason: "not a URL: " + endpointText(why, endpoint)}
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return &EndpointError{Endpoint: shown, Reason: "want an absolute http or https URL"}
	}
	return nil
}

// newSupervisor builds a supervisor around d (tests); nil: cfg's dialer.
func newSupervisor(cfg Config, d opener) *Supervisor {
	life, end := context.WithCancel(context.Background())
	callLife, endCalls := context.WithCancel(context.Background())
	s := &Supervisor{
		cfg:      cfg,
		dial:     d,
		life:     life,
		end:      end,
		callLife: callLife,
		endCalls: endCalls,
		jitter:   rand.Float64,
	}
	s.inbox = newInbox(s)
	s.snap.state, s.snap.subs = Idle, map[string]bool{}
	s.redact.AddEndpointSecrets(cfg.Endpoint)
	s.redact.addCommandSecrets(cfg.Command)
	for _, v := range cfg.Observe.Secrets {
		s.redact.AddLikelySecret(v)
	}
	s.cfg.Observe.Logger = slog.New(events.RedactingHandler(&s.redact.Redactor, cfg.Observe.Logger.Handler()))
	if l := cfg.Client.ClientOptions.Logger; l != nil {
		s.cfg.Client.ClientOptions.Logger = slog.New(events.RedactingHandler(&s.redact.Redactor, l.Handler()))
	}
	if cfg.Resume != nil {
		rs := *cfg.Resume
		s.snap.resume = &rs
		s.redact.AddSessionID(rs.SessionID)
	}
	switch {
	case cfg.Command == nil:
		s.streams = newHTTPDialer(s)
		if s.dial == nil {
			s.dial = &seamConnector{s: s, d: s.streams}
		}
	case s.dial == nil:
		s.dial = &seamConnector{s: s, d: newStdioDialer(s)}
	}
	s.roots.add(cfg.Client.Roots)
	s.sink = newSinkQueue(cfg.Observe.Events, cfg.Observe.Logger, cfg.Name)
	s.callServer = s.redact.Text(cfg.Name)
	s.loop.m = fsm.New(fsm.Config{
		MaxSessions:    cfg.Recovery.MaxSessions,
		Window:         cfg.Recovery.ChurnWindow,
		ListingRetries: cfg.Recovery.ListingRetries,
	})
	s.loop.bo = cfg.Recovery.Backoff.newBackOff(cfg.Observe.Clock)
	return s
}

// Start opens a session, or resumes Config.Resume, and returns at once
// (watch WaitForState). Start after Close, Detach or Start does nothing.
func (s *Supervisor) Start() {
	s.mu.Lock()
	if s.stopped || s.started {
		s.mu.Unlock()
		return
	}
	s.started = true
	s.inbox.start() // under s.mu: posts are taken once started shows
	s.mu.Unlock()
	s.post(func(s *Supervisor) {
		s.step(fsm.Trigger{Kind: events.TriggerStarted, Resume: resumeMode(s.cfg.Resume)})
	})
}

// Close stops the supervisor and ends the server-side session (DELETE). It
// cancels in-flight calls and waits for them (CallHandler stages included),
// for every goroutine the supervisor started, and for the sink to have
// received every event; from a sink callback it does not wait for the sink.
// Idempotent; always nil. A silent server holds it at most 10 s: 5 s for
// go-sdk's notifications/cancelled (notifyCancellationTimeout), 5 s for the
// DELETE (Detach: the first 5 s only).
func (s *Supervisor) Close() error { return s.stop(events.TriggerCloseRequested) }

// Detach stops the supervisor like Close but keeps the server-side session
// alive (no DELETE), so a host that persisted ResumeState can resume it.
func (s *Supervisor) Detach() error { return s.stop(events.TriggerDetachRequested) }

func (s *Supervisor) stop(kind events.Trigger) error {
	fromSink := inSink()
	s.stopOnce.Do(func() {
		s.detaching.Store(kind == events.TriggerDetachRequested)
		s.mu.Lock()
		s.stopped = true // no new call from here on
		started := s.started
		s.mu.Unlock()
		s.endCalls()
		s.calls.Wait()
		if !started {
			s.setSnapshot(func(sn *snapshot) { sn.state = Closed })
		}
		// The loop takes what was posted, the close step included, and
		// ends; then its timers are stopped, so none posts again. A session
		// opened too late for the loop ends with its command.
		s.post(func(s *Supervisor) { s.step(fsm.Trigger{Kind: kind}) })
		s.inbox.wait(true)
		stopAll(s.loop.retry, s.loop.cooldown, s.loop.cat.gap, s.loop.cat.poll)
		s.loop.ttl.stop()
		for _, h := range s.loop.sessions {
			s.endSession(h, kind == events.TriggerDetachRequested)
		}
		s.end()
		s.cmds.Wait()
		s.bg.Wait()
		if s.streams != nil {
			_ = s.streams.Close()
		}
	})
	if !fromSink {
		s.sink.wait(false) // not from a sink: it would wait for itself
	}
	return nil
}

// State returns the current state.
func (s *Supervisor) State() State { return read(s, func(sn *snapshot) State { return sn.state }) }

// Generation returns the session generation: +1 per Dial or Attach tried,
// failed ones included (DESIGN.md section 2).
func (s *Supervisor) Generation() uint64 { return read(s, func(sn *snapshot) uint64 { return sn.gen }) }

// SessionsOpened returns how many sessions were opened or attached.
func (s *Supervisor) SessionsOpened() int {
	return read(s, func(sn *snapshot) int { return sn.sessionsUp })
}

func read[T any](s *Supervisor, f func(*snapshot) T) T {
	s.mu.Lock()
	defer s.mu.Unlock()
	return f(&s.snap)
}

// Failure returns the reason of a terminal failed state (ReasonNone when
// not terminal) and the verdict of the failure that led to failed.
func (s *Supervisor) Failure() (reason Reason, v classify.Verdict) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snap.reason, s.snap.verdict
}

// WaitForStateChange blocks until the state differs from from, or ctx is
// done; it reports whether the state changed (grpc-go's WaitForStateChange).
func (s *Supervisor) WaitForStateChange(ctx context.Context, from State) bool {
	return s.await(ctx, func() bool { return s.snap.state != from })
}

// WaitForState blocks until the state is want. Otherwise it returns a
// *StateError naming the state and the last failure's verdict, wrapping
// ctx.Err() when ctx ends, ErrClosed when the supervisor closes, or (unless
// want is Failed or Closed) ErrNotReady on a terminal failed state. After
// Reconnect it waits for the attempt Reconnect asked for.
func (s *Supervisor) WaitForState(ctx context.Context, want State) error {
	var err error
	if !s.await(ctx, func() bool {
		switch st := s.snap.state; {
		case st == want:
		case st == Closed:
			err = &StateError{State: st, Err: ErrClosed}
		case st == Failed && s.snap.reason != ReasonNone && want != Closed && s.snap.reconnects == 0:
			err = s.stateErrorLocked(ErrNotReady)
		default:
			return false
		}
		return true
	}) {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.stateErrorLocked(ctx.Err())
	}
	return err
}

// await reports whether cond, called with s.mu held, came to hold before
// ctx ended.
func (s *Supervisor) await(ctx context.Context, cond func() bool) bool {
	for {
		s.mu.Lock()
		if cond() {
			s.mu.Unlock()
			return true
		}
		ch := s.changedLocked()
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
	}
}

// refusalLocked returns why nothing is served now, as a *StateError
// (ErrClosed, or ErrNotReady before Start and in a terminal failed state);
// nil if calls may go out or wait. s.mu held.
func (s *Supervisor) refusalLocked() error {
	switch st := s.snap.state; {
	case s.stopped || st == Closed:
		return &StateError{State: Closed, Err: ErrClosed}
	case st == Idle && !s.started, st == Failed && s.snap.reason != ReasonNone:
		return s.stateErrorLocked(ErrNotReady)
	}
	return nil
}

// stateErrorLocked is the snapshot's *StateError wrapping err; s.mu held.
func (s *Supervisor) stateErrorLocked(err error) *StateError {
	return &StateError{State: s.snap.state, Reason: s.snap.reason, Verdict: s.snap.verdict, Err: err, redactor: &s.redact.Redactor}
}

// Catalog returns the catalog as last discovered, with its generation; Stale
// is true while the supervisor is not ready.
func (s *Supervisor) Catalog() Catalog {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.snap.catalog == nil {
		return Catalog{}
	}
	c := *s.snap.catalog
	c.Stale = s.snap.state != Ready && c.Generation != 0
	return c
}

// ResumeState returns the state to persist (see ResumeState): the live or
// last session's; Config.Resume before the first; nil between dropping a
// refused session id and the next session. Persist it after Detach, not
// Close.
func (s *Supervisor) ResumeState() *ResumeState {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.snap.resume == nil {
		return nil
	}
	rs := *s.snap.resume
	rs.StandaloneStream = StreamDecision{}
	if s.streams != nil {
		if d := s.streams.StreamDecision(); d.Off {
			rs.StandaloneStream = StreamDecision{Off: true, DecidedAt: d.Since}
		}
	}
	return &rs
}

// Reconnect asks for a fresh session, from a terminal failed state or from
// ready, and ends the rate-limit window. After a terminal unauthorized the
// resumable session is re-attached instead. It counts toward
// Config.Recovery.MaxSessions: past the limit it is held (ready stays; failed
// becomes churn). It returns at once.
func (s *Supervisor) Reconnect() {
	s.setSnapshot(func(sn *snapshot) { sn.reconnects++ })
	if !s.post((*Supervisor).reconnect) {
		s.setSnapshot(func(sn *snapshot) { sn.reconnects-- })
	}
}

// served reports whether the session of gen is the live one in ready.
func (s *Supervisor) served(gen uint64) bool {
	return read(s, func(sn *snapshot) bool { return sn.live != nil && sn.live.gen == gen })
}

func (s *Supervisor) setSnapshot(change func(*snapshot)) {
	s.mu.Lock()
	change(&s.snap)
	if s.changed != nil {
		close(s.changed)
		s.changed = nil
	}
	s.mu.Unlock()
}

// changedLocked returns the channel the next snapshot change closes; s.mu
// held.
func (s *Supervisor) changedLocked() <-chan struct{} {
	if s.changed == nil {
		s.changed = make(chan struct{})
	}
	return s.changed
}

// post hands in to the loop, never blocking; false (not taken) before
// Start and once the stop ended the loop.
func (s *Supervisor) post(in input) bool { return s.inbox.push(in) }

// cmdContext is one command's: it ends after d (a timeout verdict), on
// Close or Detach.
func (s *Supervisor) cmdContext(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(s.life, d, classify.ErrDeadline)
}

// String names the supervisor for logs.
func (s *Supervisor) String() string {
	return fmt.Sprintf("mcpsup.Supervisor(%s)", s.redact.Text(s.cfg.Name))
}

func resumeMode(rs *ResumeState) fsm.ResumeMode {
	switch {
	case rs == nil:
		return fsm.ResumeNone
	case rs.InitializeResult == nil:
		return fsm.ResumeBlind
	}
	return fsm.ResumeKnown
}

// reconnect takes a Reconnect (see there).
func (s *Supervisor) reconnect() {
	var rs *ResumeState
	s.setSnapshot(func(sn *snapshot) { sn.rateUntil, rs = time.Time{}, sn.resume })
	mode := fsm.ResumeNone
	if m := s.loop.m; m.State() == Failed && m.Reason() == ReasonUnauthorized && rs != nil && rs.SessionID != "" {
		mode = resumeMode(rs)
	}
	s.step(fsm.Trigger{Kind: events.TriggerReconnectRequested, Resume: mode})
	s.setSnapshot(func(sn *snapshot) { sn.reconnects-- }) // its outcome is published
}
