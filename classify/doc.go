// Package classify turns any error from an MCP call into a [Verdict]: a
// [Class] and the facts behind it (HTTP status, JSON-RPC code and message,
// Retry-After, method, whether the request carried a session id).
//
// The supervisor's state machine chooses its transitions from verdicts
// (DESIGN.md section 3), so every decision here rests on typed facts: HTTP
// statuses and headers recorded by the wire layer ([HTTPError]), go-sdk's
// *jsonrpc.Error and sentinel errors (mcp.ErrSessionMissing,
// mcp.ErrConnectionClosed), context errors, net.Error, *url.Error, syscall
// errnos and io.EOF. No decision matches words in messages. The one text parse
// allowed is a JSON-RPC error object embedded in an error's message (some
// clients print the body: `Error POSTing to endpoint: {"jsonrpc":...}`); it is
// parsed as JSON, and only when the error carries no JSON-RPC error, no HTTP
// facts and no mcp.ErrConnectionClosed (a closed connection sent nothing; its
// text describes an earlier failure).
//
// # Precedence
//
// One error can carry facts of several classes (go-sdk joins and multi-wraps;
// a caller may join several calls' errors). Each fact supports one class, and
// the verdict's class is the first, in this order, that any fact supports:
//
//	canceled, unauthorized, method-not-found, session-expired, rate-limited,
//	forbidden, server-error, application, protocol, timeout, transport, unknown
//
// Each [HTTPError] is classified as a whole, by the table of DESIGN.md section
// 3 (so a -32601 or a JSON-RPC error answering the request keeps a 404 from
// meaning session-expired); the exchange whose class wins supplies the
// verdict's HTTP status, Retry-After, method and session flag. A 2xx exchange
// with no JSON-RPC error and no malformed body supports no class by itself.
// go-sdk's -32005 "rejected by transport" is a weak fact: it marks a request
// the transport refused without saying why (go-sdk uses it for 500, 502, 503,
// 504 and 429, and for a request that got no answer), so it yields
// server-error only when nothing else in the error supports a class. A
// [NotSentError] is weak in the same way: a request go-sdk failed before
// sending it, which it does once its connection has failed (with the stored
// failure's text, no type), so it yields transport only when nothing else
// supports a class.
//
// Who canceled is the caller's context's to say: a host that ends calls on
// its callers' behalf (a supervisor's Close) passes a context it ended, so
// the verdict is canceled whatever the wire saw.
//
// # Why wire facts are needed
//
// What go-sdk v1.8.0 alone reports for a call (verified by this package's
// tests against a real go-sdk client and server):
//
//   - a 4xx whose body is a JSON-RPC error with the request's id: a
//     *jsonrpc.Error with the code (-32601 gives method-not-found; the HTTP
//     status is text only);
//   - 429, 500, 502, 503, 504: a bare -32005 whose body was discarded, so a 429
//     is indistinguishable from a 500 and there is no Retry-After:
//     server-error;
//   - a plain-text or HTML 400, 401, 403, 404 without a session, and S2's 400
//     with a null-id -32000 body: only the status text ("Bad Request"), no
//     status code and no JSON-RPC code: unknown. go-sdk has then closed the
//     connection, and the next call fails with mcp.ErrConnectionClosed:
//     transport;
//   - a 404 on a request with a session id: mcp.ErrSessionMissing:
//     session-expired;
//   - a 200 with an unexpected content type or a body that is not JSON: text
//     only: unknown;
//   - no answer (refused, reset, EOF): a *url.Error under the -32005:
//     transport.
//
// So from go-sdk's error alone S2's stale session is just another unknown
// failure and a 401 is not unauthorized. The wire layer records each exchange
// and wraps the call's error in an [HTTPError]; this package reads it.
//
// # Canceled or timeout
//
// Given the caller's context, a done context makes the verdict canceled
// whatever the error says, unless its cause is [ErrDeadline]: a context of
// our own deadline (discovery, probe, call or keepalive timeout) that ran
// out is timeout, as DESIGN.md section 3 has it. A deadline in the error
// while the caller's context is still live is our own deadline (discovery
// timeout, HTTP client timeout): timeout. A context.Canceled in the error while the caller's context is live
// was not the caller's doing (the connection went away under the request):
// transport. With a nil context, context.Canceled is canceled and
// context.DeadlineExceeded is timeout.
//
// # Robustness
//
// The walk over %w chains and Unwrap() []error trees is iterative, keeps a
// visited set of reference identities (type and address, so non-comparable
// error values never panic) and stops at [MaxDepth] levels and [MaxNodes]
// nodes: cycles (failure story S3) neither overflow the stack nor hang, and
// value-typed errors that unwrap to new values forever are cut off by the same
// bounds. Panics in an error's Error, Unwrap or Timeout methods are recovered;
// the verdict is then built from the facts found so far. Message text is read
// only within [MaxScan] bytes. Classify calls Error once, on the root: an
// Error method that itself recurses through a cycle is beyond any caller's
// guard.
package classify
