package fsm

import (
	"fmt"
	"time"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
)

// triggerID is a trigger kind's dense index, for the machine's arrays and as
// the trigger value stateless is fired with.
type triggerID uint8

const numTriggers = 15

// triggerList lists the trigger kinds in declaration order, indexed by
// triggerID.
var triggerList = [numTriggers]events.Trigger{events.TriggerStarted, events.TriggerHandshakeSucceeded, events.TriggerHandshakeFailed, events.TriggerAttached,
	events.TriggerAttachRefused, events.TriggerDiscoverySucceeded, events.TriggerDiscoveryFailed, events.TriggerCatalogListed, events.TriggerSessionDied,
	events.TriggerRetryDue, events.TriggerRetriesExhausted, events.TriggerReconnectRequested, events.TriggerCloseRequested, events.TriggerDetachRequested, events.TriggerChurnCooled}

// triggerIndex returns the dense index of k; false for a name that is not a
// trigger kind. A switch, not a map: Go compiles it to a binary search on
// length and bytes, without hashing the name (Step's hottest lookup).
// TestTriggerIndexMatchesTriggerList pins it to triggerList.
func triggerIndex(k events.Trigger) (triggerID, bool) {
	switch k {
	case events.TriggerStarted:
		return 0, true
	case events.TriggerHandshakeSucceeded:
		return 1, true
	case events.TriggerHandshakeFailed:
		return 2, true
	case events.TriggerAttached:
		return 3, true
	case events.TriggerAttachRefused:
		return 4, true
	case events.TriggerDiscoverySucceeded:
		return 5, true
	case events.TriggerDiscoveryFailed:
		return 6, true
	case events.TriggerCatalogListed:
		return 7, true
	case events.TriggerSessionDied:
		return 8, true
	case events.TriggerRetryDue:
		return 9, true
	case events.TriggerRetriesExhausted:
		return 10, true
	case events.TriggerReconnectRequested:
		return 11, true
	case events.TriggerCloseRequested:
		return 12, true
	case events.TriggerDetachRequested:
		return 13, true
	case events.TriggerChurnCooled:
		return 14, true
	}
	return 0, false
}

// String returns the trigger kind's name (stateless prints it in ToGraph).
func (id triggerID) String() string { return string(triggerList[id]) }

// TriggerKinds returns every trigger kind in declaration order.
func TriggerKinds() []events.Trigger {
	out := make([]events.Trigger, numTriggers)
	copy(out, triggerList[:])
	return out
}

// needsVerdict reports whether a trigger of kind k is meaningless without a
// failure verdict.
func needsVerdict(k events.Trigger) bool {
	return k == events.TriggerHandshakeFailed || k == events.TriggerDiscoveryFailed
}

// carriesVerdict reports whether a trigger of kind k carries a verdict; Step
// drops the verdict of the other kinds so events never show one.
func carriesVerdict(k events.Trigger) bool {
	return needsVerdict(k) || k == events.TriggerSessionDied || k == events.TriggerAttachRefused || k == events.TriggerRetriesExhausted
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
	Kind events.Trigger
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
