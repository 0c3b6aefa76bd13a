package fsm

import (
	"time"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
)

// Defaults for a zero [Config]: the churn limit, the one place it is set
// (the supervisor passes its Config through).
const (
	// DefaultMaxSessions: more than 10 new sessions within DefaultWindow is
	// churn.
	DefaultMaxSessions = 10
	// DefaultWindow is the churn window: one minute.
	DefaultWindow = time.Minute
	// DefaultListingRetries: a session whose handshake succeeded may have
	// its listing retried 4 times (5 listings in all) before it is
	// replaced.
	DefaultListingRetries = 4
)

// Config configures a [Machine]. The zero value is usable.
type Config struct {
	// MaxSessions is the churn limit: opening more than MaxSessions sessions
	// (Dial or Attach commands, retries included) within Window moves to a
	// terminal failed state with ReasonChurn instead. Zero (or negative)
	// means DefaultMaxSessions (10).
	MaxSessions int
	// Window is the churn window, measured with [Trigger.Now]. Zero (or
	// negative) means DefaultWindow (1 minute).
	Window time.Duration
	// ListingRetries is how many times the listing of a session whose
	// handshake succeeded (connecting, stale-recovering) is retried on that
	// same session, on the retry schedule, when it fails with a verdict
	// that says the session is fine (forbidden, rate-limited, server-error,
	// application, timeout); the next such failure replaces the session.
	// Zero means DefaultListingRetries (4); negative means none: every
	// failed listing replaces the session.
	ListingRetries int
}

// Machine is one connection's state machine: a pure core driven one trigger
// at a time by [Machine.Step], which returns what happened (DESIGN.md
// sections 2 and 5). It never performs I/O, never reads a clock, never
// starts a goroutine, never emits: the shell does.
//
// A Machine holds only its connection's state, a few words; the transitions
// live in one stateless machine built once and shared by every Machine.
// A Machine is not safe for concurrent use: one goroutine owns it. Different
// Machines may step concurrently.
type Machine struct {
	maxSessions    int
	window         time.Duration
	listingRetries int

	st        stateID
	resume    ResumeMode // the persisted session held: Started's or a Reconnect's, ResumeNone once a Dial or ClearSession ran
	staleUsed bool
	gen       uint64
	attempt   int
	reason    events.Reason
	verdict   *classify.Verdict // set in failed only: an idle connection holds no verdict
	sessions  []time.Time       // start times of the last MaxSessions sessions
	listFails int               // failed listings on the current session

	// While a Step fires the engine: what the guards read and the guarded
	// row whose guards passed (-1 for none).
	in     guardInput
	passed int
	out    []Command // reused by every Step
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
	return &Machine{maxSessions: cfg.MaxSessions, window: cfg.Window, listingRetries: cfg.ListingRetries, passed: -1}
}

// Outcome is what one Step did (etcd-io/raft's Ready): the transition, as an
// event for the shell to emit, and the commands for it to execute.
type Outcome struct {
	// Event is the transition event, internal transitions included: Kind
	// events.KindTransition, From, To, Trigger, Guard, Verdict, Generation,
	// Attempt and Reason. The shell stamps Server, Seq and Time when it
	// emits it. The zero Event (Kind "") when the trigger was absorbed
	// without a transition (an ignore row, or Closed).
	Event events.Event
	// Commands are the commands to execute, in order; nil when none. The
	// slice is owned by the machine and valid until the next Step.
	Commands []Command
}

// Transitioned reports whether the step took a transition (internal ones
// included), i.e. whether Event is set.
func (o Outcome) Transitioned() bool { return o.Event.Kind != "" }

// Step feeds one trigger and returns what happened.
//
// Errors (the machine is unchanged after any of them):
//   - [*GenerationError] (ErrStaleGeneration, ErrFutureGeneration): a
//     non-zero t.Generation other than the current one; a stale one is the
//     normal fate of a late result of an old session and can be dropped;
//   - [*VerdictError] (ErrMissingVerdict): HandshakeFailed or
//     DiscoveryFailed without a verdict;
//   - [*RejectedError] (ErrRejected): the table does not permit the trigger
//     in the current state, or t.Kind is not a trigger kind.
//
// In [events.StateClosed] every trigger is absorbed: a zero Outcome, nil.
func (m *Machine) Step(t Trigger) (o Outcome, err error) {
	if m.st != closedID { // closed absorbs even malformed results
		if t.Generation != 0 && t.Generation != m.gen {
			return Outcome{}, &GenerationError{Trigger: t.Kind, Got: t.Generation, Current: m.gen}
		}
		if needsVerdict(t.Kind) && t.Verdict.Class == classify.None {
			return Outcome{}, &VerdictError{Trigger: t.Kind}
		}
	}
	k, ok := triggerIndex(t.Kind)
	if !ok {
		return Outcome{}, rejected(m.State(), t.Kind)
	}
	if !carriesVerdict(t.Kind) {
		t.Verdict = classify.Verdict{}
	}
	from := m.st
	m.in = m.guardInputOf(&t)
	err = engine.FireCtx(stepContext{m}, k)
	i := m.rowTaken(from, k)
	m.in, m.passed = guardInput{}, -1
	if err != nil || table[i].Ignore { // i is valid when err is nil
		return Outcome{}, err
	}
	m.out = m.out[:0]
	m.apply(i, &t)
	// Fields set in the result in place: a composite literal is built
	// aside and copied (an Outcome is over 500 bytes).
	o.Event.Kind = events.KindTransition
	o.Event.From, o.Event.To = table[i].From, table[i].To
	o.Event.Trigger, o.Event.Guard = t.Kind, guardLabels[i]
	o.Event.Verdict = t.Verdict
	o.Event.Generation, o.Event.Attempt, o.Event.Reason = m.gen, m.attempt, m.reason
	if len(m.out) > 0 {
		o.Commands = m.out
	}
	return o, nil
}

