// Package mcptest runs a real MCP server (go-sdk v1.8.0, streamable HTTP) on
// 127.0.0.1 behind a fault-injecting gateway, so that an MCP client, or a
// host application built on one, can be tested against the failures it
// meets in production.
//
// A [Server] is the fixture: a go-sdk server with a configurable catalog
// ([Options]), a recording tool ("record") that counts every invocation by
// an id argument, a blocking tool ("block") that holds until released, and
// session control (expire one session, expire all, restart with every
// session id unknown while the URL stays the same). It listens on an
// httptest server bound to 127.0.0.1 and serves at [Server.URL].
//
// A [Port] forwards a TCP port of 127.0.0.1 to a server and is switched
// down and up: a server that goes away and comes back, its sessions alive.
//
// A [Gateway] is an http.Handler placed in front of the go-sdk handler. It
// records every request in a [Log] (verb, JSON-RPC method and id,
// Mcp-Session-Id sent, status returned, who answered) and applies [Rule]s:
// a [Match] (HTTP verb, JSON-RPC method, whether a session id was sent,
// occurrence) and an [Action] (a canned answer, latency, a connection reset
// before or after the server ran the request ([Reset], [ResetAfterServer]),
// or a standalone-stream fault). Rules never match on the JSON-RPC id: ids
// shift with handshakes and concurrency.
//
// Hostile answers test what a client does with answers no good server
// sends: [Template] and [JSONBody] write raw bodies with the request's id or
// the previous call's ([BodyWrongID], [BodyPrevCall], [BodyNoResult],
// [BodyNullResult], [BodyNotification]), [SSE] writes raw event-stream lines
// (lines without a colon, ids, garbage), [Large] writes a body of any size
// without holding it, [Gzip] compresses any answer (with Large, a
// compression bomb), [Redirect] answers a 3xx, and [WithHeader] sets a
// header over the server's answer (an Mcp-Session-Id on a later answer, or
// an invalid one on the handshake's).
//
// The presets ([TemplatesMethodNotFound], [StaleSessionNullID],
// [StaleSessionNoID], [StaleSession500], [ToolCallServerError],
// [ToolCallRateLimited], [ToolCallForbiddenHTML], [GETHostile], [IdleCut])
// reproduce the failure stories S1, S2, S4 and S5 of mcpsup's DESIGN.md;
// [ListenHostile], [ListenIdleCut] and [ListenRejected] are S5's faults on
// the 2026-07-28 push stream, the subscriptions/listen POST of a
// [Sessionless2026] server.
//
// Every delay and hold is bounded (by its own duration and by
// [GatewayOptions.MaxHold]), ends when the request's context ends, and is
// released by [Gateway.Close]. [Server.Close] waits for every handler, so no
// goroutine of the fixture outlives it.
//
// All types are safe for concurrent use unless stated otherwise; rules may
// be added, replaced and removed while requests are in flight.
package mcptest
