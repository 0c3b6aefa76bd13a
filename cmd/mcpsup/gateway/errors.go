package gateway

import (
	"encoding/json"
	"errors"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/hub"
	"github.com/mcpsup/mcpsup/supervisor"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// JSON-RPC 2.0 error codes the gateway answers with (JSON-RPC 2.0,
// section 5.1).
const (
	// CodeInvalidParams is -32602 (Invalid params): the name is in no
	// server's catalog, as go-sdk answers an unknown tool (MCP 2025-11-25,
	// server/tools.mdx, Error Handling: "Unknown tools" is a protocol
	// error).
	CodeInvalidParams = jsonrpc.CodeInvalidParams
	// CodeInternalError is -32603 (Internal error): the upstream server
	// failed without a JSON-RPC error of its own (a transport failure, an
	// HTTP status, a timeout); the error's data says which server, how it
	// failed and how far the request got.
	CodeInternalError = jsonrpc.CodeInternalError
)

// ErrorData is the `data` member of the JSON-RPC error the gateway answers
// an upstream failure with.
type ErrorData struct {
	// Server is the upstream server's name in the gateway.
	Server string `json:"server,omitempty"`
	// Class is the verdict's class (classify.Class: "transport",
	// "rate-limited", "unauthorized", "application" ...); "unknown-name"
	// when the name routes to no server.
	Class string `json:"class"`
	// Delivery is how far the request got: "not-sent" (it never reached
	// the server: safe to send again), "outcome-unknown" (it may have run),
	// "answered" (the server answered with an error).
	Delivery string `json:"delivery"`
	// HTTPStatus is the upstream's HTTP status, when one was seen.
	HTTPStatus int `json:"httpStatus,omitempty"`
	// RetryAfterMs is the upstream's Retry-After, in milliseconds.
	RetryAfterMs int64 `json:"retryAfterMs,omitempty"`
}

// callError turns an error of the hub's routed calls into the JSON-RPC
// error the downstream client gets.
func (g *Gateway) callError(err error) error {
	var he *hub.CallError
	server := ""
	if errors.As(err, &he) {
		server = he.Server
	}
	var se *hub.ServerError
	if server == "" && errors.As(err, &se) {
		server = se.Server
	}
	return g.serverError(server, err)
}

// serverError maps err, a failure of a request routed to server, to a
// *jsonrpc.Error:
//   - a name no server has: -32602 (Invalid params), class "unknown-name";
//   - a JSON-RPC error the upstream answered (its code and message as the
//     server sent them, with the gateway's data);
//   - anything else: -32603 (Internal error) with the error's text, which
//     the hub and the supervisor mask (no credential reaches it).
func (g *Gateway) serverError(server string, err error) error {
	if errors.Is(err, hub.ErrUnknownName) || errors.Is(err, hub.ErrUnknownServer) {
		return wireError(CodeInvalidParams, err.Error(), ErrorData{Server: server, Class: "unknown-name", Delivery: supervisor.NotSent.String()})
	}
	var ce *supervisor.CallError
	if !errors.As(err, &ce) {
		return wireError(CodeInternalError, err.Error(), ErrorData{Server: server, Class: classify.Unknown.String(), Delivery: supervisor.NotSent.String()})
	}
	v := ce.Verdict
	data := ErrorData{
		Server:       server,
		Class:        v.Class.String(),
		Delivery:     ce.Delivery.String(),
		HTTPStatus:   v.HTTPStatus,
		RetryAfterMs: v.RetryAfter.Milliseconds(),
	}
	if ce.Delivery == supervisor.Answered && v.RPC.Present && v.RPC.HasID &&
		(v.Class == classify.Application || v.Class == classify.MethodNotFound) {
		return wireError(v.RPC.Code, v.RPC.Message, data)
	}
	return wireError(CodeInternalError, err.Error(), data)
}

func wireError(code int64, msg string, data ErrorData) error {
	raw, _ := json.Marshal(data) // a struct of strings and numbers: never fails
	return &jsonrpc.Error{Code: code, Message: msg, Data: raw}
}

func invalidParams(msg string) error {
	return &jsonrpc.Error{Code: CodeInvalidParams, Message: msg}
}
