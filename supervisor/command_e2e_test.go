//go:build unix

package supervisor

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/internal/lockedbuf"
	"github.com/mcpsup/mcpsup/internal/stdiotest"
	"github.com/mcpsup/mcpsup/stdio"
)

// stdioTimeout bounds every wait on a real process.
const stdioTimeout = 60 * time.Second

// stdioRig is one supervisor of the test server.
type stdioRig struct {
	t    *testing.T
	sup  *Supervisor
	rec  *events.Recorder
	ctx  context.Context
	logs *lockedbuf.Buffer // Config.Observe.Logger's, unless the test gave one
}

// newStdioRig supervises the test server run with args; cfg's Command, if
// set, gives the other command fields.
func newStdioRig(t *testing.T, cfg Config, args ...string) *stdioRig {
	t.Helper()
	cmd := stdio.Command{StopGrace: 5 * time.Second, KillGrace: 5 * time.Second}
	if cfg.Command != nil {
		cmd = *cfg.Command
	}
	cmd.Path, cmd.Args = testServer(t), args
	cfg.Command = &cmd
	rec := &events.Recorder{}
	cfg.Observe.Events = rec
	cfg.Name = "srv"
	logs := &lockedbuf.Buffer{}
	if cfg.Observe.Logger == nil {
		cfg.Observe.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	if cfg.Recovery.Backoff == (Backoff{}) {
		cfg.Recovery.Backoff = Backoff{InitialInterval: time.Millisecond, MaxInterval: time.Millisecond, NoJitter: true}
	}
	sup, err := New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = sup.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), stdioTimeout)
	t.Cleanup(cancel)
	return &stdioRig{t: t, sup: sup, rec: rec, ctx: ctx, logs: logs}
}

func (r *stdioRig) ready() {
	r.t.Helper()
	err := r.sup.WaitForState(r.ctx, Ready)
	if err != nil {
		for _, e := range r.rec.Events() {
			r.t.Logf("%d %s %s->%s %s gen=%d %s %s", e.Seq, e.Kind, e.From, e.To, e.Trigger, e.Generation, e.Verdict, e.Detail)
		}
	}
	require.NoError(r.t, err)
}

// restarted waits until a session after generation gen is ready: a
// death's event and a failed call may come before the loop takes the
// death, when the state is still the dead session's ready.
func (r *stdioRig) restarted(gen uint64) {
	r.t.Helper()
	for r.sup.Generation() <= gen {
		require.True(r.t, r.sup.WaitForStateChange(r.ctx, r.sup.State()), "no session after generation %d", gen)
	}
	r.ready()
}

func (r *stdioRig) call(name string, args map[string]any) (*mcp.CallToolResult, error) {
	return r.sup.CallTool(r.ctx, &mcp.CallToolParams{Name: name, Arguments: args})
}

// pids asks the server for its pid, process group and child.
func (r *stdioRig) pids() (pid, pgid, child int) {
	r.t.Helper()
	res, err := r.call("pid", nil)
	require.NoError(r.t, err)
	f := strings.Fields(res.Content[0].(*mcp.TextContent).Text)
	require.Len(r.t, f, 3)
	pid, _ = strconv.Atoi(f[0])
	pgid, _ = strconv.Atoi(f[1])
	child, _ = strconv.Atoi(f[2])
	return pid, pgid, child
}

// waitEvent waits for the first event of kind whose summary
// (events.Summary: its typed fields, then its detail) contains sub.
func (r *stdioRig) waitEvent(kind events.Kind, sub string) events.Event {
	r.t.Helper()
	var found events.Event
	_, err := r.rec.WaitFor(r.ctx, func(es []events.Event) bool {
		for _, e := range es {
			if e.Kind == kind && strings.Contains(events.Summary(e), sub) {
				found = e
				return true
			}
		}
		return false
	})
	require.NoError(r.t, err, "no %s event with %q", kind, sub)
	return found
}

func countKind(es []events.Event, kind events.Kind) int {
	n := 0
	for _, e := range es {
		if e.Kind == kind {
			n++
		}
	}
	return n
}

// procState returns the state letter of /proc/<pid>/stat and its process
// group, ok false when no such process exists.
func procState(pid int) (state byte, pgrp int, ok bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, 0, false
	}
	// pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
	rest := b[bytes.LastIndexByte(b, ')')+2:]
	f := strings.Fields(string(rest))
	pgrp, _ = strconv.Atoi(f[2])
	return f[0][0], pgrp, true
}

// groupMembers lists the processes of process group pgid, zombies
// included, from /proc.
func groupMembers(t *testing.T, pgid int) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if _, g, ok := procState(pid); ok && g == pgid {
			out = append(out, pid)
		}
	}
	return out
}

func requireProcFS(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc on this system")
	}
}

