package fsm

import (
	"fmt"
	"time"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
)

// Guard names a condition on the trigger and the machine's extended state.
// A row passes when all its guards pass; the rows of one (state, trigger)
// are mutually exclusive. "Recoverable" is any verdict but unauthorized and
// canceled (DESIGN.md section 2).
type Guard uint8

const (
	// GuardResumeNone: resume without a persisted session.
	GuardResumeNone Guard = iota
	// GuardResumeBlind: resume a persisted session, capabilities unknown.
	GuardResumeBlind
	// GuardResumeKnown: resume a persisted session with its capabilities.
	GuardResumeKnown
	// GuardFatalVerdict: the verdict is unauthorized or canceled.
	GuardFatalVerdict
	// GuardRecoverableVerdict: the verdict is recoverable.
	GuardRecoverableVerdict
	// GuardStaleRecoveryUnused: recoverable, the server answered (not
	// [GuardNoAnswer]), and this resume has its one stale recovery left
	// (failure story S2).
	GuardStaleRecoveryUnused
	// GuardStaleRecoveryUsed: as GuardStaleRecoveryUnused, recovery used.
	GuardStaleRecoveryUsed
	// GuardSessionBudgetLeft: one more session stays within
	// [Config.MaxSessions] per [Config.Window].
	GuardSessionBudgetLeft
	// GuardChurnLimitReached: one more session would exceed it.
	GuardChurnLimitReached
	// GuardRetrying: the failed state is not terminal.
	GuardRetrying
	// GuardChurnFailure: terminal with ReasonChurn, which cools down.
	GuardChurnFailure
	// GuardListingRetryLeft: a listing failed with a verdict that says the
	// session is fine (forbidden, rate-limited, server-error, application,
	// timeout) and fewer than [Config.ListingRetries] retries were spent.
	GuardListingRetryLeft
	// GuardListingRetrySpent: recoverable, and not GuardListingRetryLeft:
	// the session is replaced.
	GuardListingRetrySpent
	// GuardListingFailed: the current session's listing failed and its
	// retry is scheduled.
	GuardListingFailed
	// GuardNoAnswer: transport or timeout: a resumed session that got no
	// answer is not shown stale; the server may be down.
	GuardNoAnswer
	// GuardExpiryEvidence: recoverable, and an answer other than
	// server-error or rate-limited: the session is taken as expired (S2).
	GuardExpiryEvidence
	// GuardServerBusy: server-error or rate-limited: the stale recovery runs
	// but the persisted session is kept until a new one replaces it.
	GuardServerBusy

	numGuards
)

var guardNames = [numGuards]string{
	GuardResumeNone:          "resume-none",
	GuardResumeBlind:         "resume-blind",
	GuardResumeKnown:         "resume-known",
	GuardFatalVerdict:        "fatal-verdict",
	GuardRecoverableVerdict:  "recoverable-verdict",
	GuardStaleRecoveryUnused: "stale-recovery-unused",
	GuardStaleRecoveryUsed:   "stale-recovery-used",
	GuardSessionBudgetLeft:   "session-budget-left",
	GuardChurnLimitReached:   "churn-limit-reached",
	GuardRetrying:            "retrying",
	GuardChurnFailure:        "churn-failure",
	GuardListingRetryLeft:    "listing-retry-left",
	GuardListingRetrySpent:   "listing-retry-spent",
	GuardListingFailed:       "listing-failed",
	GuardNoAnswer:            "no-answer",
	GuardExpiryEvidence:      "expiry-evidence",
	GuardServerBusy:          "server-busy",
}

// String returns the kebab-case name used in events and docs/statechart.md.
func (g Guard) String() string {
	if g < numGuards {
		return guardNames[g]
	}
	return fmt.Sprintf("guard(%d)", uint8(g))
}

func fatal(c classify.Class) bool {
	return c == classify.Unauthorized || c == classify.Canceled
}

// noAnswer: no HTTP answer (transport) or our own deadline first (timeout).
func noAnswer(c classify.Class) bool {
	return c == classify.Transport || c == classify.Timeout
}

// serverBusy: the server answered that it cannot serve now (5xx, 429).
func serverBusy(c classify.Class) bool {
	return c == classify.ServerError || c == classify.RateLimited
}

// sessionFine reports a failed listing's verdict that a new session cannot
// fix: an answer, or slowness.
func sessionFine(c classify.Class) bool {
	switch c {
	case classify.Forbidden, classify.RateLimited, classify.ServerError, classify.Application, classify.Timeout:
		return true
	}
	return false
}

// listingRetryLeft reports whether a listing failing now with class c is
// retried on its session.
func (m *Machine) listingRetryLeft(c classify.Class) bool {
	return sessionFine(c) && m.listFails < m.listingRetries
}

// guardInput is what guards read of the trigger being stepped.
type guardInput struct {
	class  classify.Class
	resume ResumeMode
	now    time.Time
}

// eval evaluates g against the trigger and the extended state; it only reads.
func (g Guard) eval(m *Machine, t *guardInput) bool {
	c := t.class
	switch g {
	case GuardResumeNone:
		return t.resume == ResumeNone
	case GuardResumeBlind:
		return t.resume == ResumeBlind
	case GuardResumeKnown:
		return t.resume == ResumeKnown
	case GuardFatalVerdict:
		return fatal(c)
	case GuardRecoverableVerdict:
		return !fatal(c)
	case GuardStaleRecoveryUnused:
		return !fatal(c) && !noAnswer(c) && !m.staleUsed
	case GuardStaleRecoveryUsed:
		return !fatal(c) && !noAnswer(c) && m.staleUsed
	case GuardSessionBudgetLeft:
		return !m.churnLimitReached(t.now)
	case GuardChurnLimitReached:
		return m.churnLimitReached(t.now)
	case GuardRetrying:
		return m.reason == events.ReasonNone
	case GuardChurnFailure:
		return m.reason == events.ReasonChurn
	case GuardListingRetryLeft:
		return m.listingRetryLeft(c)
	case GuardListingRetrySpent:
		return !fatal(c) && !m.listingRetryLeft(c)
	case GuardListingFailed:
		return m.listFails > 0
	case GuardNoAnswer:
		return noAnswer(c)
	case GuardExpiryEvidence:
		return !fatal(c) && !noAnswer(c) && !serverBusy(c)
	case GuardServerBusy:
		return serverBusy(c)
	}
	return false
}
