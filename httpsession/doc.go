// Package httpsession is mcpsup's streamable HTTP transport of an MCP
// server, built around go-sdk v1.8.0's client: the session.Dialer a
// supervisor opens its sessions with, and what those sessions run on.
//
// [Dialer] implements session.Dialer: each session it opens is a
// session.Session that reports its own end, once (a session-gone answer or
// a refusal of its era, as a *classify.HTTPError carrying that answer; a
// dead keepalive ping; the host's Close, with DELETE, or Detach, without).
// It keeps what outlives a session, the era the next handshake starts with
// and the standalone stream decision ([StreamSwitch]), and reports their
// changes, and its sessions' stream and drop events, as typed
// session.Fact values. The checks of each message's content are package
// msgcheck's.
//
// [Transport] sends a go-sdk client session's requests through the host's
// transport: the session's own mcp.Connection (go-sdk's public interface)
// hands it message values, and it hands go-sdk each answer read once and
// decoded once. For every request it records an [Exchange] (verb,
// JSON-RPC id and method, status, content type, Retry-After, WWW-Authenticate,
// whether Mcp-Session-Id was sent, the JSON-RPC error of a non-2xx body and a
// bounded body snippet) and reports it to an observer. The error of every
// request a go-sdk client with [FactsMiddleware] sends carries the facts of
// that request (a *classify.HTTPError): go-sdk passes the request's context
// to its POST, so the facts reach classify for the request that caused them
// without matching any message text, and without the caller pairing
// [WithExchange] and [Annotate] by hand (which still works, for a client
// without the middleware).
//
// The same Transport admits every answer to a POST by a whitelist, so that
// go-sdk only ever gets well-formed messages and no answer ends a healthy
// session (DESIGN.md failure story S4; go-sdk ends the whole session on a
// plain-text or HTML 4xx, a 2xx with an unexpected content type, an
// undecodable body or SSE event, and a refused stream resumption). It reads
// each answer itself, with bounds ([Config.MaxJSONBody],
// [Config.MaxErrorBody], [Config.MaxSSEEvent], on the wire and after gzip
// decoding), checks that a response answers its request by id, parses event
// streams and resumes them itself (2025-11-25 only: a 2026-07-28 stream that
// breaks is marked lost, [Exchange.StreamLost], for the caller to re-issue
// the request), takes the session id from the handshake
// answer only, and never follows a redirect. An answer it refuses becomes a
// JSON-RPC error response for the request's id (code [CodeHTTPAnswer],
// naming what was wrong, [Exchange.Problem]), so only that request fails;
// the answer to a notification is recorded and never fatal. The
// connection's Write fails only once the session ended: a Write error
// would break go-sdk's writer for every later call. The POSTs of
// go-sdk's responses to the server's requests are bounded in number and
// time ([Config.MaxResponsesInFlight], [Config.ResponseTimeout]; one past
// the bound is dropped, a [*ResponseDroppedError]). It carries the
// blind-resume handshake (answers `initialize` locally, a message value),
// keeps the standalone SSE stream from ever ending a session by itself
// (failure story S5; see [StreamConfig]: the stream is dialed in the
// background, so connecting never waits for it), and can end a session
// without DELETE (and sends none for a session
// the server said is gone).
//
// On a 2026-07-28 session the same keeper owns the era's push channel, the
// `subscriptions/listen` POST (see [Transport] and [StreamConfig]: re-sent
// whenever its stream ends, never fatal, judged by the same
// [HostilityRule]); a `server/discover` that met an outage does not let
// go-sdk settle for the 2025 era ([DiscoverOutageError]); and
// [Session.Discover] is that era's keepalive request.
//
// [Session] is the go-sdk session adapter: [Open] runs a full handshake,
// [Resume] re-attaches a persisted session without one, and [Session.Close]
// and [Session.Detach] end it with and without DELETE.
//
// [HostilityTracker] is the pure rule that marks a server GET-hostile from
// the standalone stream's [StreamAttempt] records.
package httpsession
