package fsm

import (
	"fmt"
	"time"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
)

// Guard names a condition on the trigger and the machine's extended state.
// A table row passes when all of its guards pass; the rows of one (state,
// trigger) pair are mutually exclusive, so at most one passes.
type Guard uint8

const (
	// GuardResumeNone: Started without a persisted session.
	GuardResumeNone Guard = iota
	// GuardResumeBlind: Started with a persisted session, capabilities unknown.
	GuardResumeBlind
	// GuardResumeKnown: Started with a persisted session and capabilities.
	GuardResumeKnown
	// GuardFatalVerdict: the verdict is unauthorized or canceled, which never
	// recover and never retry (DESIGN.md section 2).
	GuardFatalVerdict
	// GuardRecoverableVerdict: the verdict is neither unauthorized nor
	// canceled.
	GuardRecoverableVerdict
	// GuardStaleRecoveryUnused: the server answered (not [GuardNoAnswer]),
	// recoverable, and this resume has not used its one stale recovery yet
	// (failure story S2).
	GuardStaleRecoveryUnused
	// GuardStaleRecoveryUsed: the server answered, recoverable, and this
	// resume already used its stale recovery.
	GuardStaleRecoveryUsed
	// GuardSessionBudgetLeft: one more session stays within
	// [Config.MaxSessions] per [Config.Window].
	GuardSessionBudgetLeft
	// GuardChurnLimitReached: one more session would exceed
	// [Config.MaxSessions] per [Config.Window].
	GuardChurnLimitReached
	// GuardRetrying: the failed state is not terminal.
	GuardRetrying
	// GuardChurnFailure: the failed state is terminal with ReasonChurn, the
	// one terminal reason that cools down and retries.
	GuardChurnFailure
	// GuardListingRetryLeft: a listing failed after a successful handshake
	// with a verdict that says the session is fine (forbidden,
	// rate-limited, server-error, application, timeout: the server
	// answered, or was slow), and the session has had fewer than
	// [Config.ListingRetries] listing retries: the listing is retried on
	// the same session.
	GuardListingRetryLeft
	// GuardListingRetrySpent: recoverable, and either the verdict says the
	// session may be gone (transport, session-expired, protocol, unknown,
	// method-not-found) or the session's listing retries are spent: the
	// session is replaced.
	GuardListingRetrySpent
	// GuardListingFailed: a listing on the current session failed and its
	// retry is scheduled (the retry's RetryDue, not a handshake's).
	GuardListingFailed
	// GuardNoAnswer: the verdict is transport or timeout: no HTTP answer at
	// all, or our own deadline passed first. A resumed session that got
	// no answer is not shown to be stale: the server may be down.
	GuardNoAnswer
	// GuardExpiryEvidence: recoverable, and the server answered with
	// something other than server-error or rate-limited: taken for a
	// session it no longer serves (failure story S2), which is forgotten.
	GuardExpiryEvidence
	// GuardServerBusy: the verdict is server-error or rate-limited: the
	// server answered that it cannot serve now (a 503 of a proxy whose
	// server is down, a 429), which does not show the session expired; a
	// stale recovery still runs (a server may reject a stale session with
	// 500, S2), but the persisted session is kept until a new session
	// replaces it.
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

// noAnswer reports whether class c says the server gave no answer: no HTTP
// status at all (transport) or our own deadline first (timeout).
func noAnswer(c classify.Class) bool {
	return c == classify.Transport || c == classify.Timeout
}

// serverBusy reports whether class c is an answer that the server cannot
// serve now: server-error (5xx) or rate-limited (429).
func serverBusy(c classify.Class) bool {
	return c == classify.ServerError || c == classify.RateLimited
}

// sessionFine reports whether a failed listing's verdict says the session it
// ran on is fine: the server (or a gateway in front of it) answered with an
// error that a new session cannot fix, or was slow. transport and
// session-expired say the session may be gone; protocol and unknown say
// nothing sure about it.
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

// eval evaluates g against the trigger being stepped and the extended state.
// Guards are pure: they read, never write.
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
