package supervisor

import (
	"errors"
	"fmt"
	"time"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
)

// Sentinel errors; test with errors.Is and errors.As. The error of a call
// (CallTool, GetPrompt, ReadResource, Complete, Subscribe, Unsubscribe,
// SetLoggingLevel, Ping) is a *CallError, whose Err is one of these or the
// request's own error; only nil params, a caller's bug, fail with a plain
// error naming the method. WaitForState's error is a *StateError wrapping
// one of these or its context's error; RefreshCatalog's is such a
// *StateError, its context's error, or the *probes.ListError of a re-list
// that failed. New refuses a Config with a *ResumeStateError, a
// *stdio.CommandError, ErrConfigConflict or stdio.ErrUnsupported, and a missing
// or malformed Endpoint with an *EndpointError.
var (
	// ErrNotReady: the call could not be sent because the supervisor is in
	// a state that serves no calls (idle before Start, or a terminal
	// failed). The call returns a *CallError (not sent) wrapping a
	// *StateError that names the state and reason.
	ErrNotReady = errors.New("mcpsup: not ready")
	// ErrWaitTimeout: the call waited for a recovering connection longer
	// than Config.Limits.MaxCallWait. It was never sent.
	ErrWaitTimeout = errors.New("mcpsup: timed out waiting for ready")
	// ErrUnknownTool: the tool is not in the current catalog; nothing was
	// sent.
	ErrUnknownTool = errors.New("mcpsup: unknown tool")
	// ErrRateLimited: a 429 with Retry-After opened a window that is still
	// open; nothing was sent. The error is a *CallError whose verdict is the
	// 429 that opened the window.
	ErrRateLimited = errors.New("mcpsup: rate limited")
	// ErrClosed: the supervisor was closed.
	ErrClosed = errors.New("mcpsup: closed")
)

// EndpointError reports a Config.Endpoint that New refuses: missing, not a
// URL, or not an absolute http or https URL with a host. Its fields are
// redacted: the endpoint's credentials (userinfo, query values) and
// anything the redaction patterns match are masked, and the endpoint is cut
// to 200 bytes.
type EndpointError struct {
	// Endpoint is the refused value, redacted ("" when missing).
	Endpoint string
	// Reason says what is wrong.
	Reason string
}

func (e *EndpointError) Error() string {
	if e.Endpoint == "" {
		return "mcpsup: Config.Endpoint: " + e.Reason
	}
	return fmt.Sprintf("mcpsup: Config.Endpoint %q: %s", e.Endpoint, e.Reason)
}

// StateError reports a call refused because of the supervisor's state, or
// a wait (WaitForState, a call's wait for ready) that ended before the state
// it waited for. Its text names the state, the reason and the last failure's
// verdict and, when that verdict's class names no cause (unknown: a Command
// whose program cannot start; transport: connection refused, reset, a TLS
// failure), the failure's text, redacted as events are.
type StateError struct {
	// State is the state the supervisor was in.
	State State
	// Reason is the recorded reason of a terminal failed state
	// (ReasonUnauthorized, ReasonCanceled, ReasonBudgetSpent, ReasonChurn),
	// or ReasonNone.
	Reason Reason
	// Verdict is the failure that led there, when there was one.
	Verdict classify.Verdict
	// Err is ErrNotReady, ErrClosed or ErrWaitTimeout; when the waiter's
	// context ended the wait, the context's error.
	Err error

	redactor *events.Redactor
}

