// Command watch supervises one MCP server (streamable HTTP, -url) from the
// command line: it prints every supervisor event as a timeline line as it
// happens and lists the server's catalog whenever the connection becomes
// ready. With -config it watches every server of an mcpServers file through
// one hub (package hub) instead, streamable HTTP ("url") and stdio
// ("command": a process it starts and stops) entries alike: one timeline of
// all their events, the merged catalog's changes, and each server's health
// at exit. Every server is pinged every -keepalive, so one that dies while
// idle leaves ready on the timeline instead of showing ready for good.
//
//	go run ./examples/watch -url https://example.com/mcp -resume session.json
//	go run ./examples/watch -config mcp.json -resume states/
//	go run ./examples/watch -url http://127.0.0.1:8080/mcp -call 'search={"q":"go"}' -every 5s
//
// Ctrl-C (SIGINT or SIGTERM) stops it cleanly without ending the server-side
// session: the supervisor detaches (no DELETE) and its resume state is saved
// to the -resume file, so the next run with the same file resumes that
// session without `initialize`. With -end-session it closes instead: the
// session is ended with DELETE and the resume file is removed.
//
// Flags:
//
//	-url u                 the MCP endpoint (this or -config is required)
//	-config file           an mcpServers file ({"mcpServers": {name: {"url": …}}}):
//	                       watch all its servers, streamable HTTP ("url") and
//	                       stdio ("command", started as processes)
//	-name s                the server's name in events (default: the URL's host;
//	                       not with -config, whose file names the servers)
//	-resume file           read a resume state at start if the file exists;
//	                       write it at exit (mode 0600: it holds the session id);
//	                       with -config a directory of one state per server
//	-standalone-sse mode   on, off or auto (default auto): the standalone GET
//	                       stream policy (DESIGN.md failure story S5)
//	-events file.jsonl     append every event as JSON lines (events.JSONLines)
//	-end-session           at exit, end the session (DELETE) instead of
//	                       detaching, and remove the resume file
//	-timeout d             stop after d (default 0: run until interrupted)
//	-keepalive d           ping every server every d (supervisor.Config.Recovery.KeepAlive;
//	                       default 15s, 0: off): a server that died while idle
//	                       leaves ready within three of them
//	-http addr             serve the live HTML timeline (package
//	                       views/htmltimeline) at http://addr/, e.g.
//	                       127.0.0.1:8080; the page is updated as events
//	                       arrive (server-sent events). A loopback address
//	                       only, and only requests naming a loopback Host
//	                       (no DNS rebinding), unless -http-allow-remote
//	-http-allow-remote     let -http listen on any address, for any Host
//	-call NAME[=JSON]      once ready, call the tool NAME with the JSON object
//	                       of arguments; repeatable, called in order; each
//	                       outcome is printed: the result's text, or the
//	                       failure's class, HTTP status and delivery, with
//	                       the state and generation (not with -config)
//	-every d               with -call: make the calls again every d until
//	                       stopped, so a server can be watched under faults
//	                       (default 0: once)
//
// A malformed resume file is refused with an error naming the bad field; it
// is not overwritten. Exit status: 0 after a clean stop, 1 on an error (a bad
// resume or events file, a save that failed, or a connection that ended in a
// terminal failed state), 2 on a usage error.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// A second Ctrl-C, once the first one is being handled, kills at once.
	context.AfterFunc(ctx, stop)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
