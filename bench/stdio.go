package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/internal/stdiotest"
	"github.com/mcpsup/mcpsup/stdio"
	"github.com/mcpsup/mcpsup/supervisor"
)

// StdioResult is the time from a stdio server's process start to a usable
// connection, for one way of getting there.
type StdioResult struct {
	Scenario string
	Runs     int
	// Median, Min and Max of the time to a usable connection.
	Median, Min, Max time.Duration
	Err              error
}

// Scenarios of the stdio figure.
const (
	StdioRestart  = "mcpsup restart: the process exits in a call, to ready again"
	StdioFresh    = "mcpsup fresh start: Start to ready"
	StdioBareSDK  = "bare go-sdk: CommandTransport connect + tools/list"
	stdioToolName = "echo"
)

// StdioRestartTimes measures figure 9 with mcpsup's stdio test server,
// built into a temporary directory from the module at dir: a supervisor's
// restart after the process exits (from the failed call's return, the exit
// known, to ready on the new process: the process start, the handshake and
// tools/list), its first start, and bare go-sdk starting the same process
// on mcp.CommandTransport and listing its tools. Every client pins protocol
// version 2025-11-25 (the supervisor by Era2025), runs times each.
func StdioRestartTimes(ctx context.Context, dir string, runs int) []StdioResult {
	bin, remove, err := buildStdioServer(ctx, dir)
	if err != nil {
		return []StdioResult{{Scenario: StdioRestart, Err: err}}
	}
	defer remove()
	return []StdioResult{
		stdioScenario(StdioRestart, runs, restartRuns(ctx, bin, runs)),
		stdioScenario(StdioFresh, runs, repeat(runs, func() (time.Duration, error) { return freshStdio(ctx, bin) })),
		stdioScenario(StdioBareSDK, runs, repeat(runs, func() (time.Duration, error) { return bareStdio(ctx, bin) })),
	}
}

// buildStdioServer builds the test server from the module at dir.
func buildStdioServer(ctx context.Context, dir string) (string, func(), error) {
	tmp, err := os.MkdirTemp("", "mcpsup-bench-stdio-")
	if err != nil {
		return "", nil, err
	}
	remove := func() { _ = os.RemoveAll(tmp) }
	cmd := exec.CommandContext(ctx, "go", "build", "-o", tmp+"/server", stdiotest.ServerPackage)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		remove()
		return "", nil, fmt.Errorf("go build %s: %w: %s", stdiotest.ServerPackage, err, out)
	}
	return tmp + "/server", remove, nil
}

func repeat(runs int, one func() (time.Duration, error)) func() ([]time.Duration, error) {
	return func() ([]time.Duration, error) {
		var ds []time.Duration
		for range runs {
			d, err := one()
			if err != nil {
				return nil, err
			}
			ds = append(ds, d)
		}
		return ds, nil
	}
}

func stdioScenario(name string, runs int, measure func() ([]time.Duration, error)) StdioResult {
	res := StdioResult{Scenario: name, Runs: runs}
	ds, err := measure()
	if err != nil {
		res.Err = err
		return res
	}
	slices.Sort(ds)
	res.Median, res.Min, res.Max = ds[len(ds)/2], ds[0], ds[len(ds)-1]
	return res
}

// stdioConfig is the supervisor of the figure: Era2025 like the baseline,
// and a backoff that never delays a restart (a death in ready dials at once
// anyway), churn off the way.
func stdioConfig(bin string) supervisor.Config {
	return supervisor.Config{
		Name:     "stdio",
		Era:      supervisor.Era2025,
		Command:  &stdio.Command{Path: bin, StopGrace: time.Second, KillGrace: time.Second},
		Recovery: supervisor.RecoveryConfig{MaxSessions: 1 << 20},
	}
}

