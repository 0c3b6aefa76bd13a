package classify

import (
	"strconv"
	"time"
)

// MaxBodySnippet bounds [HTTPError.Body] in bytes.
const MaxBodySnippet = 2048

// HTTPError carries the facts of one HTTP exchange as the wire layer saw them:
// go-sdk reports an HTTP status only as text and discards most bodies, so the
// wire layer records the facts and attaches them to the call's error with this
// type. It wraps the error that go-sdk returned (Err), so errors.Is and
// errors.As see both.
//
// An HTTPError with Status 0 records a request that got no answer.
type HTTPError struct {
	// Verb is the HTTP method: POST, GET or DELETE.
	Verb string
	// Method is the JSON-RPC method of the request ("" for GET and DELETE).
	Method string
	// RequestID is the JSON-RPC id of the request as raw JSON (e.g. `3` or
	// `"a"`), "" for a notification or a non-POST.
	RequestID string
	// Status is the HTTP status, 0 when there was no answer.
	Status int
	// ContentType is the response's media type without parameters.
	ContentType string
	// RetryAfter is the Retry-After header as [ParseRetryAfter] reads it, 0
	// when absent or invalid. Classify bounds it with [CapRetryAfter].
	RetryAfter time.Duration
	// WWWAuthenticate is the response's WWW-Authenticate header.
	WWWAuthenticate string
	// SessionIDSent reports whether the request carried Mcp-Session-Id.
	SessionIDSent bool
	// RPC is the JSON-RPC error parsed from the response body, if the body
	// was one; BodyRPCID is its id as raw JSON ("" when absent, "null" when
	// null).
	RPC       RPCError
	BodyRPCID string
	// Malformed reports a 2xx answer to a request with an id that could not
	// carry a JSON-RPC response: an unexpected content type or a body that
	// is not JSON-RPC.
	Malformed bool
	// Body is the start of the response body, at most [MaxBodySnippet]
	// bytes.
	Body string
	// Err is the error the call returned, if any.
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
// absent id ([HTTPError.NullIDRejection]).
func (e *HTTPError) SessionGone() bool { return e.sessionGone(RPCError{}) }

// sessionGone is SessionGone with the JSON-RPC error go-sdk decoded from the
// same answer elsewhere in the error (sdkRPC), used when the wire recorded
// no body.
func (e *HTTPError) sessionGone(sdkRPC RPCError) bool {
	if e == nil || !e.SessionIDSent {
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
