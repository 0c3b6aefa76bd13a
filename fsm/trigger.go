package fsm

import (
	"fmt"
	"time"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
)

// TriggerKind names a fact the shell reports to the machine, in the past
// tense: the string type events.Event names its Trigger with. Results of
// commands carry the [Command.Generation] they answer.
type TriggerKind = events.Trigger

// The trigger kinds, with their events names.
const (
	// Started: the host started the supervisor; [Trigger.Resume] says how.
	Started = events.TriggerStarted
	// HandshakeSucceeded: a Dial completed its handshake.
	HandshakeSucceeded = events.TriggerHandshakeSucceeded
	// HandshakeFailed: a Dial failed; carries the verdict (required).
	HandshakeFailed = events.TriggerHandshakeFailed
	// Attached: an Attach re-attached the persisted session.
	Attached = events.TriggerAttached
	// AttachRefused: the persisted session could not be attached locally
	// (bad persisted state, e.g. a session id that is not visible ASCII);
	// the verdict is optional (canceled or unauthorized make it terminal).
	AttachRefused = events.TriggerAttachRefused
	// DiscoverySucceeded: a Probe or ListDeclared produced the catalog
	// (tools/list answered; speculative probes settled on their own).
	DiscoverySucceeded = events.TriggerDiscoverySucceeded
	// DiscoveryFailed: a Probe's tools/list or a ListDeclared failed; carries
	// the verdict (required).
	DiscoveryFailed = events.TriggerDiscoveryFailed
	// CatalogListed: a re-list while ready succeeded, e.g. after
	// notifications/tools/list_changed.
	CatalogListed = events.TriggerCatalogListed
	// SessionDied: the session ended by itself (its Done closed: the
	// server said it is gone, a verification or a keepalive ping went
	// unanswered, the process exited); carries the verdict of its cause,
	// or none when there was no error. A failed call never steps the
	// machine: the session reports its own end.
	SessionDied = events.TriggerSessionDied
	// RetryDue: the delay of a ScheduleRetry elapsed.
	RetryDue = events.TriggerRetryDue
	// RetriesExhausted: the shell's backoff returned Stop instead of a delay
	// for a ScheduleRetry; the budget lives in the backoff configuration.
	// It may carry the ScheduleRetry's verdict (the failure that was to be
	// retried), which a failed state entered on it keeps.
	RetriesExhausted = events.TriggerRetriesExhausted
	// ReconnectRequested: the host asked for a fresh session (e.g. after
	// re-authorizing). Resets the retry attempts; it counts toward the
	// churn limit like any other new session: past it the request is held
	// (ready keeps its session; failed becomes a churn failure).
	ReconnectRequested = events.TriggerReconnectRequested
	// CloseRequested: the host closes the supervisor and ends the
	// server-side session (DELETE).
	CloseRequested = events.TriggerCloseRequested
	// DetachRequested: the host stops the supervisor but keeps the session
	// resumable: no DELETE.
	DetachRequested = events.TriggerDetachRequested
	// ChurnCooled: the shell's churn cool-down (supervisor
	// Config.ChurnCooldown, 5 minutes by default) elapsed after the machine
	// entered a churn failure; the machine tries again. Resets the retry
	// attempts.
	ChurnCooled = events.TriggerChurnCooled
)

// triggerID is a trigger kind's dense index, for the machine's arrays and as
// the trigger value stateless is fired with.
type triggerID uint8

const numTriggers = 15

// triggerList lists the trigger kinds in declaration order, indexed by
// triggerID.
var triggerList = [numTriggers]TriggerKind{Started, HandshakeSucceeded, HandshakeFailed, Attached,
	AttachRefused, DiscoverySucceeded, DiscoveryFailed, CatalogListed, SessionDied,
	RetryDue, RetriesExhausted, ReconnectRequested, CloseRequested, DetachRequested, ChurnCooled}

// triggerIndex returns the dense index of k; false for a name that is not a
// trigger kind. A switch, not a map: Go compiles it to a binary search on
// length and bytes, without hashing the name (Step's hottest lookup).
// TestTriggerIndexMatchesTriggerList pins it to triggerList.
func triggerIndex(k TriggerKind) (triggerID, bool) {
	switch k {
	case Started:
		return 0, true
	case HandshakeSucceeded:
		return 1, true
	case HandshakeFailed:
		return 2, true
	case Attached:
		return 3, true
	case AttachRefused:
		return 4, true
	case DiscoverySucceeded:
		return 5, true
	case DiscoveryFailed:
		return 6, true
	case CatalogListed:
		return 7, true
	case SessionDied:
		return 8, true
	case RetryDue:
		return 9, true
	case RetriesExhausted:
		return 10, true
	case ReconnectRequested:
		return 11, true
	case CloseRequested:
		return 12, true
	case DetachRequested:
		return 13, true
	case ChurnCooled:
		return 14, true
	}
	return 0, false
}

// String returns the trigger kind's name (stateless prints it in ToGraph).
func (id triggerID) String() string { return string(triggerList[id]) }

// TriggerKinds returns every trigger kind in declaration order.
func TriggerKinds() []TriggerKind {
	out := make([]TriggerKind, numTriggers)
	copy(out, triggerList[:])
	return out
}

// needsVerdict reports whether a trigger of kind k is meaningless without a
// failure verdict.
func needsVerdict(k TriggerKind) bool {
	return k == HandshakeFailed || k == DiscoveryFailed
}

// carriesVerdict reports whether a trigger of kind k carries a verdict; Step
// drops the verdict of the other kinds so events never show one.
func carriesVerdict(k TriggerKind) bool {
	return needsVerdict(k) || k == SessionDied || k == AttachRefused || k == RetriesExhausted
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
	// Resume says how Started and ReconnectRequested begin; ignored by
	// other kinds (a RetryDue re-attaches the persisted session the machine
	// still holds, see [Machine.RetryResume]).
	Resume ResumeMode
	// Verdict is the classified failure. Required (class other than
	// classify.None) for HandshakeFailed and DiscoveryFailed; optional for SessionDied, AttachRefused and RetriesExhausted; ignored
	// otherwise.
	Verdict classify.Verdict
	// Generation is the [Command.Generation] of the command whose result this
	// is. Zero means "not tied to a session" (host requests); a non-zero
	// generation other than the machine's current one is refused with a
	// [*GenerationError], so late results of an old session never move the
	// machine.
	Generation uint64
	// Now is the time of the fact, supplied by the shell's clock. It
	// measures the churn window; set it on every trigger that can open a
	// session. The machine never reads a clock.
	Now time.Time
}
