// Package classify turns any error from an MCP call into a [Verdict]: a
// [Class] and the facts behind it (HTTP status, JSON-RPC code and message,
// Retry-After, method, whether the request carried a session id). It is pure:
// no I/O (DESIGN.md section 3).
//
// Every decision rests on typed facts: the wire layer's [HTTPError], go-sdk's
// *jsonrpc.Error and sentinels (mcp.ErrSessionMissing, mcp.ErrConnectionClosed),
// context errors, net.Error, *url.Error, syscall errnos and io.EOF; never on
// words in messages. The text parses are two: a JSON-RPC error object
// embedded in a message, read only when the error carries no other JSON-RPC,
// HTTP or closed-connection fact; and go-sdk's multi-round-trip give-up
// (protocol), for which go-sdk exports no value, matched by its start on a
// plain errors.New value. An error wrapping [ErrProtocol] is protocol.
//
// When one error carries facts of several classes, the first in this order
// wins (the order of [Class]):
//
//	canceled, unauthorized, method-not-found, session-expired, rate-limited,
//	forbidden, server-error, application, protocol, timeout, transport, unknown
//
// go-sdk's -32005 and a [NotSentError] are weak facts: they
// decide (server-error, transport) only when nothing else does. A done caller
// context makes the verdict canceled unless its cause is [ErrDeadline] (then
// timeout).
//
// The walk over wrapped errors is iterative, cycle-safe (failure story S3),
// bounded by [MaxDepth] and [MaxNodes], recovers panics in error methods and
// scans at most [MaxScan] bytes of text. Classify calls Error on the root and
// on plain errors.New values only.
package classify
