package events

// The vocabulary of events: named string types whose values are the
// kebab-case names written in the JSON form, so a host can switch on them
// (e.To == events.StateFailed) and a reader of recorded JSON sees the same
// strings. The fsm and supervisor packages re-export them as type aliases
// with the same constants under shorter names (fsm.Failed, supervisor.Failed).
// A reader must accept values it does not know: new ones may be added.

// Kind says what an [Event] reports; see the Kind constants.
type Kind string

// State is a connection state (DESIGN.md section 2), as [Event.From] and
// [Event.To] name it.
type State string

// The states. The six mandatory ones are connecting, resuming-blind,
// probing, ready, stale-recovering and failed; idle and closed frame them;
// resuming-known and listing-declared draw the resume whose capabilities
// were persisted with the session. The fsm package documents each.
const (
	StateIdle            State = "idle"
	StateConnecting      State = "connecting"
	StateResumingBlind   State = "resuming-blind"
	StateResumingKnown   State = "resuming-known"
	StateProbing         State = "probing"
	StateListingDeclared State = "listing-declared"
	StateReady           State = "ready"
	StateStaleRecovering State = "stale-recovering"
	StateFailed          State = "failed"
	StateClosed          State = "closed"
)

// String returns the kebab-case name, e.g. "stale-recovering".
func (s State) String() string { return string(s) }

// Trigger is the fact that caused a transition, as [Event.Trigger] names it.
type Trigger string

// The triggers; the fsm package documents each.
const (
	TriggerStarted            Trigger = "started"
	TriggerHandshakeSucceeded Trigger = "handshake-succeeded"
	TriggerHandshakeFailed    Trigger = "handshake-failed"
	TriggerAttached           Trigger = "attached"
	TriggerAttachRefused      Trigger = "attach-refused"
	TriggerDiscoverySucceeded Trigger = "discovery-succeeded"
	TriggerDiscoveryFailed    Trigger = "discovery-failed"
	TriggerCatalogListed      Trigger = "catalog-listed"
	TriggerSessionDied        Trigger = "session-died"
	TriggerRetryDue           Trigger = "retry-due"
	TriggerRetriesExhausted   Trigger = "retries-exhausted"
	TriggerReconnectRequested Trigger = "reconnect-requested"
	TriggerCloseRequested     Trigger = "close-requested"
	TriggerDetachRequested    Trigger = "detach-requested"
	TriggerChurnCooled        Trigger = "churn-cooled"
)

// String returns the kebab-case name, e.g. "session-died".
func (t Trigger) String() string { return string(t) }

// Reason says why a failed state is terminal, as [Event.Reason] names it.
// The zero value, [ReasonNone], means not terminal. Churn and an exhausted
// budget are reasons, not error classes (DESIGN.md section 2).
type Reason string

// The reasons.
const (
	// ReasonNone: not terminal (a retrying failed state, or any other state).
	ReasonNone Reason = ""
	// ReasonUnauthorized: the server answered unauthorized; the host
	// re-authorizes and requests a reconnect.
	ReasonUnauthorized Reason = "unauthorized"
	// ReasonCanceled: our own context was canceled.
	ReasonCanceled Reason = "canceled"
	// ReasonBudgetSpent: the retry budget (attempts or elapsed time) is
	// spent; only a configured budget is (by default retries never stop).
	ReasonBudgetSpent Reason = "budget-spent"
	// ReasonChurn: opening one more session would exceed the churn limit;
	// it cools down, then the supervisor tries again (trigger churn-cooled).
	ReasonChurn Reason = "churn"
)

// String returns the kebab-case name, e.g. "budget-spent"; "" for ReasonNone.
func (r Reason) String() string { return string(r) }
