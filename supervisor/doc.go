// Package supervisor keeps one MCP server connection alive and honest: a
// Supervisor owns the connection's state machine (package fsm), opens,
// resumes and replaces go-sdk sessions on mcpsup's wire transport as the
// classifier's verdicts direct (package classify), and serves the host's
// calls through the live session. A stdio server is supervised the same
// way: Config.Command in place of Config.Endpoint starts the process,
// restarts it when it dies and ends its process group on Close (see
// stdio.Command).
//
// # Use
//
//	sup, err := supervisor.New(supervisor.Config{Endpoint: "https://example.com/mcp"})
//	if err != nil { ... }
//	sup.Start()
//	defer sup.Close()
//	if err := sup.WaitForState(ctx, supervisor.Ready); err != nil { ... }
//	res, err := sup.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: args})
//	if err != nil { ... } // a *CallError: verdict and delivery
//	use(res)
//
// # What it guarantees (DESIGN.md failure stories)
//
//   - S1: a resumed session whose capabilities are unknown is probed; only
//     tools/list decides, -32601 on a side list means absent.
//   - S2: a resumed session the server rejects (404, the TypeScript and
//     Python SDKs' null-id 400, a 500) takes one stale recovery: a full
//     handshake, once; never another probe.
//   - S4: only session expiry, and a transport failure the session then
//     fails to answer a ping for, cost a session. A call answered 500, 429,
//     403, 400, 413 ... returns a *CallError naming the status, keeps the
//     session and the generation, and sends nothing extra; a connection
//     reset costs one ping. A failed call is never replayed unless
//     Config.Recovery.Resend is ResendSafe (then a Resendable one is sent once more
//     after recovery). After a 429 with Retry-After, calls fail at once
//     until the window ends. A new session's listing that the server
//     refuses is retried on that session (Config.Recovery.ListingRetries).
//   - S5: the standalone SSE stream is never fatal to a session. With
//     StreamAuto, a GET-hostile server is found by Config.Stream.HostileRule, the
//     stream is held, the next sessions do not open it, an event says why,
//     and the resume state remembers it for Config.Stream.HostileMemory.
//
// Every transition, and every other fact (probe report, catalog change, call
// failure, retry, rate-limit window, stream decision, session opened or
// ended), is an events.Event sent to Config.Observe.Events, numbered per server,
// with session ids hashed and credentials masked. Its states, triggers,
// reasons and kinds are typed strings this package re-exports, so a host
// writes e.To == supervisor.Failed && e.Reason ==
// supervisor.ReasonUnauthorized, or e.Kind == supervisor.KindCallFailed.
//
// # Concurrency
//
// One loop goroutine at a time owns the state machine; every input (command
// results, timers, host requests, session death) reaches it as a typed value
// through an inbox, and it runs only while inputs wait. A trigger that a
// command produces while a step runs is queued and taken after that step,
// never inside it. Results of an older session generation are dropped.
// Events reach Config.Observe.Events in order on another goroutine (also running
// only while events wait), after the state they announce is published, so a
// sink may call any method, Close and Detach included. An idle connection
// costs one goroutine of the supervisor's own: the one that waits for its
// go-sdk session to end. All exported methods are safe for concurrent use.
// Close and Detach wait for every goroutine the supervisor started.
package supervisor
