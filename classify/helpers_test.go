package classify

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// node is a pointer error whose Error does not recurse, so it can close
// cycles (S3) without its own text looping.
type node struct {
	msg  string
	next error
}

func (n *node) Error() string { return n.msg }
func (n *node) Unwrap() error { return n.next }

// fan is a pointer error with several children, like errors.Join, that can
// take part in cycles.
type fan struct {
	msg  string
	kids []error
}

func (f *fan) Error() string   { return f.msg }
func (f *fan) Unwrap() []error { return f.kids }

// panicText is an error whose Error panics.
type panicText struct{ next error }

func (p *panicText) Error() string { panic("Error exploded") }
func (p *panicText) Unwrap() error { return p.next }

// panicUnwrap is an error whose Unwrap panics.
type panicUnwrap struct{}

func (panicUnwrap) Error() string { return "unwrap explodes" }
func (panicUnwrap) Unwrap() error { panic("Unwrap exploded") }

// sliceErr is a non-comparable value error: == on two of them panics.
type sliceErr struct {
	parts []string
	next  error
}

func (s sliceErr) Error() string { return fmt.Sprint(s.parts) }
func (s sliceErr) Unwrap() error { return s.next }

// mapErr is a non-comparable value error holding a map.
type mapErr struct{ m map[string]int }

func (e mapErr) Error() string { return "map error" }

// endless is a value error that unwraps to two new values forever and counts
// its Unwrap calls.
type endless struct{ calls *int }

func (e endless) Error() string { return "endless" }
func (e endless) Unwrap() []error {
	*e.calls++
	return []error{endless{e.calls}, endless{e.calls}}
}

// netErr is a net.Error.
type netErr struct{ timeout bool }

func (e netErr) Error() string   { return fmt.Sprintf("net error (timeout=%v)", e.timeout) }
func (e netErr) Timeout() bool   { return e.timeout }
func (e netErr) Temporary() bool { return false }

// panicTimeout is a net.Error whose Timeout panics.
type panicTimeout struct{}

func (panicTimeout) Error() string   { return "timeout explodes" }
func (panicTimeout) Timeout() bool   { panic("Timeout exploded") }
func (panicTimeout) Temporary() bool { return false }

// rejected is go-sdk's -32005 "rejected by transport" (its own value lives in
// an internal package).
var rejected = &jsonrpc.Error{Code: -32005, Message: "rejected by transport"}

// sdkRPCChain builds the chain go-sdk v1.8.0 returns for a non-2xx answer whose
// body is a JSON-RPC error with the request's id (mcp/streamable.go
// checkResponse, mcp/transport.go call).
func sdkRPCChain(method string, code int64, msg, statusText string) error {
	inner := fmt.Errorf("sending %q: %w: %w: %v", method, &jsonrpc.Error{Code: code, Message: msg}, rejected, statusText)
	return fmt.Errorf("calling %q: %w", method, inner)
}

// sdkTextChain builds the chain go-sdk v1.8.0 returns for a non-2xx answer
// with a body it cannot use: the status only as text.
func sdkTextChain(method, statusText string) error {
	return fmt.Errorf("calling %q: %w", method, fmt.Errorf("sending %q: %w", method, errors.New(statusText)))
}

// sdkRejectedChain builds the chain go-sdk v1.8.0 returns for 429 and 5xx.
func sdkRejectedChain(method, statusText string) error {
	return fmt.Errorf("calling %q: %w", method, fmt.Errorf("%w: sending %q: %v", rejected, method, statusText))
}

// wire attaches HTTP facts the way the wire layer does, parsing body as the
// response body.
func wire(status int, sessionID bool, body string, err error) *HTTPError {
	h := &HTTPError{Exchange: Exchange{Verb: "POST", Method: "tools/call", RequestID: "3", Status: status, SessionIDSent: sessionID, Body: body}, Err: err}
	if r, ok := ParseRPCError([]byte(body)); ok {
		h.RPC, h.BodyRPCID = r.RPCError, r.ID
	}
	return h
}

// syntaxError returns a real *json.SyntaxError.
func syntaxError() error {
	var v any
	return json.Unmarshal([]byte("{not json"), &v)
}
