//go:build unix

package stdio

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"weak"

	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/internal/stdiotest"
	"github.com/mcpsup/mcpsup/msgcheck"
	"github.com/mcpsup/mcpsup/session"
)

// facts collects what a session reports through Spec.Observe.
type facts struct {
	mu   sync.Mutex
	all  []session.Fact
	more chan struct{} // a token per fact
}

func newFacts() *facts { return &facts{more: make(chan struct{}, 1<<16)} }

func (f *facts) observe(x session.Fact) {
	f.mu.Lock()
	f.all = append(f.all, x)
	f.mu.Unlock()
	f.more <- struct{}{}
}

func (f *facts) list() []session.Fact {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]session.Fact(nil), f.all...)
}

// waitFor waits for the first fact ok accepts.
func (f *facts) waitFor(ctx context.Context, t *testing.T, ok func(session.Fact) bool) session.Fact {
	t.Helper()
	for seen := 0; ; {
		for _, x := range f.list()[seen:] {
			if ok(x) {
				return x
			}
			seen++
		}
		select {
		case <-f.more:
		case <-ctx.Done():
			t.Fatalf("no such fact among %v", f.list())
		}
	}
}

// exits returns the ProcessExited facts.
func (f *facts) exits() []session.ProcessExited {
	var out []session.ProcessExited
	for _, x := range f.list() {
		if e, ok := x.(session.ProcessExited); ok {
			out = append(out, e)
		}
	}
	return out
}

// dial starts the test server with args on a dialer of o (its Command's
// Path set) and fails the test unless the handshake succeeds; the session
// is closed at the test's end.
func dial(t *testing.T, o Options, args ...string) (session.Session, *facts, context.Context) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	o.Command.Path, o.Command.Args = stdiotest.Server(t), args
	if o.Command.StopGrace == 0 {
		o.Command.StopGrace, o.Command.KillGrace = 50*time.Millisecond, 50*time.Millisecond
	}
	f := newFacts()
	s, err := NewDialer(o).Dial(ctx, session.Spec{Generation: 1, Observe: f.observe})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s, f, ctx
}

func ended(t *testing.T, ctx context.Context, s session.Session) error {
	t.Helper()
	select {
	case <-s.Done():
	case <-ctx.Done():
		t.Fatal("the session did not end")
	}
	st, next := s.Status()
	assert.Equal(t, session.Ended, st)
	assert.Nil(t, next, "Ended is final: no change to wait for")
	return s.Err()
}

// TestSessionEndsWithTheProcessExit: "The server MAY initiate shutdown by
// closing its output stream to the client and exiting" (MCP 2025-11-25
// basic/lifecycle, Shutdown, stdio): the exit ends the session by itself,
// once, with the *ProcessExitError (class transport: the session died), and
// is reported once as a ProcessExited fact. Until then the session is Live.
func TestSessionEndsWithTheProcessExit(t *testing.T) {
	s, f, ctx := dial(t, Options{})
	st, next := s.Status()
	require.Equal(t, session.Live, st)
	require.Nil(t, s.Err())
	assert.Empty(t, s.Info().ID, "no session id on stdio")
	assert.NotEmpty(t, s.Info().ProtocolVersion)

	_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "crash", Arguments: map[string]any{"code": 3}})
	require.Error(t, err)
	select {
	case <-next: // the status changed
	default:
		t.Fatal("the call that saw the exit returned before Done was closed")
	}
	err = ended(t, ctx, s)
	var exit *ProcessExitError
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, 3, exit.Code)
	assert.Equal(t, StopNone, exit.Stop, "it exited by itself")
	assert.Equal(t, classify.Transport, classify.Error(err).Class)
	exits := f.exits()
	require.Len(t, exits, 1, "Done is closed once the process has exited")
	assert.Same(t, exit, exits[0].Err)

	require.NoError(t, s.Close(), "Close after the end")
	assert.Same(t, exit, s.Err(), "the first cause stays")
}

