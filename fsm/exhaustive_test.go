package fsm

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
)

// combo is one point of state x trigger x verdict class x flags.
type combo struct {
	state     events.State
	kind      events.Trigger
	class     classify.Class
	resume    ResumeMode
	staleUsed bool
	terminal  bool // failed with a reason (only meaningful in Failed)
	churned   bool // that reason is churn rather than budget-spent
	churnFull bool // MaxSessions sessions already started within the window
	gen0      bool // the trigger carries generation 0 instead of the current one
	listFails int  // failed listings on the session: 0, 1 or DefaultListingRetries
}

func (c combo) String() string {
	return fmt.Sprintf("%s/%s/%s/resume=%s/stale=%v/terminal=%v/churned=%v/churn=%v/gen0=%v/listFails=%d",
		c.state, c.kind, c.class, c.resume, c.staleUsed, c.terminal, c.churned, c.churnFull, c.gen0, c.listFails)
}

func allCombos() []combo {
	classes := append([]classify.Class{classify.None}, classify.Classes()...)
	var out []combo
	for _, s := range States() {
		for _, k := range TriggerKinds() {
			for _, cl := range classes {
				resumes := []ResumeMode{ResumeNone}
				switch k {
				case events.TriggerStarted, events.TriggerReconnectRequested:
					resumes = []ResumeMode{ResumeNone, ResumeBlind, ResumeKnown, ResumeMode(7)}
				case events.TriggerRetryDue: // the resume the machine holds (placeAt): only a valid one is ever held
					resumes = []ResumeMode{ResumeNone, ResumeBlind, ResumeKnown}
				}
				for _, rm := range resumes {
					for f := range 128 {
						c := combo{state: s, kind: k, class: cl, resume: rm,
							staleUsed: f&1 != 0, terminal: f&2 != 0,
							churnFull: f&4 != 0, gen0: f&8 != 0, churned: f&16 != 0}
						switch {
						case f&32 != 0 && f&64 != 0:
							continue
						case f&32 != 0:
							c.listFails = 1
						case f&64 != 0:
							c.listFails = DefaultListingRetries
						}
						if c.terminal && s != events.StateFailed || c.churned && !c.terminal {
							continue
						}
						out = append(out, c)
					}
				}
			}
		}
	}
	return out
}

// placeAt puts m in c's state and flags, at generation 3, as if fresh.
func placeAt(m *Machine, c combo, now time.Time) {
	m.st = c.state
	m.gen = 3
	m.attempt = 0
	m.verdict = classify.Verdict{}
	m.resume = ResumeNone
	if c.kind == events.TriggerRetryDue {
		m.resume = c.resume
	}
	m.staleUsed = c.staleUsed
	m.listFails = c.listFails
	m.reason = events.ReasonNone
	if c.terminal {
		m.reason = events.ReasonBudgetSpent
		if c.churned {
			m.reason = events.ReasonChurn
		}
	}
	m.sessions = m.sessions[:0]
	if c.churnFull {
		m.sessions = append(m.sessions, now.Add(-2*time.Second), now.Add(-time.Second))
	} else {
		m.sessions = append(m.sessions, now.Add(-time.Hour))
	}
}

// expectedRows returns the rows of c's (state, trigger) whose guards pass.
func expectedRows(m *Machine, tr *Trigger) []int {
	var hits []int
	m.in = m.guardInputOf(tr)
	for _, i := range rowsOf(m.st, tr.Kind) {
		ok := true
		for _, gd := range table[i].Guards {
			ok = ok && gd.eval(m)
		}
		if ok {
			hits = append(hits, i)
		}
	}
	return hits
}

