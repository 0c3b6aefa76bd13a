package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/internal/stdiotest"
	"github.com/mcpsup/mcpsup/stdio"
	"github.com/mcpsup/mcpsup/supervisor"
)

// stdioServer builds mcpsup's stdio test server into a directory of its
// own (go build, from the module: `go run ./examples/demo` works on a fresh
// machine) and returns the binary and a function that removes it.
func stdioServer(ctx context.Context) (bin string, remove func(), err error) {
	dir, err := os.MkdirTemp("", "mcpsup-demo-")
	if err != nil {
		return "", nil, err
	}
	remove = func() { _ = os.RemoveAll(dir) }
	if bin, err = stdiotest.Build(ctx, dir); err != nil {
		remove()
		return "", nil, err
	}
	return bin, remove, nil
}

// runStdioStory supervises the stdio test server run with args as name
// until ready, or with terminal until a terminal failed state (a server
// that never stays up), and hands the supervisor and its trail to check.
func (e *env) runStdioStory(ctx context.Context, name string, cfg supervisor.Config, args []string, terminal bool,
	check func(sup *supervisor.Supervisor, tr *trail, r *result),
) (r result) {
	bin, remove, err := stdioServer(ctx)
	if err != nil {
		r.err = err
		return r
	}
	defer remove()
	tr := newTrail()
	cfg.Name = name
	cfg.Command = &stdio.Command{Path: bin, Args: args, StopGrace: time.Second, KillGrace: time.Second}
	cfg.Observe.Events = events.Multi(e.sink, tr)
	sup, err := supervisor.New(cfg)
	if err != nil {
		r.err = err
		return r
	}
	defer sup.Close()
	sup.Start()
	until := supervisor.Ready
	if terminal {
		until, err = supervisor.Failed, waitTerminal(ctx, sup)
	} else {
		err = sup.WaitForState(ctx, until)
	}
	if err != nil {
		r.err = fmt.Errorf("waiting for %s: %w (state %s)", until, err, sup.State())
		return r
	}
	if err := tr.reached(ctx, until); err != nil {
		r.err = fmt.Errorf("waiting for the %s event: %w", until, err)
		return r
	}
	check(sup, tr, &r)
	return r
}

// waitTerminal waits until sup is in a terminal failed state, whatever it
// passes through (a crash-looping server may reach ready now and then).
func waitTerminal(ctx context.Context, sup *supervisor.Supervisor) error {
	for {
		err := sup.WaitForState(ctx, supervisor.Ready)
		switch {
		case errors.Is(err, supervisor.ErrNotReady):
			return nil // terminal
		case err != nil:
			return err
		}
		if !sup.WaitForStateChange(ctx, supervisor.Ready) {
			return ctx.Err()
		}
	}
}

// stdioRow sets the table columns of a stdio story.
func stdioRow(r *result, sup *supervisor.Supervisor) {
	r.state = sup.State().String()
	if reason, _ := sup.Failure(); reason != supervisor.ReasonNone {
		r.state += " (" + string(reason) + ")"
	}
	r.tools = strconv.Itoa(len(sup.Catalog().Tools))
	r.sessions = fmt.Sprintf("%d (gen %d)", sup.SessionsOpened(), sup.Generation())
	r.stream = "- (stdio)"
}

// processGone signals pid with 0, which finds the process without
// touching it: os.ErrProcessDone once it has exited and been reaped.
func processGone(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Signal(syscall.Signal(0))
}

// echo calls the test server's echo tool.
func echo(ctx context.Context, sup *supervisor.Supervisor, text string) (string, error) {
	res, err := sup.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}})
	if err != nil {
		return "", err
	}
	return res.Content[0].(*mcp.TextContent).Text, nil
}

// pidOf asks the test server for its process id.
func pidOf(ctx context.Context, sup *supervisor.Supervisor) (int, error) {
	res, err := sup.CallTool(ctx, &mcp.CallToolParams{Name: "pid"})
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.Fields(res.Content[0].(*mcp.TextContent).Text)[0])
}

