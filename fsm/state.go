package fsm

import (
	"slices"

	"github.com/mcpsup/mcpsup/events"
)

// stateList lists the states in declaration order.
var stateList = [...]events.State{events.StateIdle, events.StateConnecting, events.StateResumingBlind, events.StateResumingKnown, events.StateProbing,
	events.StateListingDeclared, events.StateReady, events.StateStaleRecovering, events.StateFailed, events.StateClosed}

// States returns every state in declaration order.
func States() []events.State {
	return slices.Clone(stateList[:])
}

// ReasonOfVerdict appears only in [Row.Reason]: the terminal reason is the
// trigger's verdict class (unauthorized or canceled). The machine never
// reports it.
const ReasonOfVerdict events.Reason = "of-verdict"
