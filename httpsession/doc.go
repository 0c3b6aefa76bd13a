// Package httpsession is mcpsup's streamable HTTP transport of an MCP
// server, built around go-sdk v1.8.0's client (DESIGN.md sections 4 and 7).
//
// [Dialer] implements session.Dialer and keeps what outlives a session: the
// era and the standalone stream decision ([StreamSwitch]), reported as
// session.Fact values.
//
// Each session is its own mcp.Connection, configured by [Config] (one
// Config shared by a Dialer's sessions): it records an [Exchange] per
// request ([FactsMiddleware], [WithExchange], [Annotate]
// attach it to errors) and admits every answer by a whitelist with bounds
// ([Config]): a refused answer fails its request alone (code
// [CodeHTTPAnswer], failure story S4). It resumes a broken 2025-11-25 event
// stream, marks a 2026-07-28 one lost ([Exchange.StreamLost]), answers a
// resume's handshake locally, and keeps the standalone stream from ever
// ending a session (failure story S5, [StreamConfig]).
//
// [Session] is one session: [Open] runs a full handshake, [Resume]
// re-attaches a persisted session without one. It reports its own end once
// (a session-gone answer or a refusal of its era as a *classify.HTTPError,
// a dead keepalive, Close with DELETE, Detach without).
package httpsession
