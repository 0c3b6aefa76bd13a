package supervisor

import "github.com/mcpsup/mcpsup/events"

// The states and reasons the supervisor's own API returns, re-exported
// from events (which documents each value, with the event kinds and
// triggers a sink switches on).

// State is the connection state (events.State), as events.Event names its
// From and To.
type State = events.State

// The states.
const (
	Idle            = events.StateIdle
	Connecting      = events.StateConnecting
	ResumingBlind   = events.StateResumingBlind
	ResumingKnown   = events.StateResumingKnown
	Probing         = events.StateProbing
	ListingDeclared = events.StateListingDeclared
	Ready           = events.StateReady
	StaleRecovering = events.StateStaleRecovering
	Failed          = events.StateFailed
	Closed          = events.StateClosed
)

// Reason says why a failed state is terminal; ReasonNone: not terminal.
type Reason = events.Reason

// The reasons of a terminal failed state (DESIGN.md section 2).
const (
	ReasonNone         = events.ReasonNone
	ReasonUnauthorized = events.ReasonUnauthorized
	ReasonCanceled     = events.ReasonCanceled
	ReasonBudgetSpent  = events.ReasonBudgetSpent
	ReasonChurn        = events.ReasonChurn
)