var closedID, _ = stateIndex(events.StateClosed)

// guardInputOf is what the guards read of t: its verdict's class, its time,
// and how it would resume: the trigger's for Started and
// ReconnectRequested, the machine's own for RetryDue ([Machine.RetryResume]).
func (m *Machine) guardInputOf(t *Trigger) guardInput {
	in := guardInput{class: t.Verdict.Class, resume: t.Resume, now: t.Now}
	if t.Kind == events.TriggerRetryDue {
		in.resume = m.RetryResume()
	}
	return in
}

// rowTaken returns the row a fire of k from state from that returned no
// error took. stateless evaluated the guards of every row of (from, k) and
// found exactly one passing (it panics on two): a guarded row recorded
// itself as it passed (see [rowGuard]); else the row taken is the sole
// unguarded one. After an error it means nothing.
func (m *Machine) rowTaken(from stateID, k triggerID) int {
	if m.passed >= 0 {
		return m.passed
	}
	return unguardedRow[from][k]
}

// passes reports whether every guard of row i passes.
func (m *Machine) passes(i int) bool {
	for _, gd := range table[i].Guards {
		if !gd.eval(m, &m.in) {
			return false
		}
	}
	return true
}

// apply performs row i's effects on the extended state and appends its
// commands to the outbox. It is infallible and fires nothing.
func (m *Machine) apply(i int, t *Trigger) {
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
		v := t.Verdict
		m.verdict = &v
	case r.To != events.StateFailed:
		m.verdict = nil
		m.reason = events.ReasonNone
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
	for _, k := range r.Commands {
		m.out = append(m.out, m.command(k, t))
	}
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

// noteSession records a session start. It keeps only the starts still
// inside the window, and at most the last MaxSessions of them, which is all
// churnLimitReached needs.
func (m *Machine) noteSession(now time.Time) {
	drop := 0
	for drop < len(m.sessions) && now.Sub(m.sessions[drop]) >= m.window {
		drop++
	}
	if keep := len(m.sessions) - drop; keep >= m.maxSessions {
		drop += keep - m.maxSessions + 1
	}
	if drop > 0 {
		n := copy(m.sessions, m.sessions[drop:])
		m.sessions = m.sessions[:n]
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
func (m *Machine) State() events.State { return stateList[m.st] }

// Generation returns the number of sessions (Dial and Attach commands) the
// machine has created; 0 before the first.
func (m *Machine) Generation() uint64 { return m.gen }

// Attempt returns the retry attempt count: 0 after a success or a reconnect
// request, n after the n-th ScheduleRetry.
func (m *Machine) Attempt() int { return m.attempt }

// Reason returns why the failed state is terminal, or ReasonNone when the
// machine is not in a terminal failed state.
func (m *Machine) Reason() events.Reason { return m.reason }

// Terminal reports whether the machine is in a failed state that will not
// retry (a [events.Reason] is set): calls fail at once until ReconnectRequested.
func (m *Machine) Terminal() bool {
	return m.State() == events.StateFailed && m.reason != events.ReasonNone
}

// Verdict returns the verdict that moved the machine into [events.StateFailed]; the zero
// verdict in any other state.
func (m *Machine) Verdict() classify.Verdict {
	if m.verdict == nil {
		return classify.Verdict{}
	}
	return *m.verdict
}

// ListingRetries returns how many times the listing of the current session
// was retried on it (see [Config.ListingRetries]).
func (m *Machine) ListingRetries() int { return m.listFails }

// RetryResume returns how a retry (RetryDue) re-opens the connection: the
// persisted session of the current resume (blind or known) while the
// machine still holds it (no Dial replaced it, no ClearSession forgot it)
// and the resume has not used its stale recovery, as after a resumed
// session's discovery that got no answer; ResumeNone (a full handshake)
// otherwise.
func (m *Machine) RetryResume() ResumeMode {
	if m.staleUsed {
		return ResumeNone
	}
	return m.resume
}

// StaleRecoveryUsed reports whether the current resume has used its one
// stale recovery (failure story S2).
func (m *Machine) StaleRecoveryUsed() bool { return m.staleUsed }
