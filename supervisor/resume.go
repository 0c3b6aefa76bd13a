package supervisor

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcpsup/mcpsup/httpsession"
)

// ResumeStateVersion is the version of the ResumeState JSON form.
const ResumeStateVersion = 1

// ResumeState is what a host persists to re-attach a session after a restart
// instead of opening a new one. Its JSON form is stable:
//
//	{
//	  "version": 1,
//	  "endpoint": "https://example.com/mcp",
//	  "session_id": "…",                 // Mcp-Session-Id; absent for a sessionless server
//	  "protocol_version": "2025-11-25",
//	  "initialize_result": {…},          // what the server declared; absent: a blind resume
//	  "standalone_stream": {"off": true, "decided_at": "2026-11-30T09:00:00Z"}
//	}
//
// Without initialize_result the resume is blind and probes the four lists;
// with it, the declared lists are listed (DESIGN.md section 2). A session
// the server no longer knows takes one stale recovery. Persist it after
// Detach, pass it as Config.Resume (ExampleSupervisor_ResumeState). It
// holds the session id in clear: store it as a credential.
type ResumeState struct {
	Version  int    `json:"version"`
	Endpoint string `json:"endpoint,omitempty"`
	httpsession.ResumeState
	StandaloneStream StreamDecision `json:"standalone_stream,omitzero"`
}

// StreamDecision records that the stream was turned off for a GET-hostile
// server, and when (failure story S5; Config.Stream.HostileMemory).
type StreamDecision struct {
	Off       bool      `json:"off"`
	DecidedAt time.Time `json:"decided_at,omitzero"`
}

// ResumeStateError reports a malformed resume state.
type ResumeStateError struct {
	Field  string // the JSON name
	Reason string
	Err    error
}

func (e *ResumeStateError) Error() string {
	return fmt.Sprintf("mcpsup: resume state: %s: %s", e.Field, e.Reason)
}

func (e *ResumeStateError) Unwrap() error { return e.Err }

// MaxResumeStateBytes bounds the JSON form ParseResumeState accepts.
const MaxResumeStateBytes = 1 << 20

// ParseResumeState decodes and validates a ResumeState's JSON form, at most
// MaxResumeStateBytes; a malformed one is a *ResumeStateError.
func ParseResumeState(data []byte) (*ResumeState, error) {
	if len(data) > MaxResumeStateBytes {
		return nil, &ResumeStateError{Field: "(document)", Reason: fmt.Sprintf("%d bytes, more than %d", len(data), MaxResumeStateBytes)}
	}
	var rs ResumeState
	if err := json.Unmarshal(data, &rs); err != nil {
		field := "(document)"
		if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok && te.Field != "" {
			// The embedded wire state's fields carry its Go name as a prefix.
			field = strings.TrimPrefix(te.Field, "ResumeState.")
		}
		return nil, &ResumeStateError{Field: field, Reason: err.Error(), Err: err}
	}
	if err := rs.Validate(); err != nil {
		return nil, err
	}
	return &rs, nil
}

// Validate returns a *ResumeStateError naming the first bad field.
func (rs *ResumeState) Validate() error {
	if rs.Version != ResumeStateVersion {
		return &ResumeStateError{Field: "version", Reason: fmt.Sprintf("got %d, want %d", rs.Version, ResumeStateVersion)}
	}
	if err := rs.ResumeState.Validate(); err != nil {
		se := err.(*httpsession.StateError) // its only error
		return &ResumeStateError{Field: se.Field, Reason: se.Reason, Err: err}
	}
	if rs.SessionID == "" && rs.InitializeResult == nil {
		return &ResumeStateError{Field: "initialize_result", Reason: "required when session_id is empty: a sessionless server is resumed from what it declared"}
	}
	return nil
}