// TestSessionCloseEndsWithErrClosed: Close ends the session with
// session.ErrClosed, whatever the stopped process's exit says, and returns
// once it has exited, stopped as the specification says: "First, closing
// the input stream to the child process" (MCP 2025-11-25 basic/lifecycle,
// Shutdown, stdio). Detach is Close; both are idempotent.
func TestSessionCloseEndsWithErrClosed(t *testing.T) {
	s, f, ctx := dial(t, Options{})
	require.NoError(t, s.Close())
	require.ErrorIs(t, ended(t, ctx, s), session.ErrClosed)
	exits := f.exits()
	require.Len(t, exits, 1, "the process has exited when Close returns")
	var exit *ProcessExitError
	require.ErrorAs(t, exits[0].Err, &exit)
	assert.Equal(t, StopStdin, exit.Stop)
	require.NoError(t, s.Detach())
	require.NoError(t, s.Close())
	assert.ErrorIs(t, s.Err(), session.ErrClosed)
}

// TestSessionCauseFirstWins: the end's cause is the first of what ended
// the session. A process that exited by itself before any stop ended it,
// even when Close came before the end was told; a process stopped by
// Close ended with ErrClosed; one stopped because go-sdk's session ended
// (a write refused) ends with go-sdk's error, or with the exit when go-sdk
// has none.
func TestSessionCauseFirstWins(t *testing.T) {
	sdkErr := errors.New("go-sdk: connection closed: write refused")
	exit := func(stop StopStep) *ProcessExitError { return &ProcessExitError{Path: "srv", Code: 1, Stop: stop} }
	byItself, stdin, killed := exit(StopNone), exit(StopStdin), exit(StopKill)
	cases := []struct {
		name    string
		exit    *ProcessExitError
		closing bool
		sdkErr  error
		want    error
	}{
		{"exited by itself, then closed", byItself, true, sdkErr, byItself},
		{"exited by itself", byItself, false, sdkErr, byItself},
		{"stopped by Close", stdin, true, sdkErr, session.ErrClosed},
		{"stopped after go-sdk's end", killed, false, sdkErr, sdkErr},
		{"stopped, go-sdk ended without an error", killed, false, nil, killed},
		{"no process", nil, false, nil, mcp.ErrConnectionClosed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := &stdioSession{}
			s.closing.Store(c.closing)
			assert.Equal(t, c.want, s.cause(c.exit, c.sdkErr))
		})
	}
}

// doneSpy is a context that tells reached when something waits on it.
type doneSpy struct {
	context.Context
	once    sync.Once
	reached chan struct{}
}

func (c *doneSpy) Done() <-chan struct{} {
	c.once.Do(func() { close(c.reached) })
	return c.Context.Done()
}

// TestRequestThatSawTheEndReturnsAfterDone: session.Session promises that
// Done is closed before any call that saw the cause returns. A request
// that failed because the connection ended (mcp.ErrConnectionClosed, which
// a *ProcessExitError wraps) waits for the session's end; any other
// error, and a handshake's request, returns at once.
func TestRequestThatSawTheEndReturnsAfterDone(t *testing.T) {
	exit := &ProcessExitError{Path: "srv", Code: 1}
	failing := func(err error) mcp.MethodHandler {
		return func(context.Context, string, mcp.Request) (mcp.Result, error) { return nil, err }
	}
	s := &stdioSession{}
	s.started.Store(true)
	ctx := &doneSpy{Context: context.Background(), reached: make(chan struct{})}
	out := make(chan error, 1)
	go func() {
		_, err := s.facts(failing(exit))(ctx, "tools/call", nil)
		out <- err
	}()
	select {
	case <-ctx.reached:
	case err := <-out:
		t.Fatalf("returned before the session ended: %v", err)
	}
	s.Fail(exit)
	err := <-out
	require.ErrorIs(t, err, exit)
	var ws *classify.WrittenError
	assert.False(t, errors.As(err, &ws), "never written")

	// Returning at once: nothing waits on the (ended) context.
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		name    string
		started bool
		err     error
	}{{"the handshake's request", false, exit}, {"another error", true, errors.New("tool failed")}} {
		s := &stdioSession{}
		s.started.Store(c.started)
		ctx := &doneSpy{Context: ended, reached: make(chan struct{})}
		_, err := s.facts(failing(c.err))(ctx, "tools/call", nil)
		require.ErrorIs(t, err, c.err)
		select {
		case <-ctx.reached:
			t.Errorf("%s waited for the session's end", c.name)
		default:
		}
	}
}