// TestExhaustive steps every combination of state, trigger, verdict class and
// flags: each transitions exactly as its single matching row says, or is
// refused with the typed error; never a panic (stateless panics when two
// guards of one trigger pass at once). It also checks the rules of DESIGN.md
// section 2 independently of the table, and that every row is reachable.
func TestExhaustive(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	hit := make([]bool, len(table))
	n := 0
	m := New(Config{MaxSessions: 2, Window: time.Minute})
	for _, c := range allCombos() {
		n++
		placeAt(m, c, now)
		tr := Trigger{Kind: c.kind, Resume: c.resume, Verdict: classify.Verdict{Class: c.class}, Generation: 3, Now: now}
		if c.gen0 {
			tr.Generation = 0
		}
		guardTr := tr
		if !carriesVerdict(c.kind) {
			guardTr.Verdict = classify.Verdict{}
		}
		rows := expectedRows(m, &guardTr)
		require.LessOrEqual(t, len(rows), 1, "guards not exclusive: %s rows %v", c, rows)
		before := *m
		before.sessions = nil // shares the backing array; not compared

		var out Outcome
		var err error
		require.NotPanics(t, func() { out, err = m.Step(tr) }, "%s", c)
		cmds := out.Commands

		switch {
		case c.state == events.StateClosed:
			require.Len(t, rows, 1, "%s: closed has an ignore row per trigger", c)
			hit[rows[0]] = true
			require.NoError(t, err, "%s", c)
			require.Empty(t, cmds, "%s", c)
			require.False(t, out.Transitioned(), "%s", c)
		case needsVerdict(c.kind) && c.class == classify.None:
			require.ErrorIs(t, err, ErrMissingVerdict, "%s", c)
		case len(rows) == 0:
			var rej *RejectedError
			require.ErrorAs(t, err, &rej, "%s", c)
			require.Equal(t, c.state, rej.State, "%s", c)
			require.Equal(t, c.kind, rej.Trigger, "%s", c)
		default:
			require.NoError(t, err, "%s", c)
			r := table[rows[0]]
			hit[rows[0]] = true
			checkRow(t, c, r, &before, m, out)
		}
		if err != nil {
			require.Nil(t, cmds, "%s", c)
			require.False(t, out.Transitioned(), "%s", c)
			require.Equal(t, before.st, m.st, "%s", c)
			require.Equal(t, before.gen, m.gen, "%s", c)
		}
		checkRules(t, c, &before, m, cmds)
	}
	t.Logf("%d combinations", n)
	for i, h := range hit {
		require.True(t, h, "row %d never taken: %+v", i, table[i])
	}
}

func checkRow(t *testing.T, c combo, r Row, before, m *Machine, out Outcome) {
	t.Helper()
	cmds := out.Commands
	kinds := make([]CommandKind, len(cmds))
	sessions := 0
	for i, cmd := range cmds {
		kinds[i] = cmd.Kind
		if cmd.Kind == Dial || cmd.Kind == Attach {
			sessions++
			require.Equal(t, before.gen+uint64(sessions), cmd.Generation, "%s", c)
		}
	}
	require.Equal(t, append([]CommandKind{}, r.Commands...), append([]CommandKind{}, kinds...), "%s", c)
	require.Equal(t, before.gen+uint64(sessions), m.gen, "%s: +1 per dial/attach", c)
	if r.Ignore {
		require.Equal(t, c.state, m.State(), "%s", c)
		require.False(t, out.Transitioned(), "%s", c)
		require.Empty(t, cmds, "%s", c)
		return
	}
	require.Equal(t, r.To, m.State(), "%s", c)
	require.True(t, out.Transitioned(), "%s", c)
	e := out.Event
	require.Equal(t, events.KindTransition, e.Kind, "%s", c)
	require.Equal(t, c.state, e.From, "%s", c)
	require.Equal(t, r.To, e.To, "%s", c)
	require.Equal(t, c.kind, e.Trigger, "%s", c)
	require.Equal(t, r.GuardLabel(), e.Guard, "%s", c)
	require.Equal(t, m.gen, e.Generation, "%s", c)
	require.Equal(t, m.reason, e.Reason, "%s", c)
	require.Zero(t, e.Seq, "%s: the shell numbers events", c)
	require.Empty(t, e.Server, "%s: the shell names the server", c)
	require.Zero(t, e.Time, "%s: the shell stamps the time", c)
	if r.Reason == ReasonOfVerdict {
		require.Equal(t, c.class.String(), string(m.reason), "%s", c)
	} else if r.Reason != events.ReasonNone {
		require.Equal(t, r.Reason, m.reason, "%s", c)
	}
}

