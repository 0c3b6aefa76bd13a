package fsm

import (
	"context"
	"slices"
	"time"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
)

// Defaults for a zero [Config] (the supervisor passes its Config through).
const (
	DefaultMaxSessions    = 10          // sessions per DefaultWindow before churn
	DefaultWindow         = time.Minute // the churn window
	DefaultListingRetries = 4           // listing retries on one session (5 listings)
)

// Config configures a [Machine]. The zero value is usable.
type Config struct {
	// MaxSessions is the churn limit: one more session (Dial or Attach)
	// within Window fails terminally with ReasonChurn. <= 0 means
	// DefaultMaxSessions.
	MaxSessions int
	Window      time.Duration // the churn window, measured with [Trigger.Now]; <= 0: DefaultWindow
	// ListingRetries is how often a listing that failed while the session is
	// fine ([GuardListingRetryLeft]) is retried on that session before it is
	// replaced. 0 means DefaultListingRetries; negative means none.
	ListingRetries int
}

// Machine is one connection's state machine, driven one trigger at a time by
// [Machine.Step]; the transitions are one shared stateless machine. Not safe
// for concurrent use; different Machines may step concurrently.
type Machine struct {
	maxSessions    int
	window         time.Duration
	listingRetries int

	st        events.State
	resume    ResumeMode // the persisted session held: Started's or a Reconnect's, ResumeNone once a Dial or ClearSession ran
	staleUsed bool
	gen       uint64
	attempt   int
	reason    events.Reason
	verdict   classify.Verdict // set in failed only
	sessions  []time.Time      // start times of the last MaxSessions sessions
	listFails int              // failed listings on the current session

	in guardInput // while a Step fires: what the guards read
}

// New returns a machine in [events.StateIdle].
func New(cfg Config) *Machine {
	if cfg.MaxSessions <= 0 {
		cfg.MaxSessions = DefaultMaxSessions
	}
	if cfg.Window <= 0 {
		cfg.Window = DefaultWindow
	}
	switch {
	case cfg.ListingRetries == 0:
		cfg.ListingRetries = DefaultListingRetries
	case cfg.ListingRetries < 0:
		cfg.ListingRetries = 0
	}
	return &Machine{maxSessions: cfg.MaxSessions, window: cfg.Window, listingRetries: cfg.ListingRetries, st: events.StateIdle}
}

// Outcome is what one Step did (etcd-io/raft's Ready).
type Outcome struct {
	// Event is the transition (internal ones too) with Kind, From, To,
	// Trigger, Guard, Verdict, Generation, Attempt and Reason set; the shell
	// stamps Server, Seq and Time. Zero when the trigger was absorbed.
	Event events.Event
	// Commands are the commands to execute, in order; nil when none.
	Commands []Command
}

// Transitioned reports whether Event is set.
func (o Outcome) Transitioned() bool { return o.Event.Kind != "" }

// Step feeds one trigger and returns what happened. Errors leave the machine unchanged: [*GenerationError] (a non-zero
// t.Generation other than the current one; a stale one is a late result to
// drop), [*VerdictError] (a failure trigger without a verdict),
// [*RejectedError] (not permitted here, or not a trigger kind). In
// [events.StateClosed] every trigger is absorbed: a zero Outcome, nil.
func (m *Machine) Step(t Trigger) (Outcome, error) {
	if m.st != events.StateClosed { // closed absorbs even malformed results
		if t.Generation != 0 && t.Generation != m.gen {
			return Outcome{}, &GenerationError{Trigger: t.Kind, Got: t.Generation, Current: m.gen}
		}
		if needsVerdict(t.Kind) && t.Verdict.Class == classify.None {
			return Outcome{}, &VerdictError{Trigger: t.Kind}
		}
	}
	if !carriesVerdict(t.Kind) {
		t.Verdict = classify.Verdict{}
	}
	from := m.st
	m.in = m.guardInputOf(&t)
	err := engine.FireCtx(context.WithValue(context.Background(), machineKey{}, m), t.Kind)
	i := m.rowTaken(from, t.Kind)
	m.in = guardInput{}
	if err != nil {
		return Outcome{}, err
	}
	if table[i].Ignore {
		return Outcome{}, nil
	}
	cmds := m.apply(i, &t)
	return Outcome{
		Event: events.Event{
			Kind: events.KindTransition, From: table[i].From, To: table[i].To,
			Trigger: t.Kind, Guard: table[i].GuardLabel(), Verdict: t.Verdict,
			Generation: m.gen, Attempt: m.attempt, Reason: m.reason,
		},
		Commands: cmds,
	}, nil
}

// guardInputOf is what the guards read of t; a RetryDue resumes as
// [Machine.RetryResume] says.
func (m *Machine) guardInputOf(t *Trigger) guardInput {
	in := guardInput{class: t.Verdict.Class, resume: t.Resume, now: t.Now}
	if t.Kind == events.TriggerRetryDue {
		in.resume = m.RetryResume()
	}
	return in
}

