package supervisor

import (
	"errors"
	"fmt"
	"time"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
)

// Sentinel errors, for errors.Is: a *CallError's Err is one of these or
// the request's own; a *StateError wraps one of these; New's conflicts
// wrap ErrConfigConflict.
var (
	// ErrNotReady: the state serves no calls (idle before Start, a terminal
	// failed); nothing was sent.
	ErrNotReady = errors.New("mcpsup: not ready")
	// ErrWaitTimeout: the call waited longer than Config.Limits.MaxCallWait;
	// nothing was sent.
	ErrWaitTimeout = errors.New("mcpsup: timed out waiting for ready")
	// ErrUnknownTool: the tool is not in the catalog; nothing was sent.
	ErrUnknownTool = errors.New("mcpsup: unknown tool")
	// ErrRateLimited: a 429's Retry-After window is open; nothing was sent
	// (the *CallError's verdict is that 429's).
	ErrRateLimited = errors.New("mcpsup: rate limited")
	// ErrClosed: the supervisor was closed.
	ErrClosed = errors.New("mcpsup: closed")
	// ErrConfigConflict: two fields of a Config ask for different things
	// (see New); the error names both.
	ErrConfigConflict = errors.New("mcpsup: conflicting configuration")
)

// EndpointError reports a Config.Endpoint that New refuses: missing, not a
// URL, or not an absolute http or https URL with a host.
type EndpointError struct {
	Endpoint string // the refused value, redacted, cut to 200 bytes; "" when missing
	Reason   string // what is wrong
}

func (e *EndpointError) Error() string {
	if e.Endpoint == "" {
		return "mcpsup: Config.Endpoint: " + e.Reason
	}
	return fmt.Sprintf("mcpsup: Config.Endpoint %q: %s", e.Endpoint, e.Reason)
}

// StateError reports a call refused for the supervisor's state, or a wait
// that ended first; its text is redacted as events are.
type StateError struct {
	State   State
	Reason  Reason           // of a terminal failed state
	Verdict classify.Verdict // the failure that led there, if any
	Err     error            // ErrNotReady, ErrClosed, ErrWaitTimeout or the waiter's ctx.Err()

	redactor *events.Redactor
}

func (e *StateError) Error() string {
	s := fmt.Sprintf("%v (state %s", e.Err, e.State)
	if e.State == Idle && errors.Is(e.Err, ErrNotReady) {
		s += ": Start was not called"
	}
	if e.Reason != ReasonNone {
		s += ", reason " + string(e.Reason)
	}
	if e.Verdict.Class != classify.None {
		s += ", last failure " + e.redactor.Text(e.Verdict.Described())
	}
	return s + ")"
}

func (e *StateError) Unwrap() error { return e.Err }

// Delivery says how far a failed request got.
type Delivery uint8

const (
	NotSent        Delivery = iota // never left; retrying is safe
	OutcomeUnknown                 // no answer (reset, EOF, timeout, cancellation): it may have run
	Answered                       // the server, or a gateway, answered with an error
)

func (d Delivery) String() string {
	if d <= Answered {
		return [...]string{"not-sent", "outcome-unknown", "answered"}[d]
	}
	return fmt.Sprintf("delivery(%d)", uint8(d))
}

// CallError is the error of a failed call (failure story S4).
type CallError struct {
	Op         string // the MCP method, e.g. "tools/call"
	Name       string // the tool or prompt name, or the resource URI
	Verdict    classify.Verdict
	Delivery   Delivery
	Generation uint64 // the session it went out on; 0: not sent
	RequestID  string // its JSON-RPC id as raw JSON (`5`); "" when not sent over HTTP
	// First is the first attempt's error when the call was sent twice and
	// both failed; Delivery is then the first's when the second was not sent.
	First *CallError
	Err   error // its text has not passed the redactor: print the CallError

	redactor   *events.Redactor // nil: the patterns only
	repeatable bool             // a tools/call of a readOnlyHint or idempotentHint tool
}

// Resendable reports whether sending the request again is safe as far as
// delivery goes: NotSent always; OutcomeUnknown only for a tools/call of a
// tool the catalog annotated readOnlyHint or idempotentHint (MCP
// ToolAnnotations, hints not guarantees); Answered only for session-expired
// (refused before it ran).
func (e *CallError) Resendable() bool {
	switch e.Delivery {
	case NotSent:
		return true
	case OutcomeUnknown:
		return e.repeatable
	}
	return e.Verdict.Class == classify.SessionExpired
}

// Error names the call, the verdict and, unless answered, the delivery:
// `mcpsup: tools/call "search": rate-limited (HTTP 429, retry after 30s, tools/call)`,
// redacted as events are; the underlying error's text only when the
// verdict names no cause.
func (e *CallError) Error() string {
	s := "mcpsup: " + e.Op
	if e.Name != "" { // ping has none
		s += fmt.Sprintf(" %q", e.redactor.Text(e.Name))
	}
	s += ": " + e.Verdict.String()
	if e.Delivery != Answered {
		s += " [" + e.Delivery.String() + "]"
	}
	switch {
	case errors.Is(e.Err, ErrUnknownTool), errors.Is(e.Err, ErrRateLimited), errors.As(e.Err, new(*StateError)):
		s += ": " + e.Err.Error()
	case e.Verdict.Class.NamesNoCause() && e.Err != nil:
		s += ": " + e.redactor.Text(e.Err.Error()) // go-sdk's text may carry the session id
	}
	if f := e.First; f != nil {
		s += "; sent twice, first attempt"
		if f.RequestID != "" {
			s += " (request " + f.RequestID + ")"
		}
		s += ": " + f.Verdict.String() + " [" + f.Delivery.String() + "]"
	}
	return s
}

func (e *CallError) Unwrap() error { return e.Err }

// RetryAfter returns the server's Retry-After, 0 when none was given.
func (e *CallError) RetryAfter() time.Duration { return e.Verdict.RetryAfter }