// TestSessionEndsWhenTheKeepaliveFindsItDead: a server that stops (SIGSTOP)
// answers no ping; two pings in a row cut by the interval (session.Verify's
// keepalive), on the fake clock, end the session with the keepalive's error,
// and its release stops the process.
func TestSessionEndsWhenTheKeepaliveFindsItDead(t *testing.T) {
	requireProcFS(t)
	clock := clockwork.NewFakeClock()
	dialed, f, ctx := dial(t, Options{})
	s := session.Verify(dialed.(session.Endable), session.VerifyConfig{KeepAlive: time.Second, Clock: clock})
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "pid"})
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.Fields(res.Content[0].(*mcp.TextContent).Text)[0])
	require.NoError(t, err)
	go func() { _, _ = s.CallTool(ctx, &mcp.CallToolParams{Name: "freeze"}) }()
	for procStateOf(pid) != 'T' {
		select {
		case <-ctx.Done():
			t.Fatal("the server did not stop")
		default:
			runtime.Gosched()
		}
	}
	require.NoError(t, clock.BlockUntilContext(ctx, 1)) // the ticker
	clock.Advance(time.Second)                          // the first ping goes out
	require.NoError(t, clock.BlockUntilContext(ctx, 2)) // its bound beside the ticker
	clock.Advance(time.Second)                          // it is cut, and the next one goes out
	require.NoError(t, clock.BlockUntilContext(ctx, 2))
	clock.Advance(time.Second) // the second in a row is cut: dead
	err = ended(t, ctx, s)
	require.NoError(t, s.Detach()) // as the supervisor releases a session that ended by itself
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "keepalive")
	var exit *ProcessExitError
	assert.False(t, errors.As(err, &exit), "the keepalive's cause, not the exit it brought")
	exits := f.exits()
	require.Len(t, exits, 1)
	require.ErrorAs(t, exits[0].Err, &exit)
	assert.Equal(t, StopKill, exit.Stop, "a stopped process ends by SIGKILL")
}

// TestFactsReachObserve: "The server MUST NOT write anything to its stdout
// that is not a valid MCP message" (MCP 2025-11-25 basic/transports,
// stdio): a line that is not one is dropped and reported as a LineDropped
// fact, counted, and the session lives; a response to a request of the
// server's past Options.MaxResponses is dropped and reported as a
// ResponseDropped fact naming the bound.
func TestFactsReachObserve(t *testing.T) {
	s, f, ctx := dial(t, Options{MaxResponses: 2}, "-garbage-at-start", "hello from a log line")
	x := f.waitFor(ctx, t, func(x session.Fact) bool { _, ok := x.(session.LineDropped); return ok })
	assert.Equal(t, session.LineDropped{Count: 1, Why: session.DropNotJSONRPC}, x)

	_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "deafflood", Arguments: map[string]any{"n": 3000}})
	require.NoError(t, err)
	x = f.waitFor(ctx, t, func(x session.Fact) bool { _, ok := x.(session.ResponseDropped); return ok })
	assert.Equal(t, session.ResponseDropped{Count: 1, Bound: 2}, x)
	st, _ := s.Status()
	assert.Equal(t, session.Live, st, "drops do not end the session")
}

