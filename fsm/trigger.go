package fsm

import (
	"fmt"
	"slices"
	"time"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
)

// triggerList lists the trigger kinds in declaration order.
var triggerList = [...]events.Trigger{events.TriggerStarted, events.TriggerHandshakeSucceeded, events.TriggerHandshakeFailed, events.TriggerAttached,
	events.TriggerAttachRefused, events.TriggerDiscoverySucceeded, events.TriggerDiscoveryFailed, events.TriggerCatalogListed, events.TriggerSessionDied,
	events.TriggerRetryDue, events.TriggerRetriesExhausted, events.TriggerReconnectRequested, events.TriggerCloseRequested, events.TriggerDetachRequested, events.TriggerChurnCooled}

// TriggerKinds returns every trigger kind in declaration order.
func TriggerKinds() []events.Trigger {
	return slices.Clone(triggerList[:])
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
	ResumeNone ResumeMode = iota // no persisted session: open one with a full handshake
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
	Kind events.Trigger // the fact reported
	// Resume says how Started and ReconnectRequested begin; ignored by
	// other kinds.
	Resume ResumeMode
	// Verdict is the classified failure: required for HandshakeFailed and
	// DiscoveryFailed; optional for SessionDied, AttachRefused and
	// RetriesExhausted; dropped otherwise.
	Verdict classify.Verdict
	// Generation is the [Command.Generation] whose result this is; zero for
	// host requests. Any other than the current one is a [*GenerationError].
	Generation uint64
	Now        time.Time // the fact's time on the shell's clock: it measures the churn window
}
