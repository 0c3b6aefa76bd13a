package supervisor

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/jonboulle/clockwork"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/fsm"
	"github.com/mcpsup/mcpsup/wire"
)

// State is the connection state; see the fsm package for each state's
// meaning and docs/statechart.md for the transitions.
type State = fsm.State

// The states, re-exported from fsm.
const (
	Idle            = fsm.Idle
	Connecting      = fsm.Connecting
	ResumingBlind   = fsm.ResumingBlind
	ResumingKnown   = fsm.ResumingKnown
	Probing         = fsm.Probing
	ListingDeclared = fsm.ListingDeclared
	Ready           = fsm.Ready
	StaleRecovering = fsm.StaleRecovering
	Failed          = fsm.Failed
	Closed          = fsm.Closed
)

// Supervisor keeps one MCP server connection alive: it owns the state
// machine, opens, resumes and replaces sessions as the classifier's verdicts
// direct, and serves the host's calls through the live session.
//
// One goroutine (started by Start) owns the machine; every input (command
// results, timers, host requests, session death) reaches it through an inbox.
// All exported methods are safe for concurrent use from any goroutine.
type Supervisor struct {
	cfg   Config
	conn  connector
	clock clockwork.Clock

	inbox chan func()
	life  context.Context // ends on Close or Detach: cancels commands, ends the loop
	end   context.CancelFunc
	// callLife ends first on Close or Detach: in-flight calls are canceled
	// before the session is ended (a server may hold a DELETE until the
	// requests of the session return).
	callLife context.Context
	endCalls context.CancelFunc
	loopDone chan struct{}
	cmds     sync.WaitGroup // goroutines running commands (dial, attach, discovery)
	bg       sync.WaitGroup // session watchers and closers
	calls    sync.WaitGroup // in-flight host calls

	startOnce sync.Once
	stopOnce  sync.Once
	detaching atomic.Bool   // the stop in progress is a Detach
	loopID    atomic.Uint64 // goroutine id of the loop, for onLoop

	regMu sync.Mutex
	reg   map[session]bool // every session not yet closed or detached

	mu      sync.Mutex
	snap    snapshot
	changed chan struct{} // closed and replaced on every snapshot change
	started bool
	stopped bool

	loop loopState // owned by the loop goroutine

	// streams owns the standalone stream decision; every session shares it.
	streams *wire.StreamSwitch
	roots   rootSet // the host's roots, applied to every session (host_api.go)

	// redact keeps session ids (as short hashes) and credentials out of
	// events, errors and logs.
	redact redactor
}

// snapshot is what the host's goroutines read, guarded by Supervisor.mu.
type snapshot struct {
	state      State
	reason     fsm.Reason
	verdict    classify.Verdict
	gen        uint64
	live       *held // the live session in Ready, else nil
	catalog    Catalog
	resume     *ResumeState // what to persist; nil before the first session
	rateUntil  time.Time
	rateVerd   classify.Verdict
	subs       map[string]bool
	logLevel   string
	sessionsUp int // sessions opened (Dial or Attach succeeded)
}

// New validates cfg and returns an idle supervisor. It starts nothing: call
// Start. A malformed cfg.Resume is refused with a *ResumeStateError.
func New(cfg Config) (*Supervisor, error) {
	if err := validEndpoint(cfg.Endpoint); err != nil {
		return nil, err
	}
	if cfg.Resume != nil {
		if err := cfg.Resume.Validate(); err != nil {
			return nil, err
		}
		// Never send one server's session id to another: a state must say
		// where it was saved.
		switch ep := cfg.Resume.Endpoint; {
		case ep == "":
			return nil, &ResumeStateError{Field: "endpoint", Reason: "missing: a resume state names the endpoint it was saved for"}
		case ep != cfg.Endpoint:
			return nil, &ResumeStateError{Field: "endpoint", Reason: fmt.Sprintf("the state was saved for %q, not for Config.Endpoint %q", patterns(cutText(ep, 200)), patterns(cfg.Endpoint))}
		}
	}
	cfg, err := cfg.hostOptions()
	if err != nil {
		return nil, err
	}
	s := newSupervisor(cfg.withDefaults(), nil)
	s.conn = newWireConnector(s)
	s.roots.add(cfg.Roots)
	return s, nil
}

// validEndpoint accepts an absolute http or https URL with a host.
func validEndpoint(endpoint string) error {
	if endpoint == "" {
		return errors.New("mcpsup: Config.Endpoint is required")
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		// url.Error prints the URL, credentials included.
		return &redactedError{msg: patterns("mcpsup: Config.Endpoint: " + err.Error()), err: err}
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("mcpsup: Config.Endpoint %q: want an absolute http or https URL", patterns(cutText(endpoint, 200)))
	}
	return nil
}