// TestFailedHandshakeStopsTheProcess: a process that exits during the
// handshake fails the Dial with its *ProcessExitError (the news, beside
// go-sdk's error); one whose handshake is given up (its context ended) is
// stopped (stdin closed, then SIGTERM after StopGrace). Either way the
// exit is reported once, and nothing is left running.
func TestFailedHandshakeStopsTheProcess(t *testing.T) {
	quick := Command{Path: "/bin/sh", StopGrace: 50 * time.Millisecond, KillGrace: 50 * time.Millisecond}
	cases := []struct {
		name     string
		script   string
		canceled bool
		code     int
		stop     StopStep
	}{
		{"exits during the handshake", "exit 4", false, 4, StopNone},
		{"given up, SIGTERM ignored", "trap '' TERM; exec sleep 60", true, -1, StopKill},
		{"given up, ended by SIGTERM", "exec sleep 60", true, -1, StopTerm},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			if c.canceled {
				cancel()
			}
			defer cancel()
			cmd := quick
			cmd.Args = []string{"-c", c.script}
			f := newFacts()
			_, err := NewDialer(Options{Command: cmd}).Dial(ctx, session.Spec{Observe: f.observe})
			require.Error(t, err)
			if c.canceled {
				require.ErrorIs(t, err, context.Canceled)
			} else {
				var exit *ProcessExitError
				require.ErrorAs(t, err, &exit)
				assert.Equal(t, c.code, exit.Code)
			}
			exits := f.exits()
			require.Len(t, exits, 1)
			var exit *ProcessExitError
			require.ErrorAs(t, exits[0].Err, &exit)
			assert.Equal(t, c.stop, exit.Stop)
			assert.Equal(t, c.code, exit.Code)
		})
	}
}

// TestAttachHasNothingToResume: a process cannot be re-attached.
func TestAttachHasNothingToResume(t *testing.T) {
	_, err := NewDialer(Options{Command: Command{Path: "x"}}).Attach(context.Background(), session.Spec{})
	require.ErrorIs(t, err, session.ErrNoResume)
}

func requireProcFS(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
}

// procStateOf returns the state letter of /proc/<pid>/stat, 0 when there
// is no such process.
func procStateOf(pid int) byte {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 || i+2 >= len(b) {
		return 0
	}
	return b[i+2]
}

// setsidChild dials the test server with a child in a session of its own
// (setsid) that holds the server's stdout and stderr, and returns the
// child's pid; the child is killed (and reaped, where the test binary is
// its subreaper) at the test's end.
func setsidChild(t *testing.T) (session.Session, *facts, context.Context, int) {
	t.Helper()
	s, f, ctx := dial(t, Options{}, "-setsid-child")
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "pid"})
	require.NoError(t, err)
	child, err := strconv.Atoi(strings.Fields(res.Content[0].(*mcp.TextContent).Text)[2])
	require.NoError(t, err)
	require.Positive(t, child)
	t.Cleanup(func() {
		_ = syscall.Kill(child, syscall.SIGKILL)
		if stdiotest.Subreaper() {
			var ws syscall.WaitStatus
			_, _ = syscall.Wait4(child, &ws, 0, nil)
		}
	})
	return s, f, ctx, child
}

// TestExitWithAChildHoldingTheOutputEndsTheSession: a server whose child
// left its process group (setsid) and holds its stdout and stderr exits in
// the middle of a call. The pipes never end while the child lives, so what
// is left in them is read within one drain deadline for both: the exit is
// reported (ProcessExited), the call in flight fails as the session died
// (class transport), and the session ends with the exit.
func TestExitWithAChildHoldingTheOutputEndsTheSession(t *testing.T) {
	s, f, ctx, _ := setsidChild(t)
	_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "crash", Arguments: map[string]any{"code": 3}})
	require.Error(t, err)
	require.NoError(t, ctx.Err(), "the call failed by the exit, not by the test's deadline")
	assert.Equal(t, classify.Transport, classify.Error(err).Class)
	var exit *ProcessExitError
	require.ErrorAs(t, ended(t, ctx, s), &exit)
	assert.Equal(t, 3, exit.Code)
	exits := f.exits()
	require.Len(t, exits, 1)
	assert.Same(t, exit, exits[0].Err)
}

