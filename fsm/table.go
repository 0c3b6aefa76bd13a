package fsm

import (
	"slices"
	"strings"

	"github.com/mcpsup/mcpsup/events"
)

// Row is one transition: in state From, on Trigger, when all Guards pass, go
// to To and emit Commands in order. To == From is an internal transition (an
// event, no state change); an Ignore row absorbs the trigger silently.
type Row struct {
	From     events.State
	Trigger  events.Trigger
	Guards   []Guard
	To       events.State
	Commands []CommandKind
	Reason   events.Reason // the terminal reason it sets, or ReasonNone
	Ignore   bool
}

// Internal reports whether the row is an internal transition.
func (r Row) Internal() bool { return !r.Ignore && r.From == r.To }

// GuardLabel joins the row's guard names with "+"; "" when it has none.
func (r Row) GuardLabel() string {
	names := make([]string, len(r.Guards))
	for i, g := range r.Guards {
		names[i] = g.String()
	}
	return strings.Join(names, "+")
}

// Table returns a copy of the transition table in declaration order.
func Table() []Row {
	out := slices.Clone(table)
	for i := range out {
		out[i].Guards = slices.Clone(out[i].Guards)
		out[i].Commands = slices.Clone(out[i].Commands)
	}
	return out
}

// table is built once and never written after.
var table = buildTable()

// rowsOf returns the indexes of the rows of (s, k), in table order.
func rowsOf(s events.State, k events.Trigger) []int {
	var rows []int
	for i, r := range table {
		if r.From == s && r.Trigger == k {
			rows = append(rows, i)
		}
	}
	return rows
}

type g = []Guard
type c = []CommandKind

