package fsm

import (
	"fmt"

	"github.com/mcpsup/mcpsup/classify"
)

// CommandKind names an action the shell must perform. The machine never
// performs I/O itself (DESIGN.md section 5); the shell executes commands in
// the order returned and feeds their results back as triggers.
type CommandKind uint8

const (
	// Dial: open a new session with a full handshake (`initialize`, or
	// `server/discover`); report HandshakeSucceeded or HandshakeFailed.
	Dial CommandKind = iota
	// Attach: re-attach the persisted session ([Command.Resume] is blind or
	// known) without `initialize`; report Attached or AttachRefused.
	Attach
	// Probe: run the blind probes of the four list methods; report
	// DiscoverySucceeded or DiscoveryFailed (tools/list decides).
	Probe
	// ListDeclared: list, strictly, what the server declared; report
	// DiscoverySucceeded or DiscoveryFailed.
	ListDeclared
	// PublishCatalog: publish the catalog just discovered (or re-listed) as
	// the catalog of [Command.Generation].
	PublishCatalog
	// ScheduleRetry: ask the backoff for the delay of retry
	// [Command.Attempt] (1 for the first since the last success or
	// reconnect request: reset the backoff then), lengthened to at least
	// [Command.Verdict]'s RetryAfter; report RetryDue when it elapses, or
	// RetriesExhausted when the backoff says stop.
	ScheduleRetry
	// ClearSession: forget the persisted session id; it will not be
	// resumed again.
	ClearSession
	// CloseSession: end the session of [Command.Generation] with DELETE
	// (go-sdk ClientSession.Close), if one is live.
	CloseSession
	// DetachSession: release the session of [Command.Generation] locally
	// without DELETE (the server forgot it, it died by itself, or the host
	// keeps it resumable).
	DetachSession

	numCommands
)

var commandNames = [numCommands]string{
	Dial:           "dial",
	Attach:         "attach",
	Probe:          "probe",
	ListDeclared:   "list-declared",
	PublishCatalog: "publish-catalog",
	ScheduleRetry:  "schedule-retry",
	ClearSession:   "clear-session",
	CloseSession:   "close-session",
	DetachSession:  "detach-session",
}

// String returns the kebab-case name, e.g. "schedule-retry".
func (k CommandKind) String() string {
	if k < numCommands {
		return commandNames[k]
	}
	return fmt.Sprintf("command(%d)", uint8(k))
}

// Command is one action for the shell.
type Command struct {
	// Kind is the action.
	Kind CommandKind
	// Generation is the session the command belongs to. Dial and Attach
	// carry the new generation they create; CloseSession and DetachSession
	// the old one they end; the rest the current one. Report results with
	// this generation in [Trigger.Generation].
	Generation uint64
	// Resume is blind or known for Attach; ResumeNone otherwise.
	Resume ResumeMode
	// Attempt numbers a ScheduleRetry from 1; zero for other kinds.
	Attempt int
	// Verdict is the failure a ScheduleRetry answers (its RetryAfter is a
	// lower bound for the delay); zero for other kinds.
	Verdict classify.Verdict
}