// rowTaken returns the row a fire of k from state from that returned no
// error took: the one whose guards pass, as the rows of a pair exclude each
// other (TestExhaustive) and an unguarded one is alone (TestUnguardedRowIsAlone).
func (m *Machine) rowTaken(from events.State, k events.Trigger) int {
	for _, i := range rowsOf(from, k) {
		if m.passes(i) {
			return i
		}
	}
	return -1
}

func (m *Machine) passes(i int) bool {
	for _, gd := range table[i].Guards {
		if !gd.eval(m) {
			return false
		}
	}
	return true
}

// apply performs row i's effects on the extended state and returns its
// commands (nil for none).
func (m *Machine) apply(i int, t *Trigger) []Command {
	r := &table[i]
	switch r.Trigger {
	case events.TriggerStarted:
		m.staleUsed = false
		m.resume = t.Resume
	case events.TriggerReconnectRequested:
		m.attempt = 0 // the churn window is kept: a reconnect is a session too
		m.resume = t.Resume
	case events.TriggerChurnCooled:
		m.attempt = 0
	}
	switch {
	case r.To == events.StateFailed && r.From != events.StateFailed:
		m.verdict = t.Verdict
	case r.To != events.StateFailed:
		m.verdict, m.reason = classify.Verdict{}, events.ReasonNone
	}
	switch r.Reason {
	case events.ReasonNone:
	case ReasonOfVerdict:
		m.reason = events.ReasonUnauthorized
		if t.Verdict.Class == classify.Canceled {
			m.reason = events.ReasonCanceled
		}
	default:
		m.reason = r.Reason
	}
	if r.To == events.StateStaleRecovering {
		m.staleUsed = true
	}
	if r.Trigger == events.TriggerDiscoveryFailed && r.Internal() {
		m.listFails++ // retried on this session
	}
	if r.To == events.StateReady {
		m.attempt = 0
	}
	var cmds []Command
	for _, k := range r.Commands {
		cmds = append(cmds, m.command(k, t))
	}
	return cmds
}

func (m *Machine) command(k CommandKind, t *Trigger) Command {
	cmd := Command{Kind: k, Generation: m.gen}
	switch k {
	case Dial, Attach:
		m.gen++
		m.listFails = 0
		m.noteSession(t.Now)
		cmd.Generation = m.gen
		if k == Attach {
			cmd.Resume = m.resume
		} else {
			m.resume = ResumeNone // a new session replaces the persisted one
		}
	case ClearSession:
		m.resume = ResumeNone
	case ScheduleRetry:
		m.attempt++
		cmd.Attempt = m.attempt
		cmd.Verdict = t.Verdict
	}
	return cmd
}

// noteSession records a session start, keeping the last MaxSessions starts
// inside the window: all churnLimitReached needs.
func (m *Machine) noteSession(now time.Time) {
	m.sessions = slices.DeleteFunc(m.sessions, func(ts time.Time) bool { return now.Sub(ts) >= m.window })
	if n := len(m.sessions) - m.maxSessions + 1; n > 0 {
		m.sessions = slices.Delete(m.sessions, 0, n)
	}
	m.sessions = append(m.sessions, now)
}

// churnLimitReached reports whether MaxSessions sessions already started
// within Window before now, so one more would exceed the limit.
func (m *Machine) churnLimitReached(now time.Time) bool {
	n := 0
	for _, ts := range m.sessions {
		if now.Sub(ts) < m.window {
			n++
		}
	}
	return n >= m.maxSessions
}

// State returns the current state.
func (m *Machine) State() events.State { return m.st }

// Generation returns the number of sessions (Dial, Attach) created so far.
func (m *Machine) Generation() uint64 { return m.gen }

// Attempt returns n after the n-th ScheduleRetry; 0 after a success or a
// reconnect request.
func (m *Machine) Attempt() int { return m.attempt }

// Reason returns why the failed state is terminal, else ReasonNone.
func (m *Machine) Reason() events.Reason { return m.reason }

// Terminal reports a failed state with a Reason: it will not retry.
func (m *Machine) Terminal() bool {
	return m.State() == events.StateFailed && m.reason != events.ReasonNone
}

// Verdict returns the verdict that moved the machine into failed; zero in
// any other state.
func (m *Machine) Verdict() classify.Verdict { return m.verdict }

// ListingRetries returns how many times the listing of the current session
// was retried on it (see [Config.ListingRetries]).
func (m *Machine) ListingRetries() int { return m.listFails }

// RetryResume returns how a RetryDue re-opens the connection: the persisted
// session's resume while the machine holds it (no Dial replaced it, no
// ClearSession forgot it) and its stale recovery is unused; else ResumeNone.
func (m *Machine) RetryResume() ResumeMode {
	if m.staleUsed {
		return ResumeNone
	}
	return m.resume
}

// StaleRecoveryUsed reports whether the current resume has used its one
// stale recovery (failure story S2).
func (m *Machine) StaleRecoveryUsed() bool { return m.staleUsed }
