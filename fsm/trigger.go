package fsm

import (
	"fmt"
	"time"

	"github.com/mcpsup/mcpsup/classify"
)

// TriggerKind names a fact the shell reports to the machine, in the past
// tense. Results of commands carry the [Command.Generation] they answer.
type TriggerKind uint8

const (
	// Started: the host started the supervisor; [Trigger.Resume] says how.
	Started TriggerKind = iota
	// HandshakeSucceeded: a Dial completed its handshake.
	HandshakeSucceeded
	// HandshakeFailed: a Dial failed; carries the verdict (required).
	HandshakeFailed
	// Attached: an Attach re-attached the persisted session.
	Attached
	// AttachRefused: the persisted session could not be attached locally
	// (bad persisted state, e.g. a session id that is not visible ASCII);
	// the verdict is optional (canceled or unauthorized make it terminal).
	AttachRefused
	// DiscoverySucceeded: a Probe or ListDeclared produced the catalog
	// (tools/list answered; speculative probes settled on their own).
	DiscoverySucceeded
	// DiscoveryFailed: a Probe's tools/list or a ListDeclared failed; carries
	// the verdict (required).
	DiscoveryFailed
	// CatalogListed: a re-list while ready succeeded, e.g. after
	// notifications/tools/list_changed.
	CatalogListed
	// CallFailed: a call on the live session failed; carries the verdict
	// (required).
	CallFailed
	// SessionDied: the go-sdk session ended by itself (ClientSession.Wait
	// returned, or a call reported the connection closed); carries the
	// verdict of its cause, or none when there was no error.
	SessionDied
	// RetryDue: the delay of a ScheduleRetry elapsed.
	RetryDue
	// RetriesExhausted: the shell's backoff returned Stop instead of a delay
	// for a ScheduleRetry; the budget lives in the backoff configuration.
	RetriesExhausted
	// ReconnectRequested: the host asked for a fresh session (e.g. after
	// re-authorizing). Resets the retry attempts and the churn window.
	ReconnectRequested
	// CloseRequested: the host closes the supervisor and ends the
	// server-side session (DELETE).
	CloseRequested
	// DetachRequested: the host stops the supervisor but keeps the session
	// resumable: no DELETE.
	DetachRequested

	numTriggers
)

var triggerNames = [numTriggers]string{
	Started:            "started",
	HandshakeSucceeded: "handshake-succeeded",
	HandshakeFailed:    "handshake-failed",
	Attached:           "attached",
	AttachRefused:      "attach-refused",
	DiscoverySucceeded: "discovery-succeeded",
	DiscoveryFailed:    "discovery-failed",
	CatalogListed:      "catalog-listed",
	CallFailed:         "call-failed",
	SessionDied:        "session-died",
	RetryDue:           "retry-due",
	RetriesExhausted:   "retries-exhausted",
	ReconnectRequested: "reconnect-requested",
	CloseRequested:     "close-requested",
	DetachRequested:    "detach-requested",
}

// TriggerKinds returns every trigger kind in declaration order.
func TriggerKinds() []TriggerKind {
	out := make([]TriggerKind, numTriggers)
	for i := range out {
		out[i] = TriggerKind(i)
	}
	return out
}

// String returns the kebab-case name, e.g. "session-died".
func (k TriggerKind) String() string {
	if k < numTriggers {
		return triggerNames[k]
	}
	return fmt.Sprintf("trigger(%d)", uint8(k))
}

// needsVerdict reports whether a trigger of this kind is meaningless without
// a failure verdict.
func (k TriggerKind) needsVerdict() bool {
	return k == HandshakeFailed || k == DiscoveryFailed || k == CallFailed
}

// carriesVerdict reports whether a trigger of this kind carries a verdict;
// Step drops the verdict of the other kinds so events never show one.
func (k TriggerKind) carriesVerdict() bool {
	return k.needsVerdict() || k == SessionDied || k == AttachRefused
}

// ResumeMode says how Started begins (DESIGN.md section 2).
type ResumeMode uint8

const (
	// ResumeNone: no persisted session; open one with a full handshake.
	ResumeNone ResumeMode = iota
	// ResumeBlind: re-attach a persisted session id whose capabilities are
	// unknown, then probe (failure story S1).
	ResumeBlind
	// ResumeKnown: re-attach a persisted session id with its persisted
	// capabilities, then list what they declared, strictly.
	ResumeKnown
)

var resumeNames = [...]string{ResumeNone: "none", ResumeBlind: "blind", ResumeKnown: "known"}

// String returns "none", "blind" or "known".
func (r ResumeMode) String() string {
	if int(r) < len(resumeNames) {
		return resumeNames[r]
	}
	return fmt.Sprintf("resume(%d)", uint8(r))
}

// Trigger is one input to [Machine.Step].
type Trigger struct {
	// Kind is the fact reported.
	Kind TriggerKind
	// Resume says how Started begins; ignored by other kinds.
	Resume ResumeMode
	// Verdict is the classified failure. Required (class other than
	// classify.None) for HandshakeFailed, DiscoveryFailed and CallFailed;
	// optional for SessionDied and AttachRefused; ignored otherwise.
	Verdict classify.Verdict
	// Generation is the [Command.Generation] of the command whose result this
	// is. Zero means "not tied to a session" (host requests); a non-zero
	// generation other than the machine's current one is refused with a
	// [*GenerationError], so late results of an old session never move the
	// machine.
	Generation uint64
	// Now is the time of the fact, supplied by the shell's clock. It stamps
	// the event and measures the churn window; set it on every trigger that
	// can open a session. The machine never reads a clock.
	Now time.Time
}
