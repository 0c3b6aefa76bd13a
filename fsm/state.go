package fsm

import "fmt"

// State is a connection state (DESIGN.md section 2). The six mandatory
// states are Connecting, ResumingBlind, Probing, Ready, StaleRecovering and
// Failed; Idle and Closed frame them; ResumingKnown and ListingDeclared draw
// the resume whose capabilities were persisted with the session.
type State uint8

const (
	// Idle: constructed, not started. Left on Started (to Connecting,
	// ResumingBlind or ResumingKnown by the resume mode), CloseRequested or
	// DetachRequested (to Closed).
	Idle State = iota
	// Connecting: opening a new session with a full handshake (`initialize`,
	// or `server/discover` on 2026-07-28+ servers), then listing what the
	// server declared. Left on DiscoverySucceeded (to Ready) or on a failure
	// (to Failed). Never probes.
	Connecting
	// ResumingBlind: re-attaching a persisted session id whose capabilities
	// are unknown; nothing is sent yet. Left on Attached (to Probing) or
	// AttachRefused (bad persisted state; to Connecting).
	ResumingBlind
	// ResumingKnown: re-attaching a persisted session id whose capabilities
	// were persisted with it (a saved InitializeResult or a 2026-07-28
	// discovery result). Left on Attached (to ListingDeclared) or
	// AttachRefused (to Connecting).
	ResumingKnown
	// Probing: blind probes of tools/list, resources/list, prompts/list and
	// resources/templates/list on a resumed session; only tools/list decides
	// (failure story S1). Left on DiscoverySucceeded (to Ready); on a failure
	// that is not unauthorized, canceled or timeout to StaleRecovering once
	// per resume (S2); otherwise to Failed.
	Probing
	// ListingDeclared: a known-capabilities resume lists, strictly, what the
	// persisted capabilities declared; it does not probe. Left like Probing.
	ListingDeclared
	// Ready: serving calls. Left when the session died or a call's verdict
	// reconnects (to Connecting, or to Failed for unauthorized, canceled or
	// churn); every other call failure is an internal transition (S4).
	Ready
	// StaleRecovering: the resumed session id was dropped; one full
	// re-handshake and discovery; never probes. Left on DiscoverySucceeded
	// (to Ready) or on a failure (to Failed).
	StaleRecovering
	// Failed: a classified failure or an exhausted budget. While retrying
	// (no [Reason]) it leaves on RetryDue (to Connecting, never Probing);
	// with a Reason it is terminal and leaves only on ReconnectRequested (to
	// Connecting) or on a close or detach request (to Closed).
	Failed
	// Closed: absorbing. Every trigger is ignored: no event, no command.
	Closed

	numStates
)

var stateNames = [numStates]string{
	Idle:            "idle",
	Connecting:      "connecting",
	ResumingBlind:   "resuming-blind",
	ResumingKnown:   "resuming-known",
	Probing:         "probing",
	ListingDeclared: "listing-declared",
	Ready:           "ready",
	StaleRecovering: "stale-recovering",
	Failed:          "failed",
	Closed:          "closed",
}

// States returns every state in declaration order.
func States() []State {
	out := make([]State, numStates)
	for i := range out {
		out[i] = State(i)
	}
	return out
}

// String returns the kebab-case name, e.g. "stale-recovering".
func (s State) String() string {
	if s < numStates {
		return stateNames[s]
	}
	return fmt.Sprintf("state(%d)", uint8(s))
}

// Reason says why a failed state is terminal. The zero value, ReasonNone,
// means not terminal. Churn and an exhausted budget are reasons, not error
// classes (DESIGN.md section 2).
type Reason uint8

const (
	// ReasonNone: not terminal (a retrying failed state, or any other state).
	ReasonNone Reason = iota
	// ReasonUnauthorized: the server answered unauthorized; the host
	// re-authorizes and requests a reconnect.
	ReasonUnauthorized
	// ReasonCanceled: our own context was canceled.
	ReasonCanceled
	// ReasonBudgetSpent: the shell's backoff stopped (RetriesExhausted).
	ReasonBudgetSpent
	// ReasonChurn: opening one more session would exceed
	// [Config.MaxSessions] within [Config.Window].
	ReasonChurn
	// ReasonOfVerdict appears only in [Row.Reason]: the terminal reason is
	// the trigger's verdict class (unauthorized or canceled). The machine
	// never reports it.
	ReasonOfVerdict
)

var reasonNames = [...]string{
	ReasonNone:         "",
	ReasonUnauthorized: "unauthorized",
	ReasonCanceled:     "canceled",
	ReasonBudgetSpent:  "budget-spent",
	ReasonChurn:        "churn",
	ReasonOfVerdict:    "of-verdict",
}

// String returns the kebab-case name, e.g. "budget-spent"; "" for ReasonNone.
func (r Reason) String() string {
	if int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return fmt.Sprintf("reason(%d)", uint8(r))
}