func TestCommandServesAndLeavesNoProcess(t *testing.T) {
	requireProcFS(t)
	r := newStdioRig(t, Config{})
	r.sup.Start()
	r.ready()
	assert.NotNil(t, r.sup.Catalog().Tool("echo"))
	res, err := r.call("echo", map[string]any{"text": "hi"})
	require.NoError(t, err)
	assert.Equal(t, "hi", res.Content[0].(*mcp.TextContent).Text)
	assert.Nil(t, r.sup.ResumeState(), "a process has nothing to resume")
	pid, pgid, _ := r.pids()
	assert.Equal(t, pid, pgid, "the server leads its own process group")
	require.NoError(t, r.sup.Close())
	_, _, alive := procState(pid)
	assert.False(t, alive, "the server was reaped by Close")
	assert.Empty(t, groupMembers(t, pgid))
	// The event stream ends with Close; the exit Close caused is logged.
	assert.Contains(t, r.logs.String(), fmt.Sprintf(`msg="mcpsup: stdio server exited" server=srv pid=%d code=0 signal="" stop=stdin-closed`, pid))
	assert.Equal(t, 1, r.sup.SessionsOpened())
}

// TestCommandCrashIsRestarted: a call that crashes the server fails with
// outcome unknown and the exit code; the process is started again, and a
// call made right after waits for the new session.
func TestCommandCrashIsRestarted(t *testing.T) {
	r := newStdioRig(t, Config{})
	r.sup.Start()
	r.ready()
	pid1, _, _ := r.pids()

	_, err := r.call("crash", map[string]any{"code": 7})
	var ce *CallError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, OutcomeUnknown, ce.Delivery, "the request reached the server")
	assert.Equal(t, classify.Transport, ce.Verdict.Class)
	var exit *stdio.ProcessExitError
	require.ErrorAs(t, err, &exit, "the call names the exit")
	assert.Equal(t, 7, exit.Code)
	assert.Equal(t, stdio.StopNone, exit.Stop)

	res, err := r.call("echo", map[string]any{"text": "again"}) // waits for the new process
	require.NoError(t, err)
	assert.Equal(t, "again", res.Content[0].(*mcp.TextContent).Text)
	pid2, _, _ := r.pids()
	assert.NotEqual(t, pid1, pid2)
	assert.Equal(t, 2, r.sup.SessionsOpened())

	e := r.waitEvent(events.KindProcessExited, "exited with code 7")
	assert.Equal(t, uint64(1), e.Generation)
	assert.Equal(t, 7, e.ExitCode)
	assert.Empty(t, e.Stop, "it exited by itself")

	_, err = r.call("kill", nil)
	require.Error(t, err)
	killed := r.waitEvent(events.KindProcessExited, "ended by signal 9")
	assert.Equal(t, int(syscall.SIGKILL), killed.Signal)
	assert.Equal(t, -1, killed.ExitCode)
	r.restarted(2)
	assert.Equal(t, 3, r.sup.SessionsOpened())
}

// TestCommandDeathIsTheSessionDied: a server that exits by itself, no call
// in flight, is "the session died": the session-ended event carries the
// exit as a transport verdict, and the machine dials again at once.
func TestCommandDeathIsTheSessionDied(t *testing.T) {
	r := newStdioRig(t, Config{Era: Era2025}, "-exit-after-lines", "4", "-exit-code", "5")
	r.sup.Start()
	r.ready()
	// Lines: initialize, tools/list, this echo's answer; the next answer
	// is the last.
	_, err := r.call("echo", map[string]any{"text": "1"})
	require.NoError(t, err)
	_, err = r.call("echo", map[string]any{"text": "2"})
	require.NoError(t, err, "its answer was written before the exit")
	r.waitEvent(events.KindProcessExited, "exited with code 5")
	es, err := r.rec.WaitFor(r.ctx, func(es []events.Event) bool {
		for _, e := range es {
			if e.Kind == events.KindTransition && e.Trigger == events.TriggerSessionDied {
				return true
			}
		}
		return false
	})
	require.NoError(t, err)
	for _, e := range es {
		if e.Kind == events.KindTransition && e.Trigger == events.TriggerSessionDied {
			assert.Equal(t, Ready, e.From)
			assert.Equal(t, Connecting, e.To)
			assert.Equal(t, classify.Transport, e.Verdict.Class)
			assert.Contains(t, e.Verdict.Detail, "exited with code 5")
		}
	}
}

