// Command host is a small MCP host over an mcpServers file (the JSON Claude
// Desktop, VS Code and Cursor read): it connects to every server in it
// (streamable HTTP, or stdio started as a process) through one hub, prints
// the merged tool catalog and each server's health, calls a tool by its
// qualified name, and detaches, saving each streamable HTTP session's resume
// state, so the next run resumes those sessions without `initialize`.
//
//	go run ./examples/host -config mcp.json -call search__find -args '{"q":"mcp"}'
//
// mcp.json:
//
//	{"mcpServers": {
//	  "search": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer …"}},
//	  "local":  {"url": "http://127.0.0.1:3001/mcp"}
//	}}
//
// Flags:
//
//	-config file     the mcpServers file (required)
//	-state dir       where resume states are kept (default: <config>.state,
//	                 files of mode 0600: they hold session ids)
//	-call name       a qualified tool name to call once all are settled
//	                 (ready, or failed for good: hub.Settled)
//	-args json       the tool's arguments, a JSON object (default {})
//	-wait d          how long to wait for the servers to settle (default 30s)
//	-end-session     at exit, end every session (DELETE) and delete the
//	                 states instead of detaching
//	-events file     append every event as JSON lines
//
// Stdio entries (command) are started as processes. Entries the hub cannot
// connect to (the legacy SSE transport, no url or command) and fields it
// does not know are reported and skipped. Exit
// status: 0 when done, 1 on an error (a bad file, no server ready, a failed
// call, a state not saved), 2 on a usage error.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
