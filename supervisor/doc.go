// Package supervisor keeps one MCP server connection alive and honest: a
// Supervisor owns the connection's state machine (package fsm), opens,
// resumes and replaces go-sdk sessions as the classifier's verdicts direct
// (package classify), and serves the host's calls through the live
// session. Config.Endpoint is a streamable HTTP server; Config.Command a
// stdio server, restarted when it dies (stdio.Command).
//
//	sup, err := supervisor.New(supervisor.Config{Endpoint: "https://example.com/mcp"})
//	if err != nil { ... }
//	sup.Start()
//	defer sup.Close()
//	if err := sup.WaitForState(ctx, supervisor.Ready); err != nil { ... }
//	res, err := sup.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: args})
//	if err != nil { ... } // a *CallError: verdict and delivery
//
// It keeps the failure stories S1, S2, S4 and S5 (DESIGN.md sections 1
// and 2): only session expiry, or a transport failure the session then
// fails a ping for, costs a session; a failed call is never replayed unless
// Config.Recovery.Resend or a 2026-07-28 re-issue says so.
//
// Every transition and every other fact is an events.Event sent to
// Config.Observe.Events, numbered per server, session ids hashed and
// credentials masked. One loop goroutine at a time owns the state machine,
// only while inputs wait (DESIGN.md sections 4 and 5). All exported
// methods are safe for concurrent use; Close and Detach wait for every
// goroutine the supervisor started.
package supervisor
