package classify

import (
	"fmt"
	"strings"
	"time"
)

// MaxBodySnippet bounds [HTTPError.Body] in bytes.
const MaxBodySnippet = 2048

// Exchange is the record of one HTTP request as the wire layer saw it: the
// facts go-sdk reports only as text or discards, carried on the request's
// error in an [HTTPError]. A zero Exchange records nothing.
type Exchange struct {
	Verb   string // the HTTP method: POST, GET or DELETE
	Method string // the JSON-RPC method of a POST request, else ""
	// RequestID is a POST request's JSON-RPC id as raw JSON (`3`, `"a"`), ""
	// for a notification, a response or a non-POST; on a resumed session, the
	// id go-sdk gave it (before the session's shift).
	RequestID           string
	SessionIDSent       bool   // the request carried Mcp-Session-Id
	ProtocolVersionSent string // its Mcp-Protocol-Version header
	Status              int    // the answer's HTTP status, 0 when none came
	ContentType         string // the answer's media type, lower case, no parameters
	// RetryAfter is the Retry-After header by [ParseRetryAfter], 0 when
	// absent, invalid or in the past.
	RetryAfter      time.Duration
	WWWAuthenticate string // the answer's WWW-Authenticate field lines, joined by ", " (RFC 9110 section 5.3)
	// RPC is the JSON-RPC error of the answer's body, when it was one
	// (non-2xx, or 2xx application/json); BodyRPCID is its id as raw JSON
	// ("" absent, "null" null), shifted back as RequestID is. See
	// [Exchange.SetBodyRPC].
	RPC       RPCError
	BodyRPCID string
	// Malformed reports a 2xx answer to a request with an id that is not its
	// JSON-RPC response (content type, coding, id, shape, bound, a stream
	// ended without it, an invalid handshake session id); Problem says which.
	Malformed bool
	// Oversized reports a body, event or list page past its bound (a refused
	// 2xx sets Malformed too); the body was read no further.
	Oversized bool
	// Problem says what was wrong with an answer the wire layer refused,
	// e.g. "response id 4, not the request's id 3"; "" when the status and
	// content type say it all.
	Problem string
	// StreamLost reports a 2026-07-28 request whose event stream ended or
	// broke before the response, which the client MUST re-issue (changelog
	// item 9, SEP-2575). A break also sets TransportErr, a clean end Malformed.
	StreamLost bool
	// Body is the start of the answer's body, at most [MaxBodySnippet] bytes;
	// empty for event streams.
	Body        string
	SessionGone bool // [HTTPError.SessionGone] of this answer
	// Rewritten reports that go-sdk was handed an error response written by
	// the wire layer in place of the server's answer (failure story S4), or a
	// local 202 for a notification or response whose answer was not a 2xx.
	Rewritten bool
	Local     bool // the request never reached the server
	// TransportErr is the transport error when no complete answer came (also
	// an event stream reset before its response, with Status 200).
	TransportErr error
	Start        time.Time     // when the request was sent, on the wire layer's clock
	Duration     time.Duration // to the answer's headers, or to the error
}

// SetBodyRPC records the JSON-RPC error of body b ([ParseRPCError]), if any.
func (x *Exchange) SetBodyRPC(b []byte) {
	if rpc, ok := ParseRPCError(b); ok {
		x.RPC, x.BodyRPCID = rpc.RPCError, rpc.ID
		x.RPC.Present = true
	}
}

// HTTPError is a request's error with the [Exchange] the wire layer recorded
// for it; it wraps the error go-sdk returned (Err), so errors.Is and errors.As
// see both. Status 0 records a request that got no answer.
type HTTPError struct {
	Exchange
	Err error // the error the request returned, if any
}

// Error names the request and the status, e.g.
// `POST tools/call: HTTP 429 (retry after 30s): <Err>`.
func (e *HTTPError) Error() string {
	if e == nil {
		return "classify.HTTPError(nil)"
	}
	var b strings.Builder
	b.WriteString(e.Verb)
	if e.Method != "" {
		b.WriteString(" " + e.Method)
	}
	if e.Status == 0 {
		b.WriteString(": no HTTP answer")
	} else {
		fmt.Fprintf(&b, ": HTTP %d", e.Status)
	}
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, " (retry after %s)", e.RetryAfter)
	}
	if e.RPC.Present {
		fmt.Fprintf(&b, " JSON-RPC %d %q", e.RPC.Code, e.RPC.Message)
	}
	if e.Err != nil {
		b.WriteString(": " + e.Err.Error())
	}
	return b.String()
}

// Unwrap returns Err (nil for a nil *HTTPError).
func (e *HTTPError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}

// RespondsToRequest reports whether the body's JSON-RPC error answers this
// request: a non-null id, RequestID's when that is known.
func (e *HTTPError) RespondsToRequest() bool {
	if e == nil || !e.RPC.Present || e.BodyRPCID == "" || e.BodyRPCID == "null" {
		return false
	}
	return e.RequestID == "" || e.RequestID == e.BodyRPCID
}

// SessionGone reports whether the answer says the request's session is over
// ([SessionExpired]; the one owner of this rule, DESIGN.md section 3): a
// request that carried Mcp-Session-Id got a 404 whose body does not answer it
// by id (MCP transports, session management: an unknown session id MUST get
// 404), or a [HTTPError.NullIDRejection]; never a refused credential.
func (e *HTTPError) SessionGone() bool { return e.sessionGone(RPCError{}) }

// sessionGone is SessionGone with sdkRPC, go-sdk's decoding of the same
// answer, for when the wire recorded no body.
func (e *HTTPError) sessionGone(sdkRPC RPCError) bool {
	if e == nil || !e.SessionIDSent {
		return false
	}
	if e.Status == 401 || (e.Status == 403 && InsufficientScope(e.WWWAuthenticate)) {
		return false
	}
	answered := e.RespondsToRequest() || (!e.RPC.Present && sdkRPC.Present && sdkRPC.HasID)
	return (e.Status == 404 && !answered) || e.NullIDRejection()
}

// NullIDRejection reports a 4xx with a JSON-RPC -32000 of null or absent
// id to a request with Mcp-Session-Id: the TypeScript and Python SDK
// servers' answer to an unknown session (failure story S2).
func (e *HTTPError) NullIDRejection() bool {
	return e != nil && e.SessionIDSent && e.Status >= 400 && e.Status < 500 &&
		e.RPC.Present && e.RPC.Code == CodeServerError && !e.RPC.HasID
}

// NotSentError wraps the error of a request go-sdk failed before the wire
// layer saw it (its connection had already failed); its text is Err's. It is
// a weak fact: [Transport] when nothing else in the error decides.
type NotSentError struct {
	Err error
}

// Error returns Err's text.
func (e *NotSentError) Error() string {
	if e == nil || e.Err == nil {
		return "request not sent"
	}
	return e.Err.Error()
}

// Unwrap returns Err (nil for a nil *NotSentError).
func (e *NotSentError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}
