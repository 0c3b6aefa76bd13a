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
	GuardResumeNone         Guard = iota // resume without a persisted session
	GuardResumeBlind                     // resume a persisted session, capabilities unknown
	GuardResumeKnown                     // resume a persisted session with its capabilities
	GuardFatalVerdict                    // the verdict is unauthorized or canceled
	GuardRecoverableVerdict              // the verdict is recoverable
	// GuardStaleRecoveryUnused: recoverable, the server answered, and this
	// resume has its one stale recovery left (failure story S2).
	GuardStaleRecoveryUnused
	GuardStaleRecoveryUsed // as GuardStaleRecoveryUnused, recovery used
	// GuardSessionBudgetLeft: one more session stays within
	// [Config.MaxSessions] per [Config.Window].
	GuardSessionBudgetLeft
	GuardChurnLimitReached // one more session would exceed it
	GuardRetrying          // the failed state is not terminal
	GuardChurnFailure      // terminal with ReasonChurn, which cools down
	// GuardListingRetryLeft: a listing failed with a verdict a new session
	// cannot fix, with retries left ([Config.ListingRetries]).
	GuardListingRetryLeft
	GuardListingRetrySpent // recoverable, not GuardListingRetryLeft
	GuardListingFailed     // the session's listing failed; its retry is due
	GuardNoAnswer          // transport or timeout: the server may be down
	// GuardExpiryEvidence: recoverable, answered, not server-busy: the
	// session is taken as expired (decision 0002).
	GuardExpiryEvidence
	// GuardServerBusy: server-error or rate-limited: recover, keeping the
	// persisted session until a new one replaces it.
	GuardServerBusy

	numGuards
)

// String returns the kebab-case name used in events and docs/statechart.md.
func (g Guard) String() string {
	if g < numGuards {
		return guards[g].name
	}
	return fmt.Sprintf("guard(%d)", uint8(g))
}

type classSet uint32 // a set of verdict classes

func classes(cs ...classify.Class) (s classSet) {
	for _, c := range cs {
		s |= 1 << c
	}
	return s
}

func (s classSet) has(c classify.Class) bool { return s&(1<<c) != 0 }

// The verdicts the guards tell apart (DESIGN.md section 2).
var (
	fatal      = classes(classify.Unauthorized, classify.Canceled)
	noAnswer   = classes(classify.Transport, classify.Timeout)       // no HTTP answer, or our own deadline first
	serverBusy = classes(classify.ServerError, classify.RateLimited) // 5xx, 429
	answered   = ^(fatal | noAnswer)                                 // recoverable, and the server answered
	anyVerdict = ^classSet(0)
	// sessionFine: a failed listing's verdict that a new session cannot fix.
	sessionFine = classes(classify.Forbidden, classify.RateLimited, classify.ServerError, classify.Application, classify.Timeout)
)

// guards holds each guard as data: it passes when the verdict's class is in
// verdicts and test, if any, passes on the machine. A test only reads.
var guards = [numGuards]struct {
	name     string
	verdicts classSet
	test     func(m *Machine) bool // reads m.in, the trigger being stepped
}{
	GuardResumeNone:          {"resume-none", anyVerdict, func(m *Machine) bool { return m.in.resume == ResumeNone }},
	GuardResumeBlind:         {"resume-blind", anyVerdict, func(m *Machine) bool { return m.in.resume == ResumeBlind }},
	GuardResumeKnown:         {"resume-known", anyVerdict, func(m *Machine) bool { return m.in.resume == ResumeKnown }},
	GuardFatalVerdict:        {"fatal-verdict", fatal, nil},
	GuardRecoverableVerdict:  {"recoverable-verdict", ^fatal, nil},
	GuardStaleRecoveryUnused: {"stale-recovery-unused", answered, func(m *Machine) bool { return !m.staleUsed }},
	GuardStaleRecoveryUsed:   {"stale-recovery-used", answered, func(m *Machine) bool { return m.staleUsed }},
	GuardSessionBudgetLeft:   {"session-budget-left", anyVerdict, func(m *Machine) bool { return !m.churnLimitReached(m.in.now) }},
	GuardChurnLimitReached:   {"churn-limit-reached", anyVerdict, func(m *Machine) bool { return m.churnLimitReached(m.in.now) }},
	GuardRetrying:            {"retrying", anyVerdict, func(m *Machine) bool { return m.reason == events.ReasonNone }},
	GuardChurnFailure:        {"churn-failure", anyVerdict, func(m *Machine) bool { return m.reason == events.ReasonChurn }},
	GuardListingRetryLeft:    {"listing-retry-left", sessionFine, func(m *Machine) bool { return m.listFails < m.listingRetries }},
	GuardListingRetrySpent:   {"listing-retry-spent", ^fatal, func(m *Machine) bool { return !sessionFine.has(m.in.class) || m.listFails >= m.listingRetries }},
	GuardListingFailed:       {"listing-failed", anyVerdict, func(m *Machine) bool { return m.listFails > 0 }},
	GuardNoAnswer:            {"no-answer", noAnswer, nil},
	GuardExpiryEvidence:      {"expiry-evidence", answered &^ serverBusy, nil},
	GuardServerBusy:          {"server-busy", serverBusy, nil},
}

// guardInput is what guards read of the trigger being stepped.
type guardInput struct {
	class  classify.Class
	resume ResumeMode
	now    time.Time
}

// eval evaluates g against m.in and the extended state; it only reads.
func (g Guard) eval(m *Machine) bool {
	d := &guards[g]
	return d.verdicts.has(m.in.class) && (d.test == nil || d.test(m))
}