// TestCommandCrashLoopEndsInChurn: a server that dies after every
// handshake is restarted until the churn limit, then the failure is
// terminal until the cool-down (on the fake clock) passes.
func TestCommandCrashLoopEndsInChurn(t *testing.T) {
	clock := clockwork.NewFakeClock()
	r := newStdioRig(t, Config{Observe: ObserveConfig{Clock: clock}, Recovery: RecoveryConfig{MaxSessions: 3, ChurnWindow: time.Minute, ChurnCooldown: time.Minute}})
	r.sup.Start()
	for i := 1; i <= 3; i++ {
		r.ready()
		_, err := r.call("crash", map[string]any{"code": 1})
		require.Error(t, err)
	}
	// The failed call may return before the loop takes the death.
	for r.sup.Generation() == 3 && r.sup.State() == Ready {
		require.True(t, r.sup.WaitForStateChange(r.ctx, Ready), "the third death is never taken")
	}
	err := r.sup.WaitForState(r.ctx, Ready)
	var se *StateError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, ReasonChurn, se.Reason)
	assert.Equal(t, 3, r.sup.SessionsOpened())

	_, err = r.rec.WaitFor(r.ctx, func(es []events.Event) bool { return countKind(es, events.KindProcessExited) == 3 })
	require.NoError(t, err)
	clock.Advance(time.Minute) // the cool-down, armed before the failure was published
	r.sup.WaitForStateChange(r.ctx, Failed)
	r.ready()
	assert.Equal(t, 4, r.sup.SessionsOpened())
}

// TestCommandHungServerIsFoundByPing: a server that stops answering
// (SIGSTOP: it reads nothing, answers nothing, and SIGTERM waits) is found
// dead by two unanswered keepalive pings, killed, and started again; the
// call in flight fails with outcome unknown.
func TestCommandHungServerIsFoundByPing(t *testing.T) {
	requireProcFS(t)
	r := newStdioRig(t, Config{
		Era:      Era2025,
		Command:  &stdio.Command{StopGrace: 50 * time.Millisecond, KillGrace: 50 * time.Millisecond},
		Recovery: RecoveryConfig{KeepAlive: 300 * time.Millisecond},
	})
	r.sup.Start()
	r.ready()
	pid, _, _ := r.pids()
	gen := r.sup.Generation()

	callErr := make(chan error, 1)
	go func() {
		res, err := r.call("freeze", nil)
		if err == nil {
			t.Logf("freeze answered %+v", res.Content[0])
		}
		callErr <- err
	}()
	// Once it is frozen, a call with a large argument fills its stdin: the
	// pipe's write blocks, and go-sdk's writes behind it.
	for {
		st, _, _ := procState(pid)
		if st == 'T' {
			break
		}
		runtime.Gosched()
	}
	bigErr := make(chan error, 1)
	go func() {
		_, err := r.call("echo", map[string]any{"text": strings.Repeat("a", 1<<20)})
		bigErr <- err
	}()
	e := r.waitEvent(events.KindProcessExited, "after sigkill")
	assert.Equal(t, int(syscall.SIGKILL), e.Signal)
	assert.Equal(t, "sigkill", e.Stop)
	assert.Equal(t, gen, e.Generation)
	_, _, alive := procState(pid)
	assert.False(t, alive)

	err := <-callErr
	var ce *CallError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, OutcomeUnknown, ce.Delivery)
	require.ErrorAs(t, <-bigErr, &ce)
	assert.Equal(t, NotSent, ce.Delivery, "cut mid-write: the server never had it whole")
	assert.True(t, ce.Resendable())
	r.ready()
	pid2, _, _ := r.pids()
	assert.NotEqual(t, pid, pid2)

	assert.Contains(t, r.logs.String(), `msg="mcpsup: keepalive ping: the session is dead" verdict=timeout`)
}

// TestCommandGarbageOnStdoutIsDropped: lines that are not JSON-RPC are
// dropped and counted, each with an event; the session lives.
func TestCommandGarbageOnStdoutIsDropped(t *testing.T) {
	r := newStdioRig(t, Config{}, "-garbage-at-start", "starting up...")
	r.sup.Start()
	r.ready()
	res, err := r.call("garbage", map[string]any{"lines": 3})
	require.NoError(t, err)
	assert.Equal(t, "printed", res.Content[0].(*mcp.TextContent).Text)
	_, err = r.call("echo", map[string]any{"text": "still here"})
	require.NoError(t, err)
	es, err := r.rec.WaitFor(r.ctx, func(es []events.Event) bool { return countKind(es, events.KindStdoutLineDropped) == 4 })
	require.NoError(t, err)
	var details []string
	for _, e := range es {
		if e.Kind == events.KindStdoutLineDropped {
			details = append(details, events.Summary(e))
		}
	}
	assert.Equal(t, "1 dropped in all; not-jsonrpc", details[0])
	assert.Contains(t, details[3], "4 dropped in all")
	assert.Contains(t, r.logs.String(), `not JSON-RPC: \"starting up...\"`, "the line's start is logged")
	assert.Equal(t, 1, r.sup.SessionsOpened(), "no restart")
	assert.Equal(t, uint64(1), r.sup.Generation())
}

