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
