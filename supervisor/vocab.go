package supervisor

import (
	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/fsm"
)

// The event vocabulary a host switches on, re-exported from events and fsm
// so that, say, e.To == supervisor.Failed && e.Reason ==
// supervisor.ReasonUnauthorized or e.Kind == supervisor.KindCallFailed
// compiles with this package alone. The values are the strings of the events
// JSON form.

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

// The triggers, re-exported from fsm (which documents each).
const (
	TriggerStarted            = fsm.Started
	TriggerHandshakeSucceeded = fsm.HandshakeSucceeded
	TriggerHandshakeFailed    = fsm.HandshakeFailed
	TriggerAttached           = fsm.Attached
	TriggerAttachRefused      = fsm.AttachRefused
	TriggerDiscoverySucceeded = fsm.DiscoverySucceeded
	TriggerDiscoveryFailed    = fsm.DiscoveryFailed
	TriggerCatalogListed      = fsm.CatalogListed
	TriggerSessionDied        = fsm.SessionDied
	TriggerRetryDue           = fsm.RetryDue
	TriggerRetriesExhausted   = fsm.RetriesExhausted
	TriggerReconnectRequested = fsm.ReconnectRequested
	TriggerCloseRequested     = fsm.CloseRequested
	TriggerDetachRequested    = fsm.DetachRequested
	TriggerChurnCooled        = fsm.ChurnCooled
)

// Kind says what an event reports (events.Event.Kind).
type Kind = events.Kind

// The event kinds, re-exported from events (which documents each).
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