// TestCommandMessageWithMoreOnItsLineIsDropped: a server that prints a
// message and more on one line (a log word after a notification) had the
// line passed whole, and go-sdk ended the connection at the byte after the
// message: every session died at its start. The line is dropped and
// reported; the session serves.
func TestCommandMessageWithMoreOnItsLineIsDropped(t *testing.T) {
	line := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}} ready`
	r := newStdioRig(t, Config{}, "-garbage-at-start", line)
	r.sup.Start()
	r.ready()
	_, err := r.call("echo", map[string]any{"text": "still here"})
	require.NoError(t, err)
	e := r.waitEvent(events.KindStdoutLineDropped, "not-jsonrpc")
	assert.Equal(t, 1, e.Count)
	assert.Contains(t, r.logs.String(), "more than one JSON value on the line")
	assert.Equal(t, 1, r.sup.SessionsOpened(), "no restart")
}

// TestCommandEnvValuesAreMasked: the values of stdio.Command.Env are the
// process's credentials (a token for the service it fronts, typically); a
// server that prints one, on stderr or stdout, had it logged, quoted in a
// stdout-line-dropped event and in its exit's stderr tail. They are masked
// there, as the hub masks a server's env values.
func TestCommandEnvValuesAreMasked(t *testing.T) {
	const token = "ghp_0123456789abcdefXYZ"
	r := newStdioRig(t, Config{Command: &stdio.Command{Env: []string{"SERVICE_TOKEN=" + token}}},
		"-stderr-at-start", "using "+token, "-garbage-at-start", "started with "+token)
	r.sup.Start()
	r.ready()
	_, err := r.call("crash", map[string]any{"code": 2})
	require.Error(t, err)
	r.waitEvent(events.KindProcessExited, "exited with code 2")
	r.waitEvent(events.KindStdoutLineDropped, "1 dropped in all")
	FlushEvents(r.sup)
	for _, e := range r.rec.Events() {
		b, err := e.MarshalJSON()
		require.NoError(t, err)
		require.NotContains(t, string(b), token, "event %s", e.Kind)
	}
	require.Contains(t, r.logs.String(), "using [redacted]")
	require.NotContains(t, r.logs.String(), token)
}

// TestCommandMultiLineEnvValueIsMaskedLineByLine: an env value of several
// lines (a PEM key) that the server prints on stderr is logged a record a
// line; every line of it, the middle ones too, is masked there and in the
// exit's stderr tail.
func TestCommandMultiLineEnvValueIsMaskedLineByLine(t *testing.T) {
	const middle, last = "MIDDLEsecretLINE5678abc", "ZZZZlastLine9999"
	const pem = "-----BEGIN PRIVATE KEY-----\n" + middle + "\n" + last + "\n-----END PRIVATE KEY-----"
	r := newStdioRig(t, Config{Command: &stdio.Command{Env: []string{"KEY=" + pem}}})
	r.sup.Start()
	r.ready()
	_, err := r.call("stderr", map[string]any{"text": pem + "\n"})
	require.NoError(t, err)
	_, err = r.call("crash", map[string]any{"code": 2})
	require.Error(t, err)
	e := r.waitEvent(events.KindProcessExited, "exited with code 2")
	logs := r.logs.String()
	require.Contains(t, logs, "line="+events.Masked, "the lines were logged")
	for _, line := range []string{middle, last, "BEGIN PRIVATE KEY"} {
		require.NotContains(t, logs, line)
		require.NotContains(t, e.Detail, line)
	}
}

// TestCommandInheritKeepsVariablesFromTheProcess: stdio.Command.Inherit withholds
// the variables it refuses from the process's inherited environment, at
// every start (a restarted process too); Env still sets a variable it
// refuses, and the others are inherited as without it.
func TestCommandInheritKeepsVariablesFromTheProcess(t *testing.T) {
	t.Setenv("MCPSUP_TEST_WITHHELD", "another server's key 0123456789")
	t.Setenv("MCPSUP_TEST_INHERITED", "plain")
	t.Setenv("MCPSUP_TEST_SET_BY_ENV", "from the host")
	keep := func(name string) bool { return name != "MCPSUP_TEST_WITHHELD" && name != "MCPSUP_TEST_SET_BY_ENV" }
	r := newStdioRig(t, Config{Command: &stdio.Command{Inherit: keep, Env: []string{"MCPSUP_TEST_SET_BY_ENV=its own"}}})
	r.sup.Start()
	r.ready()
	check := func() {
		t.Helper()
		for name, want := range map[string]string{"MCPSUP_TEST_WITHHELD": "unset", "MCPSUP_TEST_INHERITED": "set", "MCPSUP_TEST_SET_BY_ENV": "set"} {
			res, err := r.call("getenv", map[string]any{"name": name})
			require.NoError(t, err)
			require.Equal(t, want, res.Content[0].(*mcp.TextContent).Text, name)
		}
	}
	check()
	gen := r.sup.Generation()
	_, err := r.call("crash", map[string]any{"code": 2})
	require.Error(t, err)
	r.restarted(gen)
	check()
}

// TestCommandArgCredentialsAreMasked: a credential passed on the command
// line (`-api-key VALUE`, as many stdio servers take their token) is masked
// as Env's values are, where a server that logs its configuration writes it.
func TestCommandArgCredentialsAreMasked(t *testing.T) {
	const token = "sk-0123456789abcdefXYZ"
	r := newStdioRig(t, Config{}, "-api-key", token)
	r.sup.Start()
	r.ready()
	FlushEvents(r.sup)
	require.Eventually(t, func() bool { return strings.Contains(r.logs.String(), "configured with api key") }, stdioTimeout, time.Millisecond)
	require.Contains(t, r.logs.String(), "configured with api key [redacted]")
	require.NotContains(t, r.logs.String(), token)
}

// TestCommandStderrIsLoggedAndItsTailKept: stderr lines are logged with
// the server's name, and the last StderrTail bytes, from a whole line, go
// with the exit.
func TestCommandStderrIsLoggedAndItsTailKept(t *testing.T) {
	var logs lockedbuf.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	r := newStdioRig(t, Config{Command: &stdio.Command{StderrTail: 64}, Observe: ObserveConfig{Logger: logger}}, "-stderr-at-start", "booting")
	r.sup.Start()
	r.ready()
	long := strings.Repeat("x", 200) + "\n"
	_, err := r.call("stderr", map[string]any{"text": long + "line one\nlast words\n"})
	require.NoError(t, err)
	_, err = r.call("crash", map[string]any{"code": 2})
	require.Error(t, err)
	e := r.waitEvent(events.KindProcessExited, "exited with code 2")
	assert.Equal(t, "line one\nlast words\n", e.Detail, "the tail starts at a whole line")
	assert.NotContains(t, e.Detail, "booting", "cut to 64 bytes")
	out := logs.String()
	assert.Contains(t, out, `msg="mcpsup: stdio server stderr" server=srv line=booting`)
	assert.Contains(t, out, `line="last words"`)
}

// TestCommandStopSteps: Close closes stdin; a server that outlives that
// gets SIGTERM after StopGrace, one that ignores SIGTERM gets SIGKILL after
// KillGrace.
func TestCommandStopSteps(t *testing.T) {
	const short, long = 20 * time.Millisecond, time.Minute // a long grace is never waited for
	cases := []struct {
		args       []string
		stop, kill time.Duration
		want       string
	}{
		{nil, long, long, `code=0 signal="" stop=stdin-closed`},
		{[]string{"-ignore-stdin-eof"}, short, long, "code=-1 signal=SIGTERM stop=sigterm"},
		{[]string{"-ignore-stdin-eof", "-ignore-sigterm"}, short, short, "code=-1 signal=SIGKILL stop=sigkill"},
	}
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			r := newStdioRig(t, Config{Command: &stdio.Command{StopGrace: c.stop, KillGrace: c.kill}}, c.args...)
			r.sup.Start()
			r.ready()
			pid, _, _ := r.pids()
			require.NoError(t, r.sup.Close())
			assert.Contains(t, r.logs.String(), fmt.Sprintf(`msg="mcpsup: stdio server exited" server=srv pid=%d %s`, pid, c.want))
		})
	}
}

// TestCommandCloseEndsTheWholeGroup: a child the server started in its
// group is killed with it, and no process of the group is left.
func TestCommandCloseEndsTheWholeGroup(t *testing.T) {
	requireProcFS(t)
	if !stdiotest.Subreaper() {
		t.Skip("not a child subreaper: the killed child could not be reaped here")
	}
	r := newStdioRig(t, Config{}, "-child")
	r.sup.Start()
	r.ready()
	pid, pgid, child := r.pids()
	require.NotZero(t, child)
	_, g, ok := procState(child)
	require.True(t, ok)
	require.Equal(t, pgid, g, "the child is in the server's group")

	require.NoError(t, r.sup.Detach()) // Detach ends the process like Close
	_, _, alive := procState(pid)
	assert.False(t, alive, "the server was reaped")
	var ws syscall.WaitStatus
	_, err := syscall.Wait4(child, &ws, 0, nil) // reparented to this process
	require.NoError(t, err)
	assert.True(t, ws.Signaled())
	assert.Equal(t, syscall.SIGKILL, ws.Signal())
	assert.Empty(t, groupMembers(t, pgid), "no orphan or zombie of the group")
}

func TestCommandConfigIsValidated(t *testing.T) {
	_, err := New(Config{Endpoint: "http://127.0.0.1:1/mcp", Command: &stdio.Command{Path: "x"}})
	require.ErrorIs(t, err, ErrConfigConflict)
	_, err = New(Config{Command: &stdio.Command{Path: "x"}, Resume: &ResumeState{}})
	require.ErrorIs(t, err, ErrConfigConflict)
	// The groups of a streamable HTTP server: a stdio server has no HTTP
	// and no standalone stream, so a field set there is a mistake.
	_, err = New(Config{Command: &stdio.Command{Path: "x"}, HTTP: HTTPConfig{EraReprobe: time.Minute}})
	require.ErrorIs(t, err, ErrConfigConflict)
	_, err = New(Config{Command: &stdio.Command{Path: "x"}, HTTP: HTTPConfig{HTTPClient: &http.Client{}}})
	require.ErrorIs(t, err, ErrConfigConflict)
	_, err = New(Config{Command: &stdio.Command{Path: "x"}, Stream: StreamConfig{Policy: StreamOff}})
	require.ErrorIs(t, err, ErrConfigConflict)
	_, err = New(Config{Command: &stdio.Command{Path: "x"}, Stream: StreamConfig{Keeper: StreamKeeper{Span: time.Second}}})
	require.ErrorIs(t, err, ErrConfigConflict)
	var ce *stdio.CommandError
	_, err = New(Config{Command: &stdio.Command{}})
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "Path", ce.Field)
	_, err = New(Config{Command: &stdio.Command{Path: "x", Env: []string{"NOEQUALS"}}})
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "Env", ce.Field)

	s, err := New(Config{Command: &stdio.Command{Path: "/bin/true"}})
	require.NoError(t, err)
	assert.Equal(t, "/bin/true", s.cfg.Name, "the name defaults to the path")
	assert.Equal(t, stdio.DefaultStopGrace, s.cfg.Command.StopGrace)
	assert.Equal(t, stdio.DefaultKillGrace, s.cfg.Command.KillGrace)
	assert.Equal(t, stdio.DefaultStderrTail, s.cfg.Command.StderrTail)
	assert.Equal(t, stdio.DefaultMaxLineBytes, s.cfg.Command.MaxLineBytes)
	require.NoError(t, s.Close())
}

// TestCommandThatCannotStartIsRetried: a missing program is a failed
// handshake, retried on the backoff, never terminal.
func TestCommandThatCannotStartIsRetried(t *testing.T) {
	clock := clockwork.NewFakeClock()
	rec := &events.Recorder{}
	s, err := New(Config{Command: &stdio.Command{Path: filepath.Join(t.TempDir(), "missing")}, Observe: ObserveConfig{Clock: clock, Events: rec}})
	require.NoError(t, err)
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), stdioTimeout)
	defer cancel()
	s.Start()
	_, err = rec.WaitFor(ctx, func(es []events.Event) bool { return countKind(es, events.KindRetryScheduled) == 1 })
	require.NoError(t, err)
	reason, v := s.Failure()
	assert.Equal(t, ReasonNone, reason, "retried, not terminal")
	assert.Contains(t, v.Detail, "starting stdio server")
	assert.Equal(t, classify.Unknown, v.Class, "as stdio.Command.Path's doc says")
}

// TestCommandThatDiesAtStartIsRetried: a process that exits before its
// handshake is a failed handshake whose verdict names the exit code; its
// stderr goes with the process-exited event; it is retried on the backoff.
func TestCommandThatDiesAtStartIsRetried(t *testing.T) {
	clock := clockwork.NewFakeClock()
	rec := &events.Recorder{}
	s, err := New(Config{Command: &stdio.Command{Path: "/bin/sh", Args: []string{"-c", "echo missing API key >&2; exit 4"}}, Observe: ObserveConfig{Clock: clock, Events: rec}})
	require.NoError(t, err)
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), stdioTimeout)
	defer cancel()
	s.Start()
	es, err := rec.WaitFor(ctx, func(es []events.Event) bool { return countKind(es, events.KindRetryScheduled) == 1 })
	require.NoError(t, err)
	reason, v := s.Failure()
	assert.Equal(t, ReasonNone, reason, "retried, not terminal")
	assert.Contains(t, v.Detail, "exited with code 4 during the handshake")
	for _, e := range es {
		if e.Kind == events.KindProcessExited {
			assert.Contains(t, e.Detail, "missing API key")
		}
	}
	assert.Equal(t, 1, countKind(es, events.KindProcessExited))
	assert.Zero(t, s.SessionsOpened())
}

// TestSecretCutByABoundIsMasked: a secret that a bound cuts leaves no piece
// of it in events or logs. A dropped stdout line quoted up to maxQuoted and
// "..." ended inside the Env token (the redactor masked a secret's start
// only at a text's very end), a stderr line longer than maxStderrLine is
// logged cut inside the token, and a stderr tail of one long line began
// inside it.
func TestSecretCutByABoundIsMasked(t *testing.T) {
	const token = "Zq8rT2mW9xK4pL7vN3bY6cH1"
	stdout := strings.Repeat("x", maxQuoted-10) + token + " and more"
	stderr := strings.Repeat("y", maxStderrLine-10) + token + " and more"
	tail := strings.Repeat("w", 100) + token + strings.Repeat("z", 50) + "\n" // the last 64 bytes begin inside the token
	r := newStdioRig(t, Config{Command: &stdio.Command{Env: []string{"SERVICE_TOKEN=" + token}, StderrTail: 64}},
		"-stderr-at-start", stderr, "-garbage-at-start", stdout)
	r.sup.Start()
	r.ready()
	_, err := r.call("stderr", map[string]any{"text": tail})
	require.NoError(t, err)
	_, err = r.call("crash", map[string]any{"code": 2})
	require.Error(t, err)
	exited := r.waitEvent(events.KindProcessExited, "exited with code 2")
	require.True(t, strings.HasPrefix(exited.Detail, "…"+events.Masked+"zzz"), "the tail begins inside the token: %q", exited.Detail)
	dropped := r.waitEvent(events.KindStdoutLineDropped, "1 dropped in all")
	require.Empty(t, dropped.Detail, "the quote goes to the log alone")
	FlushEvents(r.sup)
	pieces := []string{token[:minPiece], token[len(token)-minPiece:]}
	for _, e := range r.rec.Events() {
		b, err := e.MarshalJSON()
		require.NoError(t, err)
		for _, p := range pieces {
			require.NotContains(t, string(b), p, "event %s", e.Kind)
		}
	}
	logs := r.logs.String()
	require.Contains(t, logs, "x"+events.Masked+"...", "the quote ends inside the token")
	require.Contains(t, logs, "y"+events.Masked+"… line_bytes=", "the long line's one record ends inside the token")
	require.NotContains(t, logs, events.Masked+" and more", "the long line's rest is not logged")
	for _, p := range pieces {
		require.NotContains(t, logs, p)
	}
	require.NotContains(t, err.Error(), token[len(token)-minPiece:], "the call's error")
}

// The stdio transport's bounds the test cuts a secret at: a dropped
// line's quote and a stderr log record.
const (
	maxQuoted     = 120     // stdio's maxQuoted
	maxStderrLine = 4 << 10 // stdio's maxStderrLine
)

// minPiece is the shortest piece of a secret masked at a cut (the
// redactor's minSecretTail).
const minPiece = 6

// TestCommandPageOverMaxItemsIsRefusedBeforeDecoding: over stdio too, a
// tools/list page with more items than Config.Limits.MaxItems is refused
// before go-sdk decodes its items, class protocol as over HTTP, naming the
// bound; the listing fails and a retry is scheduled. A protocol listing
// failure closes the session (DESIGN.md section 2): the process ends by
// its stop, never by the page.
func TestCommandPageOverMaxItemsIsRefusedBeforeDecoding(t *testing.T) {
	r := newStdioRig(t, Config{Limits: LimitsConfig{MaxItems: 5}, Observe: ObserveConfig{Clock: clockwork.NewFakeClock()}}) // no retry runs
	r.sup.Start()
	evs, err := r.rec.WaitFor(r.ctx, func(evs []events.Event) bool {
		for _, e := range evs {
			if e.Kind == events.KindRetryScheduled {
				return true
			}
		}
		return false
	})
	require.NoError(t, err)
	var tools events.ListOutcome
	for _, e := range evs {
		if e.Kind == events.KindProbeReport {
			tools = e.Lists[0]
			break
		}
	}
	require.Equal(t, "tools", tools.List)
	require.Equal(t, events.ListFailed, tools.Status)
	require.Equal(t, classify.Protocol, tools.Verdict.Class)
	require.False(t, tools.Verdict.RPC.Present, "no JSON-RPC error of the server's")
	require.Contains(t, tools.Verdict.Detail, "tools/list result with more than 5 tools")
	for _, e := range r.rec.Events() {
		if e.Kind == events.KindProcessExited {
			require.NotEqual(t, string(stdio.StopNone), e.Stop, "the process did not exit by itself: %s", e.Detail)
		}
	}
}

// TestCommandResultOverTheContentBoundIsRefused: over stdio too, a
// tools/call result with more content blocks than AnswerLimits.ContentBlocks
// is refused before go-sdk decodes its blocks: the call fails alone, class
// protocol and outcome unknown as over HTTP, with a *stdio.AnswerRefusedError
// naming the bound; the process lives and serves the next call. A result at
// the bound is served.
func TestCommandResultOverTheContentBoundIsRefused(t *testing.T) {
	r := newStdioRig(t, Config{Limits: LimitsConfig{AnswerLimits: AnswerLimits{ContentBlocks: 5}}})
	r.sup.Start()
	r.ready()
	res, err := r.call("blocks", map[string]any{"n": 5})
	require.NoError(t, err)
	require.Len(t, res.Content, 5)
	_, err = r.call("blocks", map[string]any{"n": 6})
	var ce *CallError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, classify.Protocol, ce.Verdict.Class)
	require.Equal(t, OutcomeUnknown, ce.Delivery)
	var refused *stdio.AnswerRefusedError
	require.ErrorAs(t, err, &refused)
	require.Equal(t, "tools/call result with more than 5 content blocks", refused.Problem)
	res, err = r.call("echo", map[string]any{"text": "after"})
	require.NoError(t, err)
	require.False(t, res.IsError)
	for _, e := range r.rec.Events() {
		if e.Kind == events.KindProcessExited {
			require.NotEqual(t, string(stdio.StopNone), e.Stop, "the process did not exit by itself: %s", e.Detail)
		}
	}
}

// TestCommandMessageOverADecodeBoundIsDropped: a stdio server's message
// past a bound on what go-sdk decodes (a notification whose params hold
// more JSON values than AnswerLimits.JSONValues, a sampling/createMessage
// request with more messages than AnswerLimits.Messages) is dropped before
// go-sdk decodes it, and reported as a stdout-line-dropped event naming the
// bound; the session serves the next call.
func TestCommandMessageOverADecodeBoundIsDropped(t *testing.T) {
	values := strings.TrimSuffix(strings.Repeat("{},", 2000), ",")
	msg := `{"role":"user","content":{"type":"text","text":"hi"}}`
	for _, c := range []struct {
		name, line, detail string
		limits             AnswerLimits
	}{
		{"JSON values", `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":[` + values + `]}}`,
			"notifications/message from the server: params: JSON-RPC message with more than 1000 JSON values",
			AnswerLimits{JSONValues: 1000}},
		{"sampling messages", `{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{"maxTokens":1,"messages":[` + msg + "," + msg + "," + msg + `]}}`,
			"sampling/createMessage from the server: params: sampling/createMessage with more than 2 messages",
			AnswerLimits{Messages: 2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newStdioRig(t, Config{Limits: LimitsConfig{AnswerLimits: c.limits}}, "-garbage-at-start", c.line)
			r.sup.Start()
			r.ready()
			e := r.waitEvent(events.KindStdoutLineDropped, "1 dropped in all")
			require.Equal(t, "too-many-values", e.Why)
			require.Empty(t, e.Detail)
			require.Contains(t, r.logs.String(), c.detail, "the problem is logged")
			res, err := r.call("echo", map[string]any{"text": "after"})
			require.NoError(t, err)
			require.False(t, res.IsError)
		})
	}
}