// storyStdioCrash: a stdio server prints log lines on stdout, writes to
// stderr and crashes in a call. DESIGN.md section 2 (stdio): the lines are
// dropped, not fatal; the call fails outcome unknown with the exit code; the
// process is started again and the next call waits for it; its stderr tail
// goes with the exit; Close leaves no process.
func storyStdioCrash(ctx context.Context, e *env) result {
	const name = "stdio-crash"
	e.say(name, "a stdio server (a process): it prints garbage on stdout, then crashes in a call")
	return e.runStdioStory(ctx, name, supervisor.Config{}, []string{"-garbage-at-start", "listening on stdio"}, false,
		func(sup *supervisor.Supervisor, tr *trail, r *result) {
			first, pidErr := pidOf(ctx, sup)
			r.expect(pidErr == nil, "the server answers", "%v", pidErr)
			_, err := sup.CallTool(ctx, &mcp.CallToolParams{Name: "garbage", Arguments: map[string]any{"lines": 2}})
			r.expect(err == nil, "a call whose server prints 2 non-JSON lines succeeds", "%v", err)
			_, err = sup.CallTool(ctx, &mcp.CallToolParams{Name: "stderr", Arguments: map[string]any{"text": "fatal: simulated crash\n"}})
			r.expect(err == nil, "the server writes its last words to stderr", "%v", err)

			e.say(name, "the next call makes the process exit with code 3")
			_, err = sup.CallTool(ctx, &mcp.CallToolParams{Name: "crash", Arguments: map[string]any{"code": 3}})
			var ce *supervisor.CallError
			var exit *stdio.ProcessExitError
			r.expect(errors.As(err, &ce) && ce.Delivery == supervisor.OutcomeUnknown && errors.As(err, &exit) && exit.Code == 3,
				"the call in flight fails, outcome unknown, naming exit code 3", "%v", err)
			text, err := echo(ctx, sup, "after the restart")
			r.expect(err == nil && text == "after the restart", "the next call waits for the new process and succeeds", "%q %v", text, err)
			second, _ := pidOf(ctx, sup)
			r.expect(second != 0 && second != first, "a new process serves", "pid %d, was %d", second, first)
			r.expect(sup.SessionsOpened() == 2, "one restart: two sessions", "%d", sup.SessionsOpened())
			r.expect(tr.kind(events.KindStdoutLineDropped) == 4, "4 stdout lines dropped (3 of the first process, 1 of the second), each an event, none fatal", "%d: %v", tr.kind(events.KindStdoutLineDropped), tr.details(events.KindStdoutLineDropped))
			exited := ""
			if ev, err := tr.wait(ctx, events.KindProcessExited); err == nil {
				exited = events.Summary(ev)
			}
			r.expect(strings.Contains(exited, "exited with code 3") && strings.Contains(exited, "stderr: fatal: simulated crash"),
				"the exit event names the code and carries the stderr tail", "%q", exited)
			stdioRow(r, sup)
			if err := sup.Close(); err != nil {
				r.err = err
			}
			gone := processGone(second)
			r.expect(errors.Is(gone, os.ErrProcessDone), "no process left after Close", "signal 0 to pid %d: %v", second, gone)
			r.state = sup.State().String() + " (was ready)"
		})
}

// storyStdioChurn: a stdio server that exits right after its handshake,
// every time. DESIGN.md section 2: each death is a new session, and past the
// churn limit (3 per minute here) the failure is terminal until the
// cool-down; calls then fail at once, unsent.
func storyStdioChurn(ctx context.Context, e *env) result {
	const name = "stdio-churn"
	const limit = 3
	e.say(name, "a stdio server that exits after its handshake, every time; churn limit %d sessions per minute", limit)
	cfg := supervisor.Config{
		Recovery: supervisor.RecoveryConfig{
			MaxSessions: limit,
			ChurnWindow: time.Minute,
			Backoff:     supervisor.Backoff{InitialInterval: 10 * time.Millisecond, MaxInterval: 50 * time.Millisecond},
		},
	}
	return e.runStdioStory(ctx, name, cfg, []string{"-exit-after-lines", "2", "-exit-code", "1"}, true,
		func(sup *supervisor.Supervisor, tr *trail, r *result) {
			reason, _ := sup.Failure()
			r.expect(sup.State() == supervisor.Failed && reason == supervisor.ReasonChurn, "failed, reason churn", "%s %s", sup.State(), reason)
			r.expect(sup.SessionsOpened() == limit, fmt.Sprintf("%d sessions, then no more", limit), "%d", sup.SessionsOpened())
			r.expect(tr.kind(events.KindProcessExited) == limit, fmt.Sprintf("%d process exits", limit), "%d", tr.kind(events.KindProcessExited))
			_, err := echo(ctx, sup, "anyone?")
			var ce *supervisor.CallError
			r.expect(errors.As(err, &ce) && ce.Delivery == supervisor.NotSent && errors.Is(err, supervisor.ErrNotReady),
				"a call fails at once, unsent, naming the churn", "%v", err)
			stdioRow(r, sup)
		})
}
