// Package httpsession is mcpsup's streamable HTTP transport of an MCP
// server, built around go-sdk v1.8.0's client (DESIGN.md sections 4 and 7).
//
// [Dialer] implements session.Dialer: each session it opens reports its own
// end once (a session-gone answer or a refusal of its era, as a
// *classify.HTTPError; a dead keepalive; Close, with DELETE; Detach,
// without), and it keeps what outlives a session, the era and the
// standalone stream decision ([StreamSwitch]), reporting their changes as
// session.Fact values.
//
// [Transport] is the HTTP side of a go-sdk client session, under the
// session's own mcp.Connection: it records an [Exchange] for every request,
// and a client with [FactsMiddleware] gets those facts on every error (a
// *classify.HTTPError; [WithExchange] and [Annotate] do it by hand). It
// admits every answer by a whitelist with bounds ([Config]), so that go-sdk
// only gets well-formed messages and no answer ends a healthy session
// (failure story S4): a refused answer becomes a JSON-RPC error for its
// request alone (code [CodeHTTPAnswer]). A 2025-11-25 event stream that
// breaks is resumed; a 2026-07-28 one is marked lost
// ([Exchange.StreamLost]) for the caller to re-issue, and the re-issue of a
// multi-round-trip call carries its last round's requestState. It answers
// a resume's handshake locally, keeps the standalone stream or the
// 2026-07-28 subscriptions/listen from ever ending a session (failure story
// S5, [StreamConfig]), and bounds go-sdk's responses to the server's
// requests ([Config.MaxResponsesInFlight]).
//
// [Session] is the go-sdk session adapter: [Open] runs a full handshake,
// [Resume] re-attaches a persisted session without one, and [Session.Close]
// and [Session.Detach] end it with and without DELETE; [Session.Discover]
// is the 2026-07-28 keepalive. [HostilityTracker] is the rule that marks a
// server GET-hostile from its [StreamAttempt] records.
package httpsession