// TestStderrSecretIsMaskedInTheExitError: stdio.Command.Env's values are
// masked "in every text the supervisor hands out" (stdio.Command.Env's doc),
// and the stderr tail is such a text: a server that prints its credential
// on stderr and then dies hands the host a *stdio.ProcessExitError whose Stderr,
// whose Error() and whose call's Error() hold no piece of it, nor do the
// events.
func TestStderrSecretIsMaskedInTheExitError(t *testing.T) {
	const token = "Hq3vX9pL2mR7tK5wN8cB4dF6" // no credential word near it: only the registration masks it
	rec := &events.Recorder{}
	s, err := New(Config{
		Name: "srv",
		Command: &stdio.Command{Path: "/bin/sh", Args: []string{"-c", `echo "loaded $UPSTREAM_CRED" >&2; exec "$0"`, testServer(t)},
			Env: []string{"UPSTREAM_CRED=" + token}, StopGrace: 5 * time.Second, KillGrace: 5 * time.Second},
		Observe: ObserveConfig{
			Events: rec,
			Logger: slog.New(slog.DiscardHandler),
		},
	})
	require.NoError(t, err)
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), stdioTimeout)
	defer cancel()
	s.Start()
	require.NoError(t, s.WaitForState(ctx, Ready))
	_, err = s.CallTool(ctx, &mcp.CallToolParams{Name: "crash", Arguments: map[string]any{"code": 2}})
	var exit *stdio.ProcessExitError
	require.ErrorAs(t, err, &exit)
	require.Contains(t, exit.Stderr, "loaded "+events.Masked, "the line is kept, its secret masked")
	FlushEvents(s)
	texts := []string{exit.Stderr, exit.Error(), err.Error()}
	for _, e := range rec.Events() {
		b, err := e.MarshalJSON()
		require.NoError(t, err)
		texts = append(texts, string(b))
	}
	for _, text := range texts {
		assert.NotContains(t, text, token[:minPiece])
		assert.NotContains(t, text, token[len(token)-minPiece:])
	}
}