// TestCloseReturnsWithAChildHoldingTheOutput: Close returns once the
// server has exited even while a child that left its group (setsid) holds
// its stdout and stderr open; the exit is reported once.
func TestCloseReturnsWithAChildHoldingTheOutput(t *testing.T) {
	s, f, ctx, _ := setsidChild(t)
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case err := <-closed:
		require.NoError(t, err)
	case <-ctx.Done():
		t.Fatal("Close did not return")
	}
	require.ErrorIs(t, s.Err(), session.ErrClosed)
	require.Len(t, f.exits(), 1)
}

// TestRefusedAnswerFailsItsCallAsProtocol: an answer the transport refuses
// before go-sdk decodes it fails its call at once, alone, class protocol
// with its outcome unknown (the server ran it), as the HTTP transport fails
// one (DESIGN.md section 3: protocol for an answer over a decode bound):
// a result over a msgcheck bound, and a stdout line dropped whose start
// names the call's id, nested deeper than go-sdk decodes or longer than
// Command.MaxLineBytes ("The server MUST NOT write anything to its stdout
// that is not a valid MCP message", MCP 2025-11-25 basic/transports,
// stdio). The session lives.
func TestRefusedAnswerFailsItsCallAsProtocol(t *testing.T) {
	cases := []struct {
		name    string
		o       Options
		tool    string
		args    map[string]any
		problem string
	}{
		{"over a msgcheck bound", Options{Limits: msgcheck.Limits{ContentBlocks: 5}}, "blocks", map[string]any{"n": 6}, "more than 5 content blocks"},
		{"nested deeper than go-sdk decodes", Options{}, "deep", map[string]any{"levels": 1500}, "not one JSON-RPC message"},
		{"over the line bound", Options{Command: Command{MaxLineBytes: 64 << 10}}, "padded", map[string]any{"bytes": 128 << 10}, "a line longer than 65536 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, _, ctx := dial(t, c.o)
			_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
			require.Error(t, err)
			require.NoError(t, ctx.Err(), "the call failed at once, not at the test's deadline")
			require.ErrorIs(t, err, classify.ErrProtocol)
			var refused *AnswerRefusedError
			require.ErrorAs(t, err, &refused)
			assert.Equal(t, "tools/call", refused.Method)
			assert.Contains(t, refused.Problem, c.problem)
			v := classify.Error(err)
			assert.Equal(t, classify.Protocol, v.Class)
			assert.Equal(t, classify.DeliveryOutcomeUnknown, classify.DeliveryOf(err, v))

			res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "still here"}})
			require.NoError(t, err, "the session lives")
			assert.Equal(t, "still here", res.Content[0].(*mcp.TextContent).Text)
		})
	}
}

// go-sdk keeps the context Connect got for the session's life (its
// reader's root, mcp/transport.go connect): Dial lets go of the caller's
// once the handshake returned, as httpsession.Open does, so a live
// process's session holds neither a dial's context nor what that carries,
// and its server requests' handlers do not see the dial's values.
func TestDialLetsGoOfTheCallersContext(t *testing.T) {
	type key struct{}
	carried := new([256]byte)
	held := weak.Make(carried)
	ctx, cancel := context.WithTimeout(context.WithValue(context.Background(), key{}, carried), time.Minute)
	o := Options{Command: Command{Path: stdiotest.Server(t), StopGrace: 50 * time.Millisecond, KillGrace: 50 * time.Millisecond}}
	s, err := NewDialer(o).Dial(ctx, session.Spec{Generation: 1})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	cancel()
	ctx, carried = nil, nil
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "live"}})
	require.NoError(t, err, "the session serves calls after the dial's context ended")
	assert.Equal(t, "live", res.Content[0].(*mcp.TextContent).Text)
	runtime.GC()
	runtime.GC()
	require.True(t, held.Value() == nil, "the caller's context is still reachable from the session")
}
