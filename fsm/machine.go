package fsm

import (
	"context"
	"time"

	"github.com/qmuntal/stateless"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
)

// Defaults for a zero [Config].
const (
	DefaultMaxSessions = 20
	DefaultWindow      = 5 * time.Minute
)

// Config configures a [Machine]. The zero value is usable.
type Config struct {
	// Server names the supervised server in events; "" is allowed.
	Server string
	// Sink receives one event per transition and internal transition; nil
	// discards them.
	Sink events.Sink
	// MaxSessions is the churn limit: opening more than MaxSessions sessions
	// (Dial or Attach commands, retries included) within Window moves to a
	// terminal failed state with ReasonChurn instead. Zero means
	// DefaultMaxSessions (20); negative values are treated as zero.
	MaxSessions int
	// Window is the churn window, measured with [Trigger.Now]. Zero means
	// DefaultWindow (5 minutes).
	Window time.Duration
}

// Machine is the connection state machine: a pure core driven one trigger at
// a time by [Machine.Step], returning the commands the shell must execute
// (DESIGN.md sections 2 and 5). It never performs I/O, never reads a clock,
// never starts a goroutine.
//
// A Machine is not safe for concurrent use: one goroutine owns it.
type Machine struct {
	cfg Config
	sm  *stateless.StateMachine

	state     State
	gen       uint64
	attempt   int
	staleUsed bool
	reason    Reason
	verdict   classify.Verdict
	resume    ResumeMode
	sessions  []time.Time // start times of the last MaxSessions sessions
	seq       uint64

	// Per Step: the trigger, the outbox, the pending event.
	cur     Trigger
	out     []Command
	ev      events.Event
	pending bool
}

// New returns a machine in [Idle], configured from the table.
func New(cfg Config) *Machine {
	if cfg.MaxSessions <= 0 {
		cfg.MaxSessions = DefaultMaxSessions
	}
	if cfg.Window <= 0 {
		cfg.Window = DefaultWindow
	}
	m := &Machine{
		cfg:   cfg,
		state: Idle,
		out:   make([]Command, 0, 4),
	}
	m.sm = stateless.NewStateMachineWithExternalStorage(
		func(context.Context) (stateless.State, error) { return m.state, nil },
		func(_ context.Context, s stateless.State) error { m.state = s.(State); return nil },
		stateless.FiringQueued)
	var guards [numGuards]stateless.GuardFunc
	for i := range guards {
		gd := Guard(i)
		guards[i] = func(context.Context, ...any) bool { return gd.eval(m, &m.cur) }
	}
	for i, r := range table {
		fns := make([]stateless.GuardFunc, len(r.Guards))
		for j, gd := range r.Guards {
			fns[j] = guards[gd]
		}
		sc := m.sm.Configure(r.From)
		switch {
		case r.Ignore:
			sc.Ignore(r.Trigger, fns...)
		case r.Internal():
			sc.InternalTransition(r.Trigger, func(context.Context, ...any) error {
				m.apply(i)
				return nil
			}, fns...)
		default:
			sc.Permit(r.Trigger, r.To, fns...)
		}
	}
	m.sm.OnTransitioned(m.onTransitioned)
	m.sm.OnUnhandledTrigger(func(_ context.Context, s stateless.State, k stateless.Trigger, _ []string) error {
		return rejected(s.(State), k.(TriggerKind))
	})
	return m
}

func rejected(s State, k TriggerKind) *RejectedError {
	e := &RejectedError{State: s, Trigger: k}
	if s >= numStates || k >= numTriggers {
		return e
	}
	for _, i := range rowIndex[s][k] {
		e.Guards = append(e.Guards, guardLabels[i])
	}
	return e
}

// Step feeds one trigger and returns the commands to execute, in order.
// The returned slice is owned by the machine and valid until the next Step.
//
// Errors (the machine is unchanged after any of them):
//   - [*GenerationError] (ErrStaleGeneration, ErrFutureGeneration): a
//     non-zero t.Generation other than the current one; a stale one is the
//     normal fate of a late result of an old session and can be dropped;
//   - [*VerdictError] (ErrMissingVerdict): HandshakeFailed, DiscoveryFailed
//     or CallFailed without a verdict;
//   - [*RejectedError] (ErrRejected): the table does not permit the trigger
//     in the current state.
//
// In [Closed] every trigger is absorbed: nil, nil.
func (m *Machine) Step(t Trigger) ([]Command, error) {
	if m.state != Closed { // closed absorbs even malformed results
		if t.Generation != 0 && t.Generation != m.gen {
			return nil, &GenerationError{Trigger: t.Kind, Got: t.Generation, Current: m.gen}
		}
		if t.Kind.needsVerdict() && t.Verdict.Class == classify.None {
			return nil, &VerdictError{Trigger: t.Kind}
		}
	}
	if !t.Kind.carriesVerdict() {
		t.Verdict = classify.Verdict{}
	}
	if t.Kind >= numTriggers {
		return nil, rejected(m.state, t.Kind)
	}
	m.cur = t
	m.out = m.out[:0]
	m.pending = false
	err := m.sm.Fire(t.Kind)
	m.cur = Trigger{}
	if err != nil {
		return nil, err
	}
	if m.pending && m.cfg.Sink != nil {
		m.cfg.Sink.Emit(m.ev)
	}
	if len(m.out) == 0 {
		return nil, nil
	}
	return m.out, nil
}

