// Command demo shows mcpsup surviving the failure stories of DESIGN.md
// section 1 against real MCP servers.
//
//	go run ./examples/demo
//
// It starts one go-sdk MCP server per story on 127.0.0.1, each behind an
// mcptest fault-injecting gateway (or, for the stdio stories, as a process), supervises them all at once, prints every
// supervisor event as it happens (one timeline line per event), and ends
// with a table per server: state at the story's end, tools in the catalog, sessions
// opened, extra requests per failed call, and the standalone SSE stream.
//
// The stories:
//
//   - S1: a session resumed blind from a persisted state; the server answers
//     resources/templates/list with HTTP 400 and JSON-RPC -32601.
//   - S2: a persisted session the restarted server no longer knows, rejected
//     with the TypeScript SDK's null-id 400.
//   - S4: tool calls answered 429 (Retry-After, non-JSON), 500 and an HTML 403,
//     then a 404 after the server expired the session.
//   - S5: a gateway that closes every standalone GET stream at once.
//   - healthy: a plain server.
//   - stdio crash: a stdio server (mcpsup's test server, built with go build
//     into a temporary directory, so the demo must run from the module)
//     that prints garbage on stdout and crashes in a call: restarted.
//   - stdio churn: a stdio server that exits after every handshake, until
//     the churn limit makes the failure terminal.
//
// Each story checks what DESIGN.md requires, from the supervisor's state and
// from the requests counted at the gateway. The command exits 0 when every
// expectation is met, 1 when one is not (each failed expectation is printed),
// and 2 on a usage error.
//
// Flags:
//
//	-timeout d     bound the whole run (default 45s)
//	-events file   also write every event as JSON lines (events.JSONLines)
//	-quiet         print only the table, not the live timeline
//	-v             list every expectation checked
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/views"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the command without the process: it parses args, runs every story
// at once and prints the timeline and the table to stdout. It returns the
// exit code: 0 all stories met, 1 a story failed, 2 usage.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	timeout := fs.Duration("timeout", 45*time.Second, "bound the whole run")
	eventsPath := fs.String("events", "", "also write every event to this file as JSON lines")
	quiet := fs.Bool("quiet", false, "print only the final table, not the live timeline")
	verbose := fs.Bool("v", false, "list every expectation checked, not only the failed ones")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() != 0 || *timeout <= 0 {
		fmt.Fprintln(stderr, "usage: demo [-timeout d] [-events file.jsonl] [-quiet] [-v]")
		return 2
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()

	out := &lockedWriter{w: stdout}
	var sinks []events.Sink
	if !*quiet {
		sinks = append(sinks, views.LiveTimeline(out))
	}
	if *eventsPath != "" {
		f, err := os.Create(*eventsPath)
		if err != nil {
			fmt.Fprintln(stderr, "demo:", err)
			return 1
		}
		defer f.Close()
		jl := events.NewJSONLines(f)
		defer func() {
			if err := jl.Err(); err != nil {
				fmt.Fprintln(stderr, "demo: events file:", err)
			}
		}()
		sinks = append(sinks, jl)
	}

	e := &env{sink: events.Multi(sinks...)}
	if !*quiet {
		e.out = out
	}
	stories := allStories()
	fmt.Fprintf(out, "mcpsup demo: %d stories, real MCP servers on 127.0.0.1 behind fault-injecting gateways\n\n", len(stories))
	start := time.Now()
	results := runStories(ctx, stories, e)
	fmt.Fprintf(out, "\nall stories done in %.1fs\n\n", time.Since(start).Seconds())
	writeTable(out, results)
	if *verbose {
		writeChecks(out, results)
	}
	if failed := writeFailures(out, results); failed > 0 {
		return 1
	}
	return 0
}
