package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/hub"
	"github.com/mcpsup/mcpsup/supervisor"
)

type options struct {
	config, state, call, args, eventsPath string
	wait                                  time.Duration
	endSession                            bool
}

type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("host", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.config, "config", "", "the mcpServers file (required)")
	fs.StringVar(&o.state, "state", "", "directory of the resume states (default <config>.state)")
	fs.StringVar(&o.call, "call", "", "a qualified tool name to call")
	fs.StringVar(&o.args, "args", "{}", "the tool's arguments as a JSON object")
	fs.DurationVar(&o.wait, "wait", 30*time.Second, "how long to wait for the servers")
	fs.BoolVar(&o.endSession, "end-session", false, "end every session (DELETE) at exit instead of detaching")
	fs.StringVar(&o.eventsPath, "events", "", "append every event to this file as JSON lines")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	switch {
	case fs.NArg() != 0:
		return o, &usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	case o.config == "":
		return o, &usageError{"-config is required"}
	case o.wait <= 0:
		return o, &usageError{"-wait must be positive"}
	}
	if o.state == "" {
		o.state = o.config + ".state"
	}
	return o, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		var ue *usageError
		if errors.As(err, &ue) {
			fmt.Fprintln(stderr, "host:", ue.msg)
		}
		return 2
	}
	if err := host(ctx, o, &lockedWriter{w: stdout}); err != nil {
		fmt.Fprintln(stderr, "host:", err)
		return 1
	}
	return 0
}

func host(ctx context.Context, o options, out io.Writer) (err error) {
	f, err := hub.LoadServers(o.config)
	if err != nil {
		return err
	}
	var callArgs map[string]any
	if err := json.Unmarshal([]byte(o.args), &callArgs); err != nil {
		return fmt.Errorf("-args: %w", err)
	}
	sinks := []events.Sink{events.SinkFunc(func(e events.Event) { report(out, e) })}
	if o.eventsPath != "" {
		ef, err := os.OpenFile(o.eventsPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return fmt.Errorf("events file: %w", err)
		}
		defer ef.Close()
		jl := events.NewJSONLines(ef)
		sinks = append(sinks, jl)
		defer func() {
			if jerr := jl.Err(); jerr != nil {
				err = errors.Join(err, fmt.Errorf("events file: %w", jerr))
			}
		}()
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	defer transport.CloseIdleConnections()
	h := hub.New(hub.Config{
		Supervisor: supervisor.Config{HTTP: supervisor.HTTPConfig{HTTPClient: &http.Client{Transport: transport}}},
		Store:      &hub.FileStore{Dir: o.state},
		Events:     events.Multi(sinks...),
	})
	defer func() {
		var serr error
		if o.endSession {
			serr = h.Close()
			fmt.Fprintln(out, "sessions ended (DELETE); states deleted")
		} else {
			serr = h.Detach()
			fmt.Fprintf(out, "sessions detached (no DELETE); states saved in %s\n", o.state)
		}
		err = errors.Join(err, serr)
	}()

	if err := h.AddServers(ctx, f); err != nil {
		fmt.Fprintln(out, "not added:", err)
	}
	wctx, cancel := context.WithTimeout(ctx, o.wait)
	defer cancel()
	// Settled: every server ready or failed for good, so the catalog
	// printed leaves out no server still connecting; one that failed for
	// good is shown in the health list, and the others still serve.
	werr := h.WaitReady(wctx, hub.Settled)
	writeCatalog(out, h)
	hs := h.Health()
	writeHealth(out, hs)
	if !slices.ContainsFunc(hs, hub.Health.Ready) {
		return errors.Join(errors.New("no server ready"), werr)
	}
	if o.call == "" {
		return nil
	}
	res, err := h.CallTool(ctx, &mcp.CallToolParams{Name: o.call, Arguments: callArgs})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "call %s: %s\n", o.call, resultText(res))
	return nil
}

// report prints the events a host shows: the hub's own and failures.
func report(out io.Writer, e events.Event) {
	switch e.Kind {
	case hub.KindServerAdded:
		how := "fresh"
		if e.SessionID != "" {
			how = "resuming " + e.SessionID
		}
		fmt.Fprintf(out, "%-20s %-12s %s\n", e.Kind, e.Server, how)
	case hub.KindStoreFailed, hub.KindConfigWarning, hub.KindNameCollision, events.KindCallFailed:
		fmt.Fprintf(out, "%-20s %-12s %s\n", e.Kind, e.Server, events.Summary(e))
	}
}

func writeCatalog(out io.Writer, h *hub.Hub) {
	var b strings.Builder
	tools, prompts, resources := h.Tools(), h.Prompts(), h.Resources()
	fmt.Fprintf(&b, "merged catalog: %d tools, %d prompts, %d resources\n", len(tools), len(prompts), len(resources))
	for _, t := range tools {
		fmt.Fprintf(&b, "  tool      %-32s %s/%s\n", t.Name, t.Server, t.ID)
	}
	for _, p := range prompts {
		fmt.Fprintf(&b, "  prompt    %-32s %s/%s\n", p.Name, p.Server, p.ID)
	}
	for _, r := range resources {
		fmt.Fprintf(&b, "  resource  %-32s %s %s\n", r.Name, r.Server, r.ID)
	}
	_, _ = io.WriteString(out, b.String())
}

func writeHealth(out io.Writer, hs []hub.Health) {
	var b strings.Builder
	b.WriteString("health:\n")
	for _, hl := range hs {
		fmt.Fprintf(&b, "  %-12s %-16s gen %d, %d session(s), %d tools", hl.Server, hl.State, hl.Generation, hl.SessionsOpened, hl.Tools)
		if hl.Reason != "" {
			fmt.Fprintf(&b, ", reason %s", hl.Reason)
		}
		if hl.Verdict.Class != classify.None {
			fmt.Fprintf(&b, ", last failure %s", hl.Verdict)
		}
		b.WriteString("\n")
	}
	_, _ = io.WriteString(out, b.String())
}

func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	s := strings.Join(parts, " ")
	if res.IsError {
		s = "tool error: " + s
	}
	return s
}

// lockedWriter serialises output written from many supervisors' goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
