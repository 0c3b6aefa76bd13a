package classify

import (
	"strconv"
	"time"
)

// MaxBodySnippet bounds [HTTPError.Body] in bytes.
const MaxBodySnippet = 2048

// Exchange is the record of one HTTP request, as the wire layer saw it: the
// facts go-sdk reports only as text or discards. The wire layer fills it
// (package wire names it wire.Exchange) and the error a request returns
// carries it in an [HTTPError], so the facts a request returns are the facts
// [Classify] reads. A zero Exchange records nothing.
type Exchange struct {
	// Verb is the HTTP method: POST, GET or DELETE.
	Verb string
	// Method is the JSON-RPC method of a POST ("" when the body is not a
	// JSON-RPC message or is a response, and for GET and DELETE).
	Method string
	// RequestID is the JSON-RPC id of a POST as raw JSON (e.g. `3` or
	// `"a"`), "" for a notification, a response or a non-POST. It is the
	// id go-sdk gave the request: on a resumed session the wire carries an
	// integer id moved by the session's shift (package wire, idshift.go).
	RequestID string
	// SessionIDSent reports whether the request carried Mcp-Session-Id.
	SessionIDSent bool
	// ProtocolVersionSent is the request's Mcp-Protocol-Version header.
	ProtocolVersionSent string
	// Status is the HTTP status the server answered, 0 when none came
	// (see TransportErr).
	Status int
	// ContentType is the answer's media type without parameters, lower case.
	ContentType string
	// RetryAfter is the Retry-After header as [ParseRetryAfter] reads it
	// (delay-seconds or HTTP-date, RFC 9110 section 10.2.3, at most
	// [MaxRetryAfter]), 0 when absent, invalid or in the past.
	RetryAfter time.Duration
	// WWWAuthenticate is the answer's WWW-Authenticate header.
	WWWAuthenticate string
	// RPC is the JSON-RPC error of the answer's body, when the body was one
	// (RPC.Present; read for non-2xx answers and 2xx application/json
	// answers); BodyRPCID is its id as raw JSON ("" when absent, "null" when
	// null), an integer id moved back as RequestID is, so the two compare.
	// See [Exchange.SetBodyRPC].
	RPC       RPCError
	BodyRPCID string
	// Malformed reports a 2xx answer to a request with an id that is not
	// its JSON-RPC response: an unexpected content type or coding, a body
	// or event that is not JSON-RPC or is past its bound, a response with
	// another id or without exactly one of result (an object) and error, an
	// event stream that ended without the response, an invalid handshake
	// Mcp-Session-Id (see Problem). For an event stream it is set when the
	// stream fails, in the record the request's error carries.
	Malformed bool
	// Oversized reports a body past its bound: a 2xx application/json
	// answer or an event longer than the wire layer's bound, or a list page
	// with more items than its bound, refused for its request (Malformed is
	// set too), or any other body longer than the error-body bound, read no
	// further.
	Oversized bool
	// Problem says what was wrong with an answer the wire layer refused
	// (Rewritten), e.g. "response id 4, not the request's id 3" or "SSE
	// stream ended without the response"; "" when the status and content
	// type say it all.
	Problem string
	// StreamLost reports a request of the 2026-07-28 era whose answer, an
	// event stream, ended or broke before the response: the changelog's
	// item 9 (SEP-2575) says "A broken response stream loses the in-flight
	// request; clients MUST re-issue it as a new request with a new
	// request ID". Problem says how it ended; a stream that broke (a reset,
	// a truncated body: no complete HTTP answer) also sets TransportErr, one
	// that ended cleanly sets Malformed.
	StreamLost bool
	// Body is the start of the answer's body, at most [MaxBodySnippet]
	// bytes; empty for event streams.
	Body string
	// SessionGone records that [HTTPError.SessionGone] holds for this
	// answer, as the wire layer asked it (DESIGN.md section 3).
	SessionGone bool
	// Rewritten reports that go-sdk was handed a JSON-RPC error response
	// written by the wire layer instead of the server's answer, so that only
	// this request fails (DESIGN.md failure story S4), or, for a
	// notification or a response, a local 202 Accepted in place of an
	// answer that was not a 2xx.
	Rewritten bool
	// Local reports that the request never reached the server: the wire
	// layer answered it itself.
	Local bool
	// TransportErr is the transport error when no answer came, or when an
	// event-stream answer broke before its response (a reset mid-stream:
	// Status is the stream's 200, but no complete HTTP answer came).
	TransportErr error
	// Start is when the request was sent, on the wire layer's clock.
	Start time.Time
	// Duration is the time to the answer's headers (to the error when none
	// came).
	Duration time.Duration
}