func buildTable() []Row {
	var rows []Row
	add := func(r Row) { rows = append(rows, r) }
	ignore := func(s events.State, ks ...events.Trigger) {
		for _, k := range ks {
			add(Row{From: s, Trigger: k, To: s, Ignore: true})
		}
	}
	// ending adds the two ways out to Closed; end ends a live session.
	ending := func(s events.State, end ...CommandKind) {
		close, detach := c{}, c{}
		if len(end) > 0 {
			close, detach = c{CloseSession}, c{DetachSession}
		}
		add(Row{From: s, Trigger: events.TriggerCloseRequested, To: events.StateClosed, Commands: close})
		add(Row{From: s, Trigger: events.TriggerDetachRequested, To: events.StateClosed, Commands: detach})
	}

	// idle
	add(Row{From: events.StateIdle, Trigger: events.TriggerStarted, Guards: g{GuardResumeNone}, To: events.StateConnecting, Commands: c{Dial}})
	add(Row{From: events.StateIdle, Trigger: events.TriggerStarted, Guards: g{GuardResumeBlind}, To: events.StateResumingBlind, Commands: c{Attach}})
	add(Row{From: events.StateIdle, Trigger: events.TriggerStarted, Guards: g{GuardResumeKnown}, To: events.StateResumingKnown, Commands: c{Attach}})
	ending(events.StateIdle)

	// connecting and stale-recovering: a handshake, then the declared lists,
	// retried on a session that is fine (DESIGN.md section 2).
	for _, s := range []events.State{events.StateConnecting, events.StateStaleRecovering} {
		add(Row{From: s, Trigger: events.TriggerHandshakeSucceeded, To: s, Commands: c{ListDeclared}})
		add(Row{From: s, Trigger: events.TriggerDiscoverySucceeded, To: events.StateReady, Commands: c{PublishCatalog}})
		add(Row{From: s, Trigger: events.TriggerHandshakeFailed, Guards: g{GuardFatalVerdict}, To: events.StateFailed, Reason: ReasonOfVerdict})
		add(Row{From: s, Trigger: events.TriggerHandshakeFailed, Guards: g{GuardRecoverableVerdict}, To: events.StateFailed, Commands: c{ScheduleRetry}})
		// Refused (401) after a handshake: the session is kept for Reconnect.
		add(Row{From: s, Trigger: events.TriggerDiscoveryFailed, Guards: g{GuardFatalVerdict}, To: events.StateFailed, Commands: c{DetachSession}, Reason: ReasonOfVerdict})
		add(Row{From: s, Trigger: events.TriggerDiscoveryFailed, Guards: g{GuardListingRetryLeft}, To: s, Commands: c{ScheduleRetry}})
		add(Row{From: s, Trigger: events.TriggerDiscoveryFailed, Guards: g{GuardListingRetrySpent}, To: events.StateFailed, Commands: c{CloseSession, ScheduleRetry}})
		add(Row{From: s, Trigger: events.TriggerRetryDue, Guards: g{GuardListingFailed}, To: s, Commands: c{ListDeclared}})
		// A bounded budget (the shell's backoff) spent on listing retries.
		add(Row{From: s, Trigger: events.TriggerRetriesExhausted, Guards: g{GuardListingFailed}, To: events.StateFailed, Commands: c{CloseSession}, Reason: events.ReasonBudgetSpent})
		add(Row{From: s, Trigger: events.TriggerSessionDied, Guards: g{GuardFatalVerdict}, To: events.StateFailed, Commands: c{DetachSession}, Reason: ReasonOfVerdict})
		add(Row{From: s, Trigger: events.TriggerSessionDied, Guards: g{GuardRecoverableVerdict}, To: events.StateFailed, Commands: c{DetachSession, ScheduleRetry}})
		ending(s, CloseSession)
	}

	// resuming: attach the persisted session; nothing is sent yet.
	for _, p := range []struct {
		from, next events.State
		work       CommandKind
	}{{events.StateResumingBlind, events.StateProbing, Probe}, {events.StateResumingKnown, events.StateListingDeclared, ListDeclared}} {
		s := p.from
		add(Row{From: s, Trigger: events.TriggerAttached, To: p.next, Commands: c{p.work}})
		add(Row{From: s, Trigger: events.TriggerAttachRefused, Guards: g{GuardFatalVerdict}, To: events.StateFailed, Reason: ReasonOfVerdict})
		add(Row{From: s, Trigger: events.TriggerAttachRefused, Guards: g{GuardRecoverableVerdict, GuardSessionBudgetLeft}, To: events.StateConnecting, Commands: c{ClearSession, Dial}})
		add(Row{From: s, Trigger: events.TriggerAttachRefused, Guards: g{GuardRecoverableVerdict, GuardChurnLimitReached}, To: events.StateFailed, Commands: c{ClearSession}, Reason: events.ReasonChurn})
		ending(s, CloseSession)
	}

	// probing and listing-declared: discovery on a resumed session; one
	// stale recovery per resume; the persisted session is forgotten only on
	// evidence that it expired (decision 0002).
	for _, s := range []events.State{events.StateProbing, events.StateListingDeclared} {
		add(Row{From: s, Trigger: events.TriggerDiscoverySucceeded, To: events.StateReady, Commands: c{PublishCatalog}})
		for _, k := range []events.Trigger{events.TriggerDiscoveryFailed, events.TriggerSessionDied} {
			add(Row{From: s, Trigger: k, Guards: g{GuardFatalVerdict}, To: events.StateFailed, Commands: c{DetachSession}, Reason: ReasonOfVerdict})
			add(Row{From: s, Trigger: k, Guards: g{GuardNoAnswer}, To: events.StateFailed, Commands: c{DetachSession, ScheduleRetry}})
			add(Row{From: s, Trigger: k, Guards: g{GuardStaleRecoveryUnused, GuardExpiryEvidence, GuardSessionBudgetLeft}, To: events.StateStaleRecovering, Commands: c{DetachSession, ClearSession, Dial}})
			add(Row{From: s, Trigger: k, Guards: g{GuardStaleRecoveryUnused, GuardServerBusy, GuardSessionBudgetLeft}, To: events.StateStaleRecovering, Commands: c{DetachSession, Dial}})
			add(Row{From: s, Trigger: k, Guards: g{GuardStaleRecoveryUnused, GuardExpiryEvidence, GuardChurnLimitReached}, To: events.StateFailed, Commands: c{DetachSession, ClearSession}, Reason: events.ReasonChurn})
			add(Row{From: s, Trigger: k, Guards: g{GuardStaleRecoveryUnused, GuardServerBusy, GuardChurnLimitReached}, To: events.StateFailed, Commands: c{DetachSession}, Reason: events.ReasonChurn})
			add(Row{From: s, Trigger: k, Guards: g{GuardStaleRecoveryUsed, GuardExpiryEvidence}, To: events.StateFailed, Commands: c{DetachSession, ClearSession, ScheduleRetry}})
			add(Row{From: s, Trigger: k, Guards: g{GuardStaleRecoveryUsed, GuardServerBusy}, To: events.StateFailed, Commands: c{DetachSession, ScheduleRetry}})
		}
		ending(s, CloseSession)
	}

	// ready: only the session's own end, a reconnect or the end leaves; a
	// failed call is no trigger (S4).
	add(Row{From: events.StateReady, Trigger: events.TriggerSessionDied, Guards: g{GuardFatalVerdict}, To: events.StateFailed, Commands: c{DetachSession}, Reason: ReasonOfVerdict})
	add(Row{From: events.StateReady, Trigger: events.TriggerSessionDied, Guards: g{GuardRecoverableVerdict, GuardSessionBudgetLeft}, To: events.StateConnecting, Commands: c{DetachSession, Dial}})
	add(Row{From: events.StateReady, Trigger: events.TriggerSessionDied, Guards: g{GuardRecoverableVerdict, GuardChurnLimitReached}, To: events.StateFailed, Commands: c{DetachSession}, Reason: events.ReasonChurn})
	add(Row{From: events.StateReady, Trigger: events.TriggerCatalogListed, To: events.StateReady, Commands: c{PublishCatalog}})
	add(Row{From: events.StateReady, Trigger: events.TriggerReconnectRequested, Guards: g{GuardSessionBudgetLeft}, To: events.StateConnecting, Commands: c{CloseSession, Dial}})
	// Past the churn limit a reconnect is held: the live session stays.
	add(Row{From: events.StateReady, Trigger: events.TriggerReconnectRequested, Guards: g{GuardChurnLimitReached}, To: events.StateReady})
	ending(events.StateReady, CloseSession)

	// failed: retries on the shell's schedule; terminal with a reason. The
	// retry of a resume that got no answer re-attaches it (the guard reads
	// the machine's resume, not the trigger's).
	add(Row{From: events.StateFailed, Trigger: events.TriggerRetryDue, Guards: g{GuardRetrying, GuardResumeNone, GuardSessionBudgetLeft}, To: events.StateConnecting, Commands: c{Dial}})
	add(Row{From: events.StateFailed, Trigger: events.TriggerRetryDue, Guards: g{GuardRetrying, GuardResumeBlind, GuardSessionBudgetLeft}, To: events.StateResumingBlind, Commands: c{Attach}})
	add(Row{From: events.StateFailed, Trigger: events.TriggerRetryDue, Guards: g{GuardRetrying, GuardResumeKnown, GuardSessionBudgetLeft}, To: events.StateResumingKnown, Commands: c{Attach}})
	add(Row{From: events.StateFailed, Trigger: events.TriggerRetryDue, Guards: g{GuardRetrying, GuardChurnLimitReached}, To: events.StateFailed, Reason: events.ReasonChurn})
	add(Row{From: events.StateFailed, Trigger: events.TriggerRetriesExhausted, Guards: g{GuardRetrying}, To: events.StateFailed, Reason: events.ReasonBudgetSpent})
	// Churn cools down on the shell's timer, then tries again.
	add(Row{From: events.StateFailed, Trigger: events.TriggerChurnCooled, Guards: g{GuardChurnFailure, GuardSessionBudgetLeft}, To: events.StateConnecting, Commands: c{Dial}})
	add(Row{From: events.StateFailed, Trigger: events.TriggerChurnCooled, Guards: g{GuardChurnFailure, GuardChurnLimitReached}, To: events.StateFailed, Reason: events.ReasonChurn})
	// The host re-authorized: a session still held is re-attached; past the
	// churn limit a reconnect is held in a churn failure.
	add(Row{From: events.StateFailed, Trigger: events.TriggerReconnectRequested, Guards: g{GuardResumeNone, GuardSessionBudgetLeft}, To: events.StateConnecting, Commands: c{Dial}})
	add(Row{From: events.StateFailed, Trigger: events.TriggerReconnectRequested, Guards: g{GuardResumeBlind, GuardSessionBudgetLeft}, To: events.StateResumingBlind, Commands: c{Attach}})
	add(Row{From: events.StateFailed, Trigger: events.TriggerReconnectRequested, Guards: g{GuardResumeKnown, GuardSessionBudgetLeft}, To: events.StateResumingKnown, Commands: c{Attach}})
	add(Row{From: events.StateFailed, Trigger: events.TriggerReconnectRequested, Guards: g{GuardChurnLimitReached}, To: events.StateFailed, Reason: events.ReasonChurn})
	ending(events.StateFailed)
	// Late results of the session that failed, already ended, change nothing.
	ignore(events.StateFailed, events.TriggerHandshakeSucceeded, events.TriggerHandshakeFailed, events.TriggerAttached, events.TriggerAttachRefused,
		events.TriggerDiscoverySucceeded, events.TriggerDiscoveryFailed, events.TriggerCatalogListed, events.TriggerSessionDied)

	// closed absorbs everything.
	ignore(events.StateClosed, triggerList[:]...)
	return rows
}