// newSupervisor builds a supervisor around conn (nil: set by the caller).
func newSupervisor(cfg Config, conn connector) *Supervisor {
	life, end := context.WithCancel(context.Background())
	callLife, endCalls := context.WithCancel(life)
	s := &Supervisor{
		cfg:      cfg,
		conn:     conn,
		clock:    cfg.Clock,
		inbox:    make(chan func(), 64),
		life:     life,
		end:      end,
		callLife: callLife,
		endCalls: endCalls,
		loopDone: make(chan struct{}),
		changed:  make(chan struct{}),
		reg:      map[session]bool{},
	}
	s.snap.subs = map[string]bool{}
	s.redactLogs()
	var remembered wire.StreamDecision
	if cfg.Resume != nil {
		rs := *cfg.Resume
		s.snap.resume = &rs
		s.redact.AddSessionID(rs.SessionID)
		remembered = wire.StreamDecision{Off: rs.StandaloneStream.Off, Since: rs.StandaloneStream.DecidedAt}
	}
	s.streams = wire.NewStreamSwitch(wire.SwitchConfig{Mode: cfg.Stream.wireMode(), Rule: cfg.HostileRule,
		Memory: cfg.HostileMemory, Remembered: remembered, Clock: cfg.Clock, OnStream: s.streamDecided})
	s.loop.m = fsm.New(fsm.Config{
		Server:      cfg.Name,
		Sink:        events.SinkFunc(s.emitEvent),
		MaxSessions: cfg.MaxSessions,
		Window:      cfg.ChurnWindow,
	})
	s.loop.sessions = map[uint64]*held{}
	s.loop.found = map[uint64]*Catalog{}
	s.loop.bo = cfg.Backoff.newBackOff(cfg.Clock)
	return s
}

// streamDecided relays a change of the stream decision into an event
// (failure story S5); ResumeState reads the decision from s.streams. Called
// from wire's goroutines.
func (s *Supervisor) streamDecided(d wire.StreamDecision) {
	s.post(func() {
		kind := events.KindStreamEnabled
		if d.Off {
			kind = events.KindStreamDisabled
		}
		s.emitEvent(events.Event{Kind: kind, Generation: s.loop.m.Generation(), Detail: d.Why})
	})
}

// decisionOf is the persisted form of a stream decision.
func decisionOf(d wire.StreamDecision) StreamDecision {
	if !d.Off {
		return StreamDecision{}
	}
	return StreamDecision{Off: true, DecidedAt: d.Since}
}

// Start begins supervising: it opens a session, or resumes Config.Resume. It
// returns at once; watch State or WaitForState. Start after Close or Detach
// does nothing; a second Start does nothing.
func (s *Supervisor) Start() {
	s.startOnce.Do(func() {
		s.mu.Lock()
		if s.stopped {
			s.mu.Unlock()
			return
		}
		s.started = true
		s.mu.Unlock()
		go s.run()
		mode := fsm.ResumeNone
		if rs := s.cfg.Resume; rs != nil {
			mode = fsm.ResumeBlind
			if rs.InitializeResult != nil {
				mode = fsm.ResumeKnown
			}
		}
		s.post(func() { s.step(fsm.Trigger{Kind: fsm.Started, Resume: mode}) })
	})
}

// Close stops the supervisor and ends the server-side session (DELETE). It
// cancels in-flight calls and waits for them and for every goroutine the
// supervisor started. It is idempotent and safe from any goroutine, in any
// state; it returns once everything has stopped, except when called from an
// events sink (Config.Events), where it starts the stop and returns at once.
func (s *Supervisor) Close() error { return s.stop(fsm.CloseRequested) }

// Detach stops the supervisor like Close but keeps the server-side session
// alive (no DELETE), so a host that persisted ResumeState can resume it.
func (s *Supervisor) Detach() error { return s.stop(fsm.DetachRequested) }

func (s *Supervisor) stop(kind fsm.TriggerKind) error {
	if s.onLoop() {
		// Called from an events sink: the loop cannot run the stop while
		// it waits here. Stop from another goroutine; return at once.
		go s.stop(kind)
		return nil
	}
	s.stopOnce.Do(func() {
		s.detaching.Store(kind == fsm.DetachRequested)
		s.mu.Lock()
		s.stopped = true // no new call from here on
		started := s.started
		s.mu.Unlock()
		s.endCalls()
		s.calls.Wait()
		if started {
			done := make(chan struct{})
			if s.post(func() { s.step(fsm.Trigger{Kind: kind}); close(done) }) {
				<-done
			}
		} else {
			s.setSnapshot(func(sn *snapshot) { sn.state = Closed })
		}
		s.end() // cancels commands; the loop exits
		if started {
			<-s.loopDone
		}
		// Commands end with the life context; sessions they opened too late
		// for the loop are still registered and ended here.
		s.cmds.Wait()
		s.endLeftovers(kind == fsm.DetachRequested)
		s.bg.Wait()
		s.streams.Close()
	})
	return nil
}