// SetBodyRPC records the JSON-RPC error body b carries, if it is one
// ([ParseRPCError]), in RPC and BodyRPCID.
func (x *Exchange) SetBodyRPC(b []byte) {
	if rpc, ok := ParseRPCError(b); ok {
		x.RPC, x.BodyRPCID = rpc.RPCError, rpc.ID
		x.RPC.Present = true
	}
}

// HTTPError is the error a request returns with the facts of its HTTP
// exchange: go-sdk reports an HTTP status only as text and discards most
// bodies, so the wire layer records the [Exchange] and attaches it to the
// request's error with this type. It wraps the error that go-sdk returned
// (Err), so errors.Is and errors.As see both.
//
// An HTTPError with Status 0 records a request that got no answer.
type HTTPError struct {
	Exchange
	// Err is the error the request returned, if any.
	Err error
}

// Error names the request and the status, e.g.
// `POST tools/call: HTTP 429 (retry after 30s): <Err>`.
func (e *HTTPError) Error() string {
	if e == nil {
		return "classify.HTTPError(nil)"
	}
	var inner string
	if e.Err != nil {
		inner = e.Err.Error()
	}
	// One buffer: Classify renders this text for every wrapped call error.
	b := make([]byte, 0, 64+len(e.Method)+len(e.RPC.Message)+len(inner))
	b = append(b, e.Verb...)
	if e.Method != "" {
		b = append(b, ' ')
		b = append(b, e.Method...)
	}
	if e.Status == 0 {
		b = append(b, ": no HTTP answer"...)
	} else {
		b = append(b, ": HTTP "...)
		b = strconv.AppendInt(b, int64(e.Status), 10)
	}
	if e.RetryAfter > 0 {
		b = append(b, " (retry after "...)
		b = append(b, e.RetryAfter.String()...)
		b = append(b, ')')
	}
	if e.RPC.Present {
		b = append(b, " JSON-RPC "...)
		b = strconv.AppendInt(b, e.RPC.Code, 10)
		b = append(b, ' ')
		b = strconv.AppendQuote(b, e.RPC.Message)
	}
	if e.Err != nil {
		b = append(b, ": "...)
		b = append(b, inner...)
	}
	return string(b)
}

// Unwrap returns Err (nil for a nil *HTTPError).
func (e *HTTPError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}

// RespondsToRequest reports whether the body's JSON-RPC error answers this
// request by id: it has a non-null id, equal to RequestID when that is known.
func (e *HTTPError) RespondsToRequest() bool {
	if e == nil || !e.RPC.Present || e.BodyRPCID == "" || e.BodyRPCID == "null" {
		return false
	}
	return e.RequestID == "" || e.RequestID == e.BodyRPCID
}

// SessionGone reports whether the answer says the request's session is over
// (DESIGN.md section 3, class [SessionExpired]); it is the one place this
// rule lives, and the wire layer asks it too. It holds for a request that
// carried Mcp-Session-Id and got a 404 whose body does not answer it by id
// (MCP transports, session management: the server MUST answer a request
// with an unknown session id with 404), or a 4xx rejection with a null or
// absent id ([HTTPError.NullIDRejection]); never for a refused credential
// (401, or 403 with insufficient_scope), which is [Unauthorized].
func (e *HTTPError) SessionGone() bool { return e.sessionGone(RPCError{}) }

// sessionGone is SessionGone with the JSON-RPC error go-sdk decoded from the
// same answer elsewhere in the error (sdkRPC), used when the wire recorded
// no body.
func (e *HTTPError) sessionGone(sdkRPC RPCError) bool {
	if e == nil || !e.SessionIDSent {
		return false
	}
	if e.Status == 401 || (e.Status == 403 && insufficientScope(e.WWWAuthenticate)) {
		// A refused credential, whatever its body says: the verdict is
		// unauthorized, and the session outlives it (DESIGN.md section 7).
		return false
	}
	answered := e.RespondsToRequest() || (!e.RPC.Present && sdkRPC.Present && sdkRPC.HasID)
	return (e.Status == 404 && !answered) || e.NullIDRejection()
}

// NullIDRejection reports a 4xx whose JSON-RPC error is -32000 with a null
// or absent id, to a request that carried Mcp-Session-Id: how the
// TypeScript and Python SDK servers reject an unknown session (DESIGN.md
// failure story S2).
func (e *HTTPError) NullIDRejection() bool {
	return e != nil && e.SessionIDSent && e.Status >= 400 && e.Status < 500 &&
		e.RPC.Present && e.RPC.Code == CodeServerError && !e.RPC.HasID
}

// NotSentError is the error of a request that left no HTTP exchange: go-sdk
// failed it before the wire layer saw a request. The wire layer wraps such an
// error in it (wire.FactsMiddleware); its text is Err's. Classify takes it as
// a fact: when nothing else in the error decides, go-sdk refused the request
// because its connection had already failed (it then answers with the stored
// failure's text and no type), so the class is [Transport].
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
