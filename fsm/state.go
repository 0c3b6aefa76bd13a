package fsm

import (
	"slices"

	"github.com/mcpsup/mcpsup/events"
)

// stateID is a state's dense index, for the machine's arrays and as the
// state value stateless stores.
type stateID uint8

const numStates = 10

// stateList lists the states in declaration order, indexed by stateID.
var stateList = [numStates]events.State{events.StateIdle, events.StateConnecting, events.StateResumingBlind, events.StateResumingKnown, events.StateProbing,
	events.StateListingDeclared, events.StateReady, events.StateStaleRecovering, events.StateFailed, events.StateClosed}

// stateIndex returns the dense index of s; false for a name that is not a
// state.
func stateIndex(s events.State) (stateID, bool) {
	i := slices.Index(stateList[:], s)
	return stateID(i), i >= 0
}

// String returns the state's name (stateless prints it in ToGraph).
func (id stateID) String() string { return string(stateList[id]) }

// States returns every state in declaration order.
func States() []events.State {
	return slices.Clone(stateList[:])
}

// ReasonOfVerdict appears only in [Row.Reason]: the terminal reason is the
// trigger's verdict class (unauthorized or canceled). The machine never
// reports it.
const ReasonOfVerdict events.Reason = "of-verdict"
