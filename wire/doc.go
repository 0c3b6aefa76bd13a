// Package wire is mcpsup's eyes and hands on the streamable HTTP transport of
// an MCP server, built around go-sdk v1.8.0's client.
//
// It has two parts.
//
// [Transport] is an http.RoundTripper that wraps the host's transport, one per
// go-sdk client session. For every request it records an [Exchange] (verb,
// JSON-RPC id and method, status, content type, Retry-After, WWW-Authenticate,
// whether Mcp-Session-Id was sent, the JSON-RPC error of a non-2xx body and a
// bounded body snippet) and reports it to an observer. A caller that wants the
// facts of one call puts a slot on the call's context with [WithExchange]
// before the call and wraps the call's error with [Annotate] after it: go-sdk
// passes the call's context to its POST, so the facts reach classify for the
// call that caused them without matching any message text.
//
// The same Transport keeps a healthy go-sdk session alive (DESIGN.md failure
// story S4): go-sdk ends the whole session on a plain-text or HTML 4xx, on a
// 2xx with an unexpected content type and on an undecodable JSON body. The
// Transport rewrites such an answer to a request with an id into a JSON-RPC
// error response for that id (code [CodeHTTPAnswer]), so only that request
// fails. It carries the blind-resume handshake (answers `initialize` locally),
// keeps the standalone SSE stream from ever ending a session by itself
// (failure story S5; see [StreamConfig]: go-sdk's GET is answered at once and
// the server's stream is dialed behind it, so connecting never waits for
// it), and can end a session without DELETE (and sends none for a session
// the server said is gone).
//
// [Session] is the go-sdk session adapter: [Open] runs a full handshake,
// [Resume] re-attaches a persisted session without one, and [Session.Close]
// and [Session.Detach] end it with and without DELETE.
//
// [HostilityTracker] is the pure rule that marks a server GET-hostile from
// the standalone stream's [StreamAttempt] records.
package wire