// State returns the current state.
func (s *Supervisor) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snap.state
}

// Generation returns the session generation: the number of go-sdk client
// sessions this supervisor has tried to open or attach, failed attempts
// included (+1 per Dial or Attach, DESIGN.md section 2). Results of an older
// generation are dropped. SessionsOpened counts the ones that succeeded.
func (s *Supervisor) Generation() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snap.gen
}

// SessionsOpened returns how many sessions were opened or attached
// successfully.
func (s *Supervisor) SessionsOpened() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snap.sessionsUp
}

// Failure returns the reason of a terminal failed state ("unauthorized",
// "canceled", "budget-spent", "churn"; "" when not terminal) and the verdict
// of the failure that led to the failed state.
func (s *Supervisor) Failure() (reason string, v classify.Verdict) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snap.reason.String(), s.snap.verdict
}

// WaitForStateChange blocks until the state differs from from, or ctx is
// done; it reports whether the state changed (grpc-go's WaitForStateChange).
func (s *Supervisor) WaitForStateChange(ctx context.Context, from State) bool {
	for {
		s.mu.Lock()
		st, ch := s.snap.state, s.changed
		s.mu.Unlock()
		if st != from {
			return true
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
	}
}

// WaitForState blocks until the state is want, or ctx is done (ctx.Err()).
// It returns a *StateError wrapping ErrClosed if the supervisor closes first,
// and, unless want is Failed or Closed, one wrapping ErrNotReady (with the
// reason and verdict) if it reaches a terminal failed state, which only
// Reconnect leaves.
func (s *Supervisor) WaitForState(ctx context.Context, want State) error {
	for {
		s.mu.Lock()
		st, reason, verdict, ch := s.snap.state, s.snap.reason, s.snap.verdict, s.changed
		s.mu.Unlock()
		switch {
		case st == want:
			return nil
		case st == Closed:
			return &StateError{State: st.String(), Err: ErrClosed}
		case st == Failed && reason != fsm.ReasonNone && want != Closed:
			return &StateError{State: st.String(), Reason: reason.String(), Verdict: verdict, Err: ErrNotReady}
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Catalog returns the catalog as last discovered, with its generation; Stale
// is true while the supervisor is not ready.
func (s *Supervisor) Catalog() Catalog {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.snap.catalog
	c.Stale = s.snap.state != Ready && c.Generation != 0
	return c
}

// ResumeState returns the state a host persists to resume this session after
// a restart (see ResumeState): the live session's, or the last one's. It is
// Config.Resume before the first session (nil without it), and nil between
// dropping a stale or refused
// session id and opening the next session (then it is the new session's).
// Persist it after Detach, not after Close (which ended the server-side
// session).
func (s *Supervisor) ResumeState() *ResumeState {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.snap.resume == nil {
		return nil
	}
	rs := *s.snap.resume
	rs.StandaloneStream = decisionOf(s.streams.Decision())
	return &rs
}

// Reconnect asks for a fresh session: from a terminal failed state (after
// the host re-authorized, say), or from ready. After a terminal
// unauthorized, the session the supervisor holds resumable (see
// ResumeState) is re-attached instead, without initialize, when there is
// one: a credential that expired costs no server-side session. It returns
// at once.
func (s *Supervisor) Reconnect() {
	s.post(func() {
		s.setSnapshot(func(sn *snapshot) { sn.rateUntil = time.Time{} }) // the host decided to try again
		s.step(fsm.Trigger{Kind: fsm.ReconnectRequested, Resume: s.reconnectResume()})
	})
}

// setSnapshot changes the snapshot under the lock and wakes waiters.
func (s *Supervisor) setSnapshot(change func(*snapshot)) {
	s.mu.Lock()
	change(&s.snap)
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
}

// post hands f to the loop goroutine. It reports false, without running f,
// when the loop has ended. It never blocks past the loop's end.
func (s *Supervisor) post(f func()) bool {
	s.mu.Lock()
	started := s.started
	s.mu.Unlock()
	if !started {
		return false
	}
	select {
	case s.inbox <- f:
		return true
	case <-s.loopDone:
		return false
	case <-s.life.Done():
		// The loop may still run a last close or detach request.
		select {
		case s.inbox <- f:
			return true
		case <-s.loopDone:
			return false
		}
	}
}

// goCmd runs a command's I/O on a goroutine that Close waits for.
func (s *Supervisor) goCmd(f func()) {
	s.cmds.Add(1)
	go func() {
		defer s.cmds.Done()
		f()
	}()
}

// goBG runs f on a goroutine that Close waits for after the commands.
func (s *Supervisor) goBG(f func()) {
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		f()
	}()
}

// String names the supervisor for logs.
func (s *Supervisor) String() string {
	return fmt.Sprintf("mcpsup.Supervisor(%s)", s.redact.Text(s.cfg.Name))
}

var _ backoff.BackOff = (*backoff.ExponentialBackOff)(nil)
