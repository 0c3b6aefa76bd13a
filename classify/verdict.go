package classify

import (
	"fmt"
	"strings"
	"time"
)

// Verdict is the classification of one error: its [Class] and the facts it
// rests on. A Verdict is a comparable value; its zero value is the verdict of a
// nil error (class [None], no facts).
//
// Its struct tags give a plain JSON encoding (durations in nanoseconds,
// "retry_after_ns"). The stable, versioned JSON form that hosts record is the
// one package events writes for every event's verdict (milliseconds,
// "retry_after_ms").
type Verdict struct {
	// Class is the kind of failure.
	Class Class `json:"class"`
	// HTTPStatus is the HTTP status of the answer, or 0 when none was seen
	// (no answer, or go-sdk reported the status only as text and no wire
	// facts were attached).
	HTTPStatus int `json:"http_status,omitempty"`
	// RPC is the JSON-RPC error found in the error, if any.
	RPC RPCError `json:"rpc,omitzero"`
	// RetryAfter is the server's Retry-After in whole seconds, at most
	// [MaxRetryAfter] ([ParseRetryAfter]); 0 when absent.
	RetryAfter time.Duration `json:"retry_after_ns,omitempty"`
	// Method is the JSON-RPC method of the failed request, when known.
	Method string `json:"method,omitempty"`
	// SessionIDSent reports whether the failed request carried
	// Mcp-Session-Id, when known from wire facts.
	SessionIDSent bool `json:"session_id_sent,omitempty"`
	// Detail is the error's text, cut to at most [MaxDetail] bytes. It is
	// kept for people to read; no decision rests on it.
	Detail string `json:"detail,omitempty"`
}

// MaxDetail bounds [Verdict.Detail] in bytes.
const MaxDetail = 512

// RPCError is a JSON-RPC error object (JSON-RPC 2.0 section 5.1) as found in
// an error: a go-sdk *jsonrpc.Error, a parsed response body, or an object
// embedded in an error message.
type RPCError struct {
	// Present reports whether a JSON-RPC error was found at all; the other
	// fields are meaningful only when it is true.
	Present bool `json:"present"`
	// Code is the JSON-RPC error code, e.g. -32601 (Method not found).
	Code int64 `json:"code"`
	// Message is the error's message, cut to at most [MaxDetail] bytes.
	Message string `json:"message,omitempty"`
	// HasID reports whether the error object answered a request by id (a
	// non-null id, or a go-sdk *jsonrpc.Error, which only exists for a
	// response with an id). A null or absent id means the server could not
	// tie the error to a request.
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