// onTransitioned applies the row that stateless just took. Guards are pure
// and nothing changed the extended state since stateless evaluated them, so
// exactly one row of (from, trigger, to) passes again here.
func (m *Machine) onTransitioned(_ context.Context, tr stateless.Transition) {
	from, to, k := tr.Source.(State), tr.Destination.(State), tr.Trigger.(TriggerKind)
	for _, i := range rowIndex[from][k] {
		if r := &table[i]; r.To == to && !r.Ignore && m.passes(r) {
			m.apply(i)
			return
		}
	}
}

func (m *Machine) passes(r *Row) bool {
	for _, gd := range r.Guards {
		if !gd.eval(m, &m.cur) {
			return false
		}
	}
	return true
}

// apply performs row i's effects on the extended state and appends its
// commands to the outbox. It is infallible and fires nothing.
func (m *Machine) apply(i int) {
	r := &table[i]
	t := &m.cur
	switch r.Trigger {
	case Started:
		m.staleUsed = false
		m.resume = t.Resume
	case ReconnectRequested:
		m.attempt = 0
		m.sessions = m.sessions[:0]
	}
	switch {
	case r.To == Failed && r.From != Failed:
		m.verdict = t.Verdict
	case r.To != Failed:
		m.verdict = classify.Verdict{}
		m.reason = ReasonNone
	}
	switch r.Reason {
	case ReasonNone:
	case ReasonOfVerdict:
		m.reason = ReasonUnauthorized
		if t.Verdict.Class == classify.Canceled {
			m.reason = ReasonCanceled
		}
	default:
		m.reason = r.Reason
	}
	if r.To == StaleRecovering {
		m.staleUsed = true
	}
	if r.To == Ready {
		m.attempt = 0
	}
	for _, k := range r.Commands {
		m.out = append(m.out, m.command(k))
	}
	m.seq++
	m.ev = events.Event{
		Kind:       events.KindTransition,
		Server:     m.cfg.Server,
		Seq:        m.seq,
		Time:       t.Now,
		From:       r.From.String(),
		To:         r.To.String(),
		Trigger:    r.Trigger.String(),
		Guard:      guardLabels[i],
		Verdict:    t.Verdict,
		Generation: m.gen,
		Attempt:    m.attempt,
		Reason:     m.reason.String(),
	}
	m.pending = true
}

func (m *Machine) command(k CommandKind) Command {
	cmd := Command{Kind: k, Generation: m.gen}
	switch k {
	case Dial, Attach:
		m.gen++
		m.noteSession(m.cur.Now)
		cmd.Generation = m.gen
		if k == Attach {
			cmd.Resume = m.resume
		}
	case ScheduleRetry:
		m.attempt++
		cmd.Attempt = m.attempt
		cmd.Verdict = m.cur.Verdict
	}
	return cmd
}

// noteSession records a session start. It keeps only the starts still
// inside the window, and at most the last MaxSessions of them, which is all
// churnLimitReached needs.
func (m *Machine) noteSession(now time.Time) {
	drop := 0
	for drop < len(m.sessions) && now.Sub(m.sessions[drop]) >= m.cfg.Window {
		drop++
	}
	if keep := len(m.sessions) - drop; keep >= m.cfg.MaxSessions {
		drop += keep - m.cfg.MaxSessions + 1
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
		if now.Sub(ts) < m.cfg.Window {
			n++
		}
	}
	return n >= m.cfg.MaxSessions
}

// State returns the current state.
func (m *Machine) State() State { return m.state }

// Generation returns the number of sessions (Dial and Attach commands) the
// machine has created; 0 before the first.
func (m *Machine) Generation() uint64 { return m.gen }

// Attempt returns the retry attempt count: 0 after a success or a reconnect
// request, n after the n-th ScheduleRetry.
func (m *Machine) Attempt() int { return m.attempt }

// Reason returns why the failed state is terminal, or ReasonNone when the
// machine is not in a terminal failed state.
func (m *Machine) Reason() Reason { return m.reason }

// Terminal reports whether the machine is in a failed state that will not
// retry (a [Reason] is set): calls fail at once until ReconnectRequested.
func (m *Machine) Terminal() bool { return m.state == Failed && m.reason != ReasonNone }

// Verdict returns the verdict that moved the machine into [Failed]; the zero
// verdict in any other state.
func (m *Machine) Verdict() classify.Verdict { return m.verdict }

// StaleRecoveryUsed reports whether the current resume has used its one
// stale recovery (failure story S2).
func (m *Machine) StaleRecoveryUsed() bool { return m.staleUsed }