// checkRules asserts DESIGN.md section 2 on the outcome, without the table.
func checkRules(t *testing.T, c combo, before, m *Machine, cmds []Command) {
	t.Helper()
	fatalV := carriesVerdict(c.kind) && (c.class == classify.Unauthorized || c.class == classify.Canceled)
	for _, cmd := range cmds {
		switch cmd.Kind {
		case ScheduleRetry:
			require.False(t, fatalV, "%s: retry after %s", c, c.class)
			if m.State() != events.StateFailed {
				// A listing retried on its live session.
				require.Equal(t, c.state, m.State(), "%s", c)
				require.Contains(t, []events.State{events.StateConnecting, events.StateStaleRecovering}, c.state, "%s", c)
				require.Equal(t, events.TriggerDiscoveryFailed, c.kind, "%s", c)
				require.True(t, sessionFine.has(c.class), "%s: the session may be gone", c)
				require.Less(t, c.listFails, DefaultListingRetries, "%s: retries spent", c)
				require.Equal(t, before.listFails+1, m.listFails, "%s", c)
			}
			require.Equal(t, before.attempt+1, cmd.Attempt, "%s", c)
		case Dial, Attach:
			require.False(t, fatalV && c.kind != events.TriggerStarted && c.kind != events.TriggerReconnectRequested, "%s: reconnect after %s", c, c.class)
			require.False(t, c.churnFull && c.kind != events.TriggerStarted, "%s: dial past churn", c)
			if c.kind == events.TriggerChurnCooled {
				require.True(t, c.churned, "%s: only a churn failure cools down", c)
			}
		case Probe:
			require.Equal(t, events.StateResumingBlind, c.state, "%s: probes only right after a blind attach", c)
		}
	}
	if m.State() == events.StateProbing && before.State() != events.StateProbing {
		require.Equal(t, events.StateResumingBlind, before.State(), "%s", c)
	}
	if m.State() == events.StateStaleRecovering && before.State() != events.StateStaleRecovering {
		require.False(t, before.staleUsed, "%s: second stale recovery", c)
		require.NotEqual(t, classify.Timeout, c.class, "%s", c)
		require.NotEqual(t, classify.Transport, c.class, "%s: no answer is no evidence of a stale session", c)
		require.False(t, fatalV, "%s", c)
	}
	if before.State() == events.StateFailed && m.State() == events.StateFailed && before.reason != events.ReasonNone {
		if c.kind == events.TriggerReconnectRequested && c.churnFull {
			require.Equal(t, events.ReasonChurn, m.reason, "%s: a reconnect past the churn limit is held", c)
		} else {
			require.Equal(t, before.reason, m.reason, "%s: terminal reason changed", c)
		}
	}
	if c.kind == events.TriggerReconnectRequested && c.churnFull {
		// A reconnect storm is held by churn: a live session stays, a
		// failed state becomes a churn failure.
		switch c.state {
		case events.StateReady:
			require.Equal(t, events.StateReady, m.State(), "%s", c)
			require.Empty(t, cmds, "%s: the live session is kept", c)
		case events.StateFailed:
			require.Equal(t, events.ReasonChurn, m.reason, "%s", c)
		}
	}
	if (c.state == events.StateConnecting || c.state == events.StateStaleRecovering) && c.kind == events.TriggerDiscoveryFailed && !fatalV && c.class != classify.None {
		// After a handshake, a listing failure costs the session only when
		// the session may be gone or its listing retries are spent.
		kept := sessionFine.has(c.class) && c.listFails < DefaultListingRetries
		require.Equal(t, kept, m.State() == c.state, "%s", c)
		closes := 0
		for _, cmd := range cmds {
			require.NotEqual(t, Dial, cmd.Kind, "%s", c)
			if cmd.Kind == CloseSession {
				closes++
			}
		}
		require.Equal(t, !kept, closes == 1, "%s: %v", c, cmds)
	}
	if (c.state == events.StateProbing || c.state == events.StateListingDeclared) && (c.kind == events.TriggerDiscoveryFailed || c.kind == events.TriggerSessionDied) && !fatalV && c.class != classify.None {
		// A resumed session is forgotten only on an answer that shows it
		// expired: no answer (transport, timeout) keeps it for the retry,
		// which re-attaches it; a busy server's answer (5xx, 429) keeps it
		// until a new session replaces it.
		noAns := c.class == classify.Transport || c.class == classify.Timeout
		busy := c.class == classify.ServerError || c.class == classify.RateLimited
		clears := false
		for _, cmd := range cmds {
			clears = clears || cmd.Kind == ClearSession
		}
		require.Equal(t, !noAns && !busy, clears, "%s: %v", c, cmds)
		if noAns {
			require.Equal(t, events.StateFailed, m.State(), "%s: no answer is no evidence of a stale session", c)
			require.Equal(t, before.resume, m.resume, "%s: the persisted session is kept", c)
		}
	}
	if c.state == events.StateFailed && c.kind == events.TriggerRetryDue && !c.terminal && !c.churnFull {
		// A retry re-attaches the persisted session the machine still
		// holds, unless the resume used its stale recovery.
		attach := c.resume != ResumeNone && !c.staleUsed
		require.Len(t, cmds, 1, "%s", c)
		require.Equal(t, attach, cmds[0].Kind == Attach, "%s: %v", c, cmds)
	}
	if m.State() == events.StateFailed && fatalV && before.State() != events.StateFailed {
		require.True(t, m.Terminal(), "%s", c)
	}
}

func TestRejectedErrorsHaveNoSideEffects(t *testing.T) {
	m := New(Config{})
	_, err := m.Step(Trigger{Kind: events.Trigger("no-such-trigger")})
	var rej *RejectedError
	require.True(t, errors.As(err, &rej))
	require.Equal(t, events.StateIdle, m.State())
}

// TestEveryGuardIsUsed: each guard decides at least one row; a guard no row
// names is dead vocabulary.
func TestEveryGuardIsUsed(t *testing.T) {
	used := make([]bool, numGuards)
	for _, r := range table {
		for _, gd := range r.Guards {
			used[gd] = true
		}
	}
	for gd, u := range used {
		require.True(t, u, "guard %s is used by no row", Guard(gd))
	}
}
