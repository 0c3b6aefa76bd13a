package fsm

import (
	"fmt"

	"github.com/mcpsup/mcpsup/classify"
)

// CommandKind names an action the shell performs, in order, feeding the
// results back as triggers.
type CommandKind uint8

const (
	// Dial: open a new session with a full handshake; report
	// HandshakeSucceeded or HandshakeFailed.
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
	// ScheduleRetry: wait the backoff's delay for retry [Command.Attempt]
	// (1 resets the backoff), at least [Command.Verdict]'s RetryAfter; report
	// RetryDue, or RetriesExhausted when the backoff says stop.
	ScheduleRetry
	ClearSession // forget the persisted session id
	// CloseSession: end the session of [Command.Generation] (DELETE), if live.
	CloseSession
	// DetachSession: release the session of [Command.Generation] without
	// DELETE (gone already, or kept resumable).
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
	Kind CommandKind
	// Generation is the command's session: the new one for Dial and Attach,
	// the ended one for CloseSession and DetachSession, else the current one.
	// Results carry it in [Trigger.Generation].
	Generation uint64
	Resume     ResumeMode       // blind or known for Attach; ResumeNone otherwise
	Attempt    int              // numbers a ScheduleRetry from 1; zero for other kinds
	Verdict    classify.Verdict // the failure a ScheduleRetry answers; zero for other kinds
}
