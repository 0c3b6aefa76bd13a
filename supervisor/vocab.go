package supervisor

import "github.com/mcpsup/mcpsup/events"

// The event vocabulary, re-exported from events (which documents each
// value) so a host switches on it with this package alone.

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

// Trigger is the fact that caused a transition (events.Event.Trigger).
type Trigger = events.Trigger

// The triggers.
const (
	TriggerStarted            = events.TriggerStarted
	TriggerHandshakeSucceeded = events.TriggerHandshakeSucceeded
	TriggerHandshakeFailed    = events.TriggerHandshakeFailed
	TriggerAttached           = events.TriggerAttached
	TriggerAttachRefused      = events.TriggerAttachRefused
	TriggerDiscoverySucceeded = events.TriggerDiscoverySucceeded
	TriggerDiscoveryFailed    = events.TriggerDiscoveryFailed
	TriggerCatalogListed      = events.TriggerCatalogListed
	TriggerSessionDied        = events.TriggerSessionDied
	TriggerRetryDue           = events.TriggerRetryDue
	TriggerRetriesExhausted   = events.TriggerRetriesExhausted
	TriggerReconnectRequested = events.TriggerReconnectRequested
	TriggerCloseRequested     = events.TriggerCloseRequested
	TriggerDetachRequested    = events.TriggerDetachRequested
	TriggerChurnCooled        = events.TriggerChurnCooled
)

// Kind says what an event reports (events.Event.Kind).
type Kind = events.Kind

// The event kinds.
const (
	KindTransition           = events.KindTransition
	KindProbeReport          = events.KindProbeReport
	KindCatalogChanged       = events.KindCatalogChanged
	KindCallFailed           = events.KindCallFailed
	KindSessionVerified      = events.KindSessionVerified
	KindCallResent           = events.KindCallResent
	KindCallReissued         = events.KindCallReissued
	KindStreamDisabled       = events.KindStreamDisabled
	KindStreamEnabled        = events.KindStreamEnabled
	KindStreamEventDropped   = events.KindStreamEventDropped
	KindStreamDeclined       = events.KindStreamDeclined
	KindRetryScheduled       = events.KindRetryScheduled
	KindRateLimitWindow      = events.KindRateLimitWindow
	KindSessionOpened        = events.KindSessionOpened
	KindSessionEnded         = events.KindSessionEnded
	KindResponseDropped      = events.KindResponseDropped
	KindServerRequestRefused = events.KindServerRequestRefused
	KindStdoutLineDropped    = events.KindStdoutLineDropped
	KindProcessExited        = events.KindProcessExited
	KindEraChanged           = events.KindEraChanged
)