// restartRuns crashes one supervisor's process runs times, timing each way
// back to ready.
func restartRuns(ctx context.Context, bin string, runs int) func() ([]time.Duration, error) {
	return func() ([]time.Duration, error) {
		sup, err := supervisor.New(stdioConfig(bin))
		if err != nil {
			return nil, err
		}
		defer sup.Close()
		sup.Start()
		if err := sup.WaitForState(ctx, supervisor.Ready); err != nil {
			return nil, err
		}
		var ds []time.Duration
		for i := range runs {
			d, err := RestartOnce(ctx, sup)
			if err != nil {
				return nil, err
			}
			if got := sup.SessionsOpened(); got != i+2 {
				return nil, fmt.Errorf("%d sessions after %d restarts", got, i+1)
			}
			ds = append(ds, d)
		}
		return ds, nil
	}
}

// RestartOnce makes the ready supervisor's stdio test server exit in a
// call and returns the time from the call's return to ready again.
func RestartOnce(ctx context.Context, sup *supervisor.Supervisor) (time.Duration, error) {
	gen := sup.Generation()
	_, err := sup.CallTool(ctx, &mcp.CallToolParams{Name: "crash", Arguments: map[string]any{"code": 1}})
	var exit *stdio.ProcessExitError
	if !errors.As(err, &exit) {
		return 0, fmt.Errorf("the crash call: %v", err)
	}
	start := time.Now()
	// The supervisor may still be in ready, verifying the session the
	// call failed on: wait for ready on a later generation.
	for {
		// The generation first: a ready read after it is that session's.
		later := sup.Generation() > gen
		st := sup.State()
		if later && st == supervisor.Ready {
			return time.Since(start), nil
		}
		if !sup.WaitForStateChange(ctx, st) {
			return 0, ctx.Err()
		}
	}
}

func freshStdio(ctx context.Context, bin string) (time.Duration, error) {
	start := time.Now()
	sup, err := supervisor.New(stdioConfig(bin))
	if err != nil {
		return 0, err
	}
	defer sup.Close()
	sup.Start()
	if err := sup.WaitForState(ctx, supervisor.Ready); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

// bareStdio starts the server on go-sdk's CommandTransport, lists its
// tools and closes.
func bareStdio(ctx context.Context, bin string) (time.Duration, error) {
	start := time.Now()
	cl := mcp.NewClient(&mcp.Implementation{Name: "bare", Version: "0"}, nil)
	cs, err := cl.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(bin), TerminateDuration: time.Second},
		&mcp.ClientSessionOptions{ProtocolVersion: pinnedVersion})
	if err != nil {
		return 0, err
	}
	defer cs.Close()
	res, err := cs.ListTools(ctx, nil)
	d := time.Since(start)
	if err != nil {
		return 0, err
	}
	if !slices.ContainsFunc(res.Tools, func(t *mcp.Tool) bool { return t.Name == stdioToolName }) {
		return 0, errors.New("bare go-sdk: no echo tool listed")
	}
	return d, nil
}

// RenderStdio writes figure 9 (see StdioRestartTimes) as Markdown.
func RenderStdio(rs []StdioResult) string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("## 9. stdio server restart\n\n")
	p("mcpsup's stdio test server (internal/stdiotest/server, a go-sdk server) as a child process. ")
	p("The restart is timed from the return of the call in which the process exited (the supervisor knows it died) to ready on a new process: process start, handshake and tools/list. ")
	p("Bare go-sdk starts the same binary on `mcp.CommandTransport` and lists the tools; it never restarts. Goal: a restart about as fast as bare go-sdk's connect.\n\n")
	p("| scenario | runs | median | min | max |\n|---|---:|---:|---:|---:|\n")
	for _, x := range rs {
		if x.Err != nil {
			p("| %s | | error: %s | | |\n", x.Scenario, cell(x.Err.Error()))
			continue
		}
		p("| %s | %d | %s | %s | %s |\n", x.Scenario, x.Runs, ms(x.Median), ms(x.Min), ms(x.Max))
	}
	return b.String()
}
