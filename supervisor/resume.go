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
// A resume without initialize_result is blind (DESIGN.md section 2): the
// supervisor probes the four list methods. With it, it lists what was
// declared. Either way, a session the server no longer knows takes one stale
// recovery: a full handshake, once. A 2026-07-28 server has no session id;
// its persisted discovery result is reused without probing.
//
// The walkthrough (ExampleSupervisor_ResumeState runs it):
//
//  1. run a supervisor to ready; to stop, call Detach (not Close, whose
//     DELETE ends the server-side session);
//  2. save sup.ResumeState() (json.Marshal) where the host keeps secrets;
//  3. after the restart, json.Unmarshal it and pass it as Config.Resume
//     (New checks it, and that it names Config.Endpoint);
//  4. Start: the session is re-attached without initialize; the catalog
//     is listed again, and the state to save next is sup.ResumeState().
//
// A credential that expired meanwhile costs nothing with Config.HTTP.OAuthHandler
// (the refused request is authorized and sent again); without one, the
// supervisor stops unauthorized, keeps the state, and Reconnect after new
// credentials resumes the same session.
//
// It holds the session id in clear (it is what resumes the session): store
// it as a credential. Events, logs and errors only ever show its hash
// (events.HashSessionID).
type ResumeState struct {
	Version  int    `json:"version"`
	Endpoint string `json:"endpoint,omitempty"`
	httpsession.ResumeState
	StandaloneStream StreamDecision `json:"standalone_stream,omitzero"`
}

// StreamDecision records that the standalone SSE stream was turned off for a
// GET-hostile server, and when, so the decision outlives a restart for
// Config.Stream.HostileMemory (failure story S5).
type StreamDecision struct {
	Off       bool      `json:"off"`
	DecidedAt time.Time `json:"decided_at,omitzero"`
}

// ResumeStateError reports a malformed resume state, naming the field by its
// JSON name.
type ResumeStateError struct {
	Field  string
	Reason string
	Err    error
}

func (e *ResumeStateError) Error() string {
	return fmt.Sprintf("mcpsup: resume state: %s: %s", e.Field, e.Reason)
}

func (e *ResumeStateError) Unwrap() error { return e.Err }

// MaxResumeStateBytes bounds the JSON form ParseResumeState accepts.
const MaxResumeStateBytes = 1 << 20

// ParseResumeState decodes and validates a resume state written by
// json.Marshal of a ResumeState, at most MaxResumeStateBytes long. A
// malformed one is refused with a *ResumeStateError naming the field. The
// host should persist it per endpoint: New refuses a state whose endpoint is
// missing or is not Config.Endpoint (compared as written).
func ParseResumeState(data []byte) (*ResumeState, error) {
	if len(data) > MaxResumeStateBytes {
		return nil, &ResumeStateError{Field: "(document)", Reason: fmt.Sprintf("%d bytes, more than %d", len(data), MaxResumeStateBytes)}
	}
	var rs ResumeState
	if err := json.Unmarshal(data, &rs); err != nil {
		field := "(document)"
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
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

// Validate checks the resume state's fields; it returns a *ResumeStateError
// naming the first bad field.
func (rs *ResumeState) Validate() error {
	if rs.Version != ResumeStateVersion {
		return &ResumeStateError{Field: "version", Reason: fmt.Sprintf("got %d, want %d", rs.Version, ResumeStateVersion)}
	}
	if err := rs.ResumeState.Validate(); err != nil {
		var se *httpsession.StateError
		if errors.As(err, &se) {
			return &ResumeStateError{Field: se.Field, Reason: se.Reason, Err: err}
		}
		return &ResumeStateError{Field: "(state)", Reason: err.Error(), Err: err}
	}
	if rs.SessionID == "" && rs.InitializeResult == nil {
		return &ResumeStateError{Field: "initialize_result", Reason: "required when session_id is empty: a sessionless server is resumed from what it declared"}
	}
	return nil
}

// cutText shortens untrusted text quoted in an error.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
