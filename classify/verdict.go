package classify

import (
	"fmt"
	"strings"
	"time"
)

// Verdict is the classification of one error: its [Class] and the facts it
// rests on; comparable; the zero value is a nil error's. Its JSON tags are a
// plain encoding (nanoseconds); the stable form hosts record is package
// events'.
type Verdict struct {
	Class Class `json:"class"`
	// HTTPStatus is the answer's HTTP status, 0 when no wire facts had one.
	HTTPStatus int      `json:"http_status,omitempty"`
	RPC        RPCError `json:"rpc,omitzero"` // the JSON-RPC error found in the error, if any
	// RetryAfter is the server's Retry-After ([ParseRetryAfter]); 0 when absent.
	RetryAfter    time.Duration `json:"retry_after_ns,omitempty"`
	Method        string        `json:"method,omitempty"`          // the failed request's JSON-RPC method, when known
	SessionIDSent bool          `json:"session_id_sent,omitempty"` // the request carried Mcp-Session-Id (wire facts)
	// Detail is the error's text, at most [MaxDetail] bytes, for people only.
	Detail string `json:"detail,omitempty"`
}

// MaxDetail bounds [Verdict.Detail] in bytes.
const MaxDetail = 512

// RPCError is a JSON-RPC error object (JSON-RPC 2.0 section 5.1) as found in
// an error: a go-sdk *jsonrpc.Error, a parsed response body, or an object
// embedded in an error message.
type RPCError struct {
	Present bool  `json:"present"` // a JSON-RPC error was found; else the rest is zero
	Code    int64 `json:"code"`    // e.g. -32601 (Method not found)
	// Message is the error's message, cut to at most [MaxDetail] bytes.
	Message string `json:"message,omitempty"`
	// HasID reports that it answered a request by id (a non-null id, or a
	// go-sdk *jsonrpc.Error, which exists only for such a response).
	HasID bool `json:"has_id,omitempty"`
}

// String renders the verdict for logs and error messages, e.g.
// "rate-limited (HTTP 429, JSON-RPC -32005, retry after 30s, tools/call)".
func (v Verdict) String() string {
	var parts []string
	if v.HTTPStatus != 0 {
		parts = append(parts, fmt.Sprintf("HTTP %d", v.HTTPStatus))
	}
	if v.RPC.Present {
		parts = append(parts, fmt.Sprintf("JSON-RPC %d", v.RPC.Code))
	}
	if v.RetryAfter > 0 {
		parts = append(parts, "retry after "+v.RetryAfter.String())
	}
	if v.Method != "" {
		parts = append(parts, v.Method)
	}
	if len(parts) == 0 {
		return v.Class.String()
	}
	return v.Class.String() + " (" + strings.Join(parts, ", ") + ")"
}

// Described is v.String() followed, when its class names no cause
// ([Class.NamesNoCause]: unknown, transport), by the failure's own text
// (Detail), e.g. "transport (initialize): dial tcp 127.0.0.1:1: connect:
// connection refused". The text is as the error gave it: redact it before
// showing it.
func (v Verdict) Described() string {
	if v.Class.NamesNoCause() && v.Detail != "" {
		return v.String() + ": " + v.Detail
	}
	return v.String()
}

// Reconnects is v.Class.Reconnects().
func (v Verdict) Reconnects() bool { return v.Class.Reconnects() }

// Retries is v.Class.Retries().
func (v Verdict) Retries() bool { return v.Class.Retries() }
