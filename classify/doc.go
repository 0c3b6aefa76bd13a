// Package classify turns any error from an MCP call into a [Verdict]: a
// [Class] and the facts behind it (HTTP status, JSON-RPC code and message,
// Retry-After, method, whether the request carried a session id).
//
// The supervisor's state machine chooses its transitions from verdicts, so
// every decision here rests on typed facts: HTTP statuses and headers recorded
// by the wire layer ([HTTPError]), go-sdk's *jsonrpc.Error and sentinel errors
// (mcp.ErrSessionMissing, mcp.ErrConnectionClosed), context errors, net.Error,
// syscall errnos and io.EOF. No decision matches words in messages. The one
// text parse allowed is a JSON-RPC error object embedded in an error's message
// (some clients print the body: `Error POSTing to endpoint: {"jsonrpc":...}`),
// and it is parsed as JSON.
//
// # Precedence
//
// One error can carry facts of several classes (go-sdk joins and multi-wraps).
// The verdict's class is the first of these that any fact supports:
//
//	canceled, unauthorized, method-not-found, session-expired, rate-limited,
//	forbidden, server-error, application, protocol, timeout, transport, unknown
//
// Two rules refine it. Wire facts are authoritative: when the error carries an
// [HTTPError] with a status, the HTTP facts decide and go-sdk's own
// *jsonrpc.Error values below it (possibly synthesized by the wire layer) only
// fill in the JSON-RPC fields. And go-sdk's -32005 "rejected by transport" is a
// weak fact: it marks a request the transport refused without saying why, so it
// yields server-error only when nothing else in the error says more.
//
// # Why wire facts are needed
//
// go-sdk v1.8.0 carries an HTTP status only as text ("Bad Request",
// "Too Many Requests"), answers 500/502/503/504/429 with a bare -32005 whose
// body it discarded, and treats a JSON-RPC error body with a null or absent id
// (the TypeScript SDK server's "No valid session ID" 400) as plain text. From
// the error alone, S2's stale session is indistinguishable from any other 400,
// and a 429 from a 500. The wire layer records each exchange and wraps the
// call's error in an [HTTPError]; this package reads it.
//
// # Canceled or timeout
//
// Given the caller's context, a done context makes the verdict canceled
// whatever the error says. A deadline in the error while the caller's context
// is still live is our own deadline (discovery timeout, HTTP client timeout):
// timeout. A context.Canceled in the error while the caller's context is live
// was not the caller's doing (the connection went away under the request):
// transport. With a nil context, context.Canceled is canceled and
// context.DeadlineExceeded is timeout.
//
// # Robustness
//
// The walk over %w chains and Unwrap() []error trees is iterative, keeps a
// visited set of pointer identities (so non-comparable error values never
// panic) and stops at [MaxDepth] levels and [MaxNodes] nodes: cycles (failure
// story S3) neither overflow the stack nor hang. Panics in an error's Error,
// Unwrap or Timeout methods are recovered; the verdict is then built from the
// facts found so far. Message text is read only within [MaxScan] bytes.
package classify
