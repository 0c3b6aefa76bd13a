package fsm

import "github.com/mcpsup/mcpsup/events"

// State is a connection state (DESIGN.md section 2), the string type that
// events.Event names its From and To with. The six mandatory states are
// Connecting, ResumingBlind, Probing, Ready, StaleRecovering and Failed; Idle
// and Closed frame them; ResumingKnown and ListingDeclared draw the resume
// whose capabilities were persisted with the session.
type State = events.State

// The states, with their events names.
const (
	// Idle: constructed, not started. Left on Started (to Connecting,
	// ResumingBlind or ResumingKnown by the resume mode), CloseRequested or
	// DetachRequested (to Closed).
	Idle = events.StateIdle
	// Connecting: opening a new session with a full handshake (`initialize`,
	// or `server/discover` on 2026-07-28+ servers), then listing what the
	// server declared. Left on DiscoverySucceeded (to Ready) or on a failure
	// (to Failed); a listing that fails while the session is fine is
	// retried on that session instead (internal, [Config.ListingRetries]
	// times). Never probes.
	Connecting = events.StateConnecting
	// ResumingBlind: re-attaching a persisted session id whose capabilities
	// are unknown; nothing is sent yet. Left on Attached (to Probing) or
	// AttachRefused (bad persisted state; to Connecting).
	ResumingBlind = events.StateResumingBlind
	// ResumingKnown: re-attaching a persisted session id whose capabilities
	// were persisted with it (a saved InitializeResult or a 2026-07-28
	// discovery result). Left on Attached (to ListingDeclared) or
	// AttachRefused (to Connecting).
	ResumingKnown = events.StateResumingKnown
	// Probing: blind probes of tools/list, resources/list, prompts/list and
	// resources/templates/list on a resumed session; only tools/list decides
	// (failure story S1). Left on DiscoverySucceeded (to Ready); on a failure
	// that is not unauthorized, canceled or timeout to StaleRecovering once
	// per resume (S2); otherwise to Failed.
	Probing = events.StateProbing
	// ListingDeclared: a known-capabilities resume lists, strictly, what the
	// persisted capabilities declared; it does not probe. Left like Probing.
	ListingDeclared = events.StateListingDeclared
	// Ready: serving calls. Left only when the session died (to
	// Connecting, or to Failed for unauthorized, canceled or churn), a
	// reconnect or the end: a failed call never steps the machine (S4);
	// the session itself ends on a session-expired answer or a failed
	// verification, and reports it as SessionDied.
	Ready = events.StateReady
	// StaleRecovering: the resumed session id was dropped; one full
	// re-handshake and discovery; never probes. Left on DiscoverySucceeded
	// (to Ready) or on a failure (to Failed); listing failures as in
	// Connecting.
	StaleRecovering = events.StateStaleRecovering
	// Failed: a classified failure, churn, or an exhausted (optional)
	// budget. While retrying (no [Reason]) it leaves on RetryDue (to
	// Connecting, never Probing); with a Reason it is terminal and leaves
	// only on ReconnectRequested within the churn limit (to Connecting, or
	// to a resume), on ChurnCooled for ReasonChurn, or on a close or detach
	// request (to Closed).
	Failed = events.StateFailed
	// Closed: absorbing. Every trigger is ignored: no event, no command.
	Closed = events.StateClosed
)

// stateID is a state's dense index, for the machine's arrays and as the
// state value stateless stores (a one-byte value boxes without allocating).
type stateID uint8

const numStates = 10

// stateList lists the states in declaration order, indexed by stateID.
var stateList = [numStates]State{Idle, Connecting, ResumingBlind, ResumingKnown, Probing,
	ListingDeclared, Ready, StaleRecovering, Failed, Closed}

var stateIDs = func() map[State]stateID {
	m := make(map[State]stateID, numStates)
	for i, s := range stateList {
		m[s] = stateID(i)
	}
	return m
}()

// stateIndex returns the dense index of s; false for a name that is not a
// state.
func stateIndex(s State) (stateID, bool) {
	id, ok := stateIDs[s]
	return id, ok
}

// String returns the state's name (stateless prints it in ToGraph).
func (id stateID) String() string { return string(stateList[id]) }

// States returns every state in declaration order.
func States() []State {
	out := make([]State, numStates)
	copy(out, stateList[:])
	return out
}

// Reason says why a failed state is terminal, the string type of
// events.Event's Reason. The zero value, ReasonNone, means not terminal.
type Reason = events.Reason

// The reasons.
const (
	// ReasonNone: not terminal (a retrying failed state, or any other state).
	ReasonNone = events.ReasonNone
	// ReasonUnauthorized: the server answered unauthorized; the host
	// re-authorizes and requests a reconnect.
	ReasonUnauthorized = events.ReasonUnauthorized
	// ReasonCanceled: our own context was canceled.
	ReasonCanceled = events.ReasonCanceled
	// ReasonBudgetSpent: the shell's backoff stopped (RetriesExhausted).
	ReasonBudgetSpent = events.ReasonBudgetSpent
	// ReasonChurn: opening one more session would exceed
	// [Config.MaxSessions] within [Config.Window]. The one terminal reason
	// that ends by itself: the shell's cool-down reports ChurnCooled.
	ReasonChurn = events.ReasonChurn
	// ReasonOfVerdict appears only in [Row.Reason]: the terminal reason is
	// the trigger's verdict class (unauthorized or canceled). The machine
	// never reports it.
	ReasonOfVerdict Reason = "of-verdict"
)