func (e *StateError) Error() string {
	s := fmt.Sprintf("%v (state %s", e.Err, e.State)
	if e.State == Idle && errors.Is(e.Err, ErrNotReady) {
		s += ": Start was not called" // idle serves no call only before Start
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

// Delivery says how far a failed request got, so a host can decide whether a
// retry is safe (CallError.Resendable decides it). The supervisor replays a
// failed request only under Config.Recovery.Resend = ResendSafe, and only a
// Resendable one, once.
type Delivery uint8

const (
	// NotSent: the request never left; retrying is safe.
	NotSent Delivery = iota
	// OutcomeUnknown: the request may have reached the server, but no answer
	// came (reset, EOF, timeout, cancellation). The invocation may have run.
	OutcomeUnknown
	// Answered: the server (or a gateway in front of it) answered with an
	// error; the verdict says how.
	Answered
)

func (d Delivery) String() string {
	switch d {
	case NotSent:
		return "not-sent"
	case OutcomeUnknown:
		return "outcome-unknown"
	case Answered:
		return "answered"
	}
	return fmt.Sprintf("delivery(%d)", uint8(d))
}

// CallError is the error of a failed CallTool, GetPrompt, ReadResource,
// Complete, Subscribe, Unsubscribe or SetLoggingLevel: what was called, the
// verdict (class, HTTP status, JSON-RPC code, Retry-After) and how far the
// request got. Failure story S4: only transport and session-expired verdicts
// cost the session; for every other class the session and the generation are
// kept and nothing extra was sent.
type CallError struct {
	// Op is the MCP method, e.g. "tools/call" or "prompts/get".
	Op string
	// Name is the tool or prompt name, or the resource URI.
	Name string
	// Verdict is the classification of the failure.
	Verdict classify.Verdict
	// Delivery says whether the request was sent and answered.
	Delivery Delivery
	// Generation is the session generation the call went out on (0 when
	// it was not sent).
	Generation uint64
	// RequestID is the JSON-RPC id of the request as raw JSON (e.g. `5`),
	// "" when the request never went out on an HTTP transport.
	RequestID string
	// First is the first attempt's error when the call was sent twice
	// (re-issued after its response stream broke, or resent under
	// ResendSafe) and the second attempt failed too; nil otherwise. Both
	// requests may have reached the server: when the second was not sent,
	// Delivery is the first's.
	First *CallError
	// Err is the underlying error (a sentinel of this package, or the error
	// from go-sdk annotated with the wire facts). Its own text is go-sdk's,
	// unredacted: print the CallError, not Err.
	Err error

	redactor *events.Redactor // the supervisor's; nil: the patterns only
	// repeatable: a tools/call whose tool, in the catalog at failure
	// time, is annotated readOnlyHint or idempotentHint.
	repeatable bool
}

// Resendable reports whether sending the same request again is safe as far
// as delivery goes (it may still fail the same way):
//   - NotSent: true, the server never saw it;
//   - OutcomeUnknown: true only for a tools/call of a tool that the catalog,
//     when the call failed, annotated readOnlyHint or idempotentHint (MCP
//     ToolAnnotations: running it again has no additional effect on its
//     environment); false for any other tool and every other method, since
//     the first request may have run. The annotations are the server's
//     hints, not guarantees;
//   - Answered: true only for a session-expired verdict (a 404 on the
//     session's id, or the TypeScript and Python SDKs' null-id -32000): the
//     server refused the request for its session before running it, as
//     when it restarted while the host was idle. Otherwise false: the
//     server answered, so delivery is not the question; the Verdict says
//     whether asking again can help (e.g. rate-limited after RetryAfter).
//
// The supervisor resends on its own only under Config.Recovery.Resend = ResendSafe,
// and only what this reports true for, once.
func (e *CallError) Resendable() bool {
	switch e.Delivery {
	case NotSent:
		return true
	case OutcomeUnknown:
		return e.repeatable
	}
	return e.Verdict.Class == classify.SessionExpired
}

// toolRepeatable reports whether op is a tools/call of a tool that the
// current catalog annotates readOnlyHint or idempotentHint.
func (s *Supervisor) toolRepeatable(op, name string) bool {
	if op != "tools/call" {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.snap.catalog == nil {
		return false
	}
	t := s.snap.catalog.Tool(name)
	return t != nil && t.Annotations != nil && (t.Annotations.ReadOnlyHint || t.Annotations.IdempotentHint)
}

// Error names the call, the verdict and, unless the server answered, how far
// the request got, e.g.
// `mcpsup: tools/call "search": rate-limited (HTTP 429, retry after 30s, tools/call)`.
// The underlying error is reached with errors.Unwrap; its text is added only
// when the verdict is unknown, since the verdict then says nothing more. The
// name (a resource URI may carry a token) and that text are redacted as
// events are (events.Redactor): no session id or credential in clear.
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
	case errors.Is(e.Err, ErrUnknownTool), errors.Is(e.Err, ErrRateLimited),
		errors.Is(e.Err, ErrNotReady), errors.Is(e.Err, ErrClosed), errors.Is(e.Err, ErrWaitTimeout),
		errors.As(e.Err, new(*StateError)):
		s += ": " + e.Err.Error()
	case e.Verdict.Class.NamesNoCause() && e.Err != nil:
		// go-sdk's text may carry the session id: hash it, as events do.
		s += ": " + e.redactor.Text(e.Err.Error())
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
