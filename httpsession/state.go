package httpsession

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/msgcheck"
	"github.com/mcpsup/mcpsup/session"
)

// MaxSessionIDLen bounds the length of a session id in bytes.
const MaxSessionIDLen = 1024

// ErrInvalidState is matched (errors.Is) by every [StateError].
var ErrInvalidState = errors.New("mcpsup/httpsession: invalid session state")

// StateError refuses a persisted resume state, or a session id a server
// sent, naming the offending field.
type StateError struct {
	// Field is the JSON name of the field ("session_id", "protocol_version",
	// "initialize_result") or the header "Mcp-Session-Id".
	Field string
	// Reason says what is wrong; for a session id, its length or its first
	// byte outside visible ASCII, never the id.
	Reason string
}

// Error names the field and the reason, e.g. `mcpsup/httpsession: invalid
// session state: session_id (1048576 bytes, more than 1024)`. The reason
// stands in parentheses: after "session_id: " the redactor (package events)
// would read its first word as a session id and hash it.
func (e *StateError) Error() string {
	return fmt.Sprintf("mcpsup/httpsession: invalid session state: %s (%s)", e.Field, e.Reason)
}

// Is reports target == ErrInvalidState.
func (e *StateError) Is(target error) bool { return target == ErrInvalidState }

// ResumeState is what a host persists to resume a session without a
// handshake: a session.Resume (its fields and JSON names).
type ResumeState session.Resume

// Validate checks the state, returning a *[StateError]: SessionID at most
// [MaxSessionIDLen] bytes of visible ASCII (0x21-0x7E, transports, session
// management); ProtocolVersion a version go-sdk supports, which the
// InitializeResult's agrees with; a 2026-07-28 state has no SessionID and
// an InitializeResult.
func (s ResumeState) Validate() error {
	if err := cmp.Or(validSessionID("session_id", s.SessionID), validProtocolVersion(s.ProtocolVersion)); err != nil {
		return err
	}
	if r := s.InitializeResult; r != nil && r.ProtocolVersion != "" && r.ProtocolVersion != s.ProtocolVersion {
		return &StateError{Field: "initialize_result", Reason: fmt.Sprintf("protocol version %q differs from protocol_version %q", r.ProtocolVersion, s.ProtocolVersion)}
	}
	if msgcheck.ModernVersion(s.ProtocolVersion) {
		if s.SessionID != "" {
			return &StateError{Field: "session_id", Reason: "a " + era20260728 + " session has no session id"}
		}
		if s.InitializeResult == nil {
			return &StateError{Field: "initialize_result", Reason: "a " + era20260728 + " resume reuses the persisted discovery result; it is missing"}
		}
	}
	return nil
}

func validSessionID(field, id string) error {
	if len(id) > MaxSessionIDLen {
		return &StateError{Field: field, Reason: fmt.Sprintf("%d bytes, more than %d", len(id), MaxSessionIDLen)}
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c < 0x21 || c > 0x7e {
			return &StateError{Field: field, Reason: fmt.Sprintf("byte %d is 0x%02x, not visible ASCII (0x21-0x7E)", i, c)}
		}
	}
	return nil
}

func validProtocolVersion(v string) error {
	if v == "" {
		return &StateError{Field: "protocol_version", Reason: "empty"}
	}
	if !slices.Contains(mcp.SupportedProtocolVersions(), v) {
		return &StateError{Field: "protocol_version", Reason: fmt.Sprintf("%.40q is not supported by go-sdk (supported: %v)", v, mcp.SupportedProtocolVersions())}
	}
	return nil
}
