package supervisor_test

import (
	"context"
	"errors"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/supervisor"
)

// e2eTimeout bounds every wait on a real server.
const e2eTimeout = 20 * time.Second

type e2e struct {
	t   *testing.T
	srv *mcptest.Server
	rec *events.Recorder
	sup *supervisor.Supervisor
	ctx context.Context
}

func newE2E(t *testing.T, opts mcptest.Options, cfg supervisor.Config) *e2e {
	t.Helper()
	srv, err := mcptest.NewServer(opts)
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	t.Cleanup(cancel)
	rec := &events.Recorder{}
	cfg.Endpoint = srv.URL()
	cfg.HTTP.HTTPClient = srv.HTTPClient()
	cfg.Observe.Events = rec
	cfg.Name = t.Name()
	sup := mustNew(t, cfg)
	t.Cleanup(func() {
		if t.Failed() && os.Getenv("MCPSUP_STACKS_ON_FAILURE") != "" {
			for _, ev := range rec.Events() {
				t.Logf("event %s %s->%s %s %s %s", ev.Kind, ev.From, ev.To, ev.Trigger, ev.Verdict, ev.Detail)
			}
			for _, en := range srv.Log().Entries() {
				t.Logf("wire %+v", en)
			}
		}
	})
	return &e2e{t: t, srv: srv, rec: rec, ctx: ctx, sup: sup}
}

func mustNew(t *testing.T, cfg supervisor.Config) *supervisor.Supervisor {
	t.Helper()
	sup, err := supervisor.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = sup.Close() })
	t.Cleanup(func() { stacksOnFailure(t) }) // runs first: the supervisor still runs
	return sup
}

// stacksOnFailure logs every goroutine's stack when t failed and
// MCPSUP_STACKS_ON_FAILURE is set: a wait that timed out under load (go
// test -count=20 with both cores busy) then shows what was waiting.
func stacksOnFailure(t *testing.T) {
	if !t.Failed() || os.Getenv("MCPSUP_STACKS_ON_FAILURE") == "" {
		return
	}
	buf := make([]byte, 4<<20)
	t.Logf("goroutines at the failure:\n%s", buf[:runtime.Stack(buf, true)])
}

func (e *e2e) start() {
	e.t.Helper()
	e.sup.Start()
	require.NoError(e.t, e.sup.WaitForState(e.ctx, supervisor.Ready), "state %s", e.sup.State())
	settle(e.t, e.ctx, e.sup, e.rec, supervisor.Ready)
}

// settle waits, once a supervisor reached state, for the event announcing
// it, and then for every event of what the supervisor took before to reach
// rec: a transition to state recorded earlier does not end the wait for
// events that came after it.
func settle(t *testing.T, ctx context.Context, sup *supervisor.Supervisor, rec *events.Recorder, state supervisor.State) {
	t.Helper()
	supervisor.FlushEvents(sup)
	_, err := rec.WaitFor(ctx, func(evs []events.Event) bool {
		for i := len(evs) - 1; i >= 0; i-- {
			if evs[i].Kind == events.KindTransition {
				return evs[i].To == state
			}
		}
		return false
	})
	require.NoError(t, err, "no event announced %s", state)
}

func (e *e2e) call(id string) error {
	_, err := e.sup.CallTool(e.ctx, callRecord(id))
	return err
}

func callRecord(id string) *mcp.CallToolParams {
	return &mcp.CallToolParams{Name: mcptest.RecordTool, Arguments: mcptest.IDArgs{ID: id}}
}

func TestE2EConnectCallClose(t *testing.T) {
	e := newE2E(t, mcptest.Options{Tools: 3}, supervisor.Config{})
	e.start()
	require.ElementsMatch(t, e.srv.ToolNames(), e.sup.Catalog().ToolNames())
	require.NoError(t, e.call("a"))
	require.Equal(t, 1, e.srv.Invocations(mcptest.RecordTool, "a"))
	require.NoError(t, e.sup.Close())
	require.Equal(t, supervisor.Closed, e.sup.State())
	require.Equal(t, 1, e.srv.Log().CountVerb("DELETE"), "Close ends the server-side session")
}

// S4: every HTTP error other than 404 and "no status" leaves the session.
func TestE2EToolCallErrorsKeepTheSession(t *testing.T) {
	cases := []struct {
		name   string
		rule   mcptest.Rule
		class  classify.Class
		status int
	}{
		{"500", mcptest.ToolCallServerError(), classify.ServerError, 500},
		{"429", mcptest.ToolCallRateLimited(30 * time.Second), classify.RateLimited, 429},
		{"403 HTML", mcptest.ToolCallForbiddenHTML(), classify.Forbidden, 403},
		{"400 plain text", mcptest.Rule{Match: mcptest.Match{Verb: "POST", Method: "tools/call"}, Action: mcptest.PlainText(400, "bad request")}, classify.Application, 400},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newE2E(t, mcptest.Options{Tools: 1}, supervisor.Config{Limits: supervisor.LimitsConfig{DisableRateLimitWindow: true}})
			e.start()
			gen := e.sup.Generation()
			rule := tc.rule
			rule.Match.Occurrence = mcptest.First()
			e.srv.Gateway().Add(rule)
			initBefore := e.srv.Log().Count("initialize")

			err := e.call("x")
			var ce *supervisor.CallError
			require.ErrorAs(t, err, &ce)
			require.Equal(t, tc.class, ce.Verdict.Class, "verdict %s", ce.Verdict)
			require.Equal(t, tc.status, ce.Verdict.HTTPStatus)
			require.Equal(t, supervisor.Answered, ce.Delivery)

			require.NoError(t, e.call("y"), "the session survives")
			require.Equal(t, supervisor.Ready, e.sup.State())
			require.Equal(t, gen, e.sup.Generation())
			require.Equal(t, initBefore, e.srv.Log().Count("initialize"), "no new handshake")
			require.Equal(t, 0, e.srv.Invocations(mcptest.RecordTool, "x"), "the failed call never reached the tool")
			require.Equal(t, 1, e.srv.Invocations(mcptest.RecordTool, "y"))
		})
	}
}

// S4: a 404 (session expired) costs exactly one new session; the failed
// call is not replayed.
func TestE2ESessionExpiredReconnectsOnce(t *testing.T) {
	e := newE2E(t, mcptest.Options{Tools: 1}, supervisor.Config{})
	e.start()
	gen := e.sup.Generation()
	require.Equal(t, 1, e.srv.ExpireAll())

	err := e.call("x")
	var ce *supervisor.CallError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, classify.SessionExpired, ce.Verdict.Class, "verdict %s", ce.Verdict)

	// The session ended before the call returned: the next call, made at
	// once, waits for the new session and goes out on it alone.
	require.NoError(t, e.call("y"), "the next call waits for the new session")
	require.Equal(t, gen+1, e.sup.Generation())
	require.Equal(t, 0, e.srv.Invocations(mcptest.RecordTool, "x"))
	require.Equal(t, 1, e.srv.Invocations(mcptest.RecordTool, "y"))
	require.Equal(t, 2, e.srv.Log().Count("initialize"))
	var bySession []string // the session of each tools/call, in order
	for _, en := range e.srv.Log().Entries() {
		if en.Method == "tools/call" {
			bySession = append(bySession, en.SessionID)
		}
	}
	require.Len(t, bySession, 2, "x on the old session, y on the new one, nothing else")
	require.NotEqual(t, bySession[0], bySession[1])
}

func TestE2ECallInTerminalFailedFailsAtOnce(t *testing.T) {
	e := newE2E(t, mcptest.Options{Tools: 1}, supervisor.Config{})
	e.srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Verb: "POST"}, Action: mcptest.PlainText(401, "no")})
	e.sup.Start()
	require.NoError(t, e.sup.WaitForState(e.ctx, supervisor.Failed))
	settle(t, e.ctx, e.sup, e.rec, supervisor.Failed)
	reason, _ := e.sup.Failure()
	require.Equal(t, supervisor.ReasonUnauthorized, reason)
	err := e.call("x")
	require.ErrorIs(t, err, supervisor.ErrNotReady)
	var se *supervisor.StateError
	require.ErrorAs(t, err, &se)
	require.Equal(t, supervisor.ReasonUnauthorized, se.Reason)
	_ = errors.New
}

// A 401 on a call (a credential that expired) costs that call only: the
// session, which the server still knows, is kept for the host's refreshed
// credential; nothing is deleted, no handshake is tried.
func TestE2EUnauthorizedCallKeepsTheSession(t *testing.T) {
	e := newE2E(t, mcptest.Options{Tools: 1}, supervisor.Config{Stream: supervisor.StreamConfig{Policy: supervisor.StreamOff}})
	e.start()
	rule := mcptest.Rule{Match: mcptest.Match{Verb: "POST", Method: "tools/call", Occurrence: mcptest.First()},
		Action: mcptest.PlainText(401, "token expired")}
	e.srv.Gateway().Add(rule)

	err := e.call("x")
	var ce *supervisor.CallError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, classify.Unauthorized, ce.Verdict.Class)
	require.Equal(t, 401, ce.Verdict.HTTPStatus)
	require.Equal(t, supervisor.Ready, e.sup.State())
	require.NoError(t, e.call("y"), "the refreshed credential serves the same session")
	require.Equal(t, uint64(1), e.sup.Generation())
	require.Equal(t, 1, e.srv.Log().Count("initialize"))
	require.Zero(t, e.srv.Log().CountVerb("DELETE"))
}

// A call that Close ends is canceled, whatever the wire saw: classify is
// told with the context Close ended, and no verdict is patched afterwards.
// A call whose caller gave no deadline runs on the supervisor's call clock
// alone (Config.Limits.CallTimeout), which is also what Close ends it with: it is
// canceled too, not left to its timeout.
func TestE2ECloseCancelsACallInFlight(t *testing.T) {
	for _, c := range []struct {
		name     string
		deadline bool
	}{{"caller deadline", true}, {"no caller deadline", false}} {
		t.Run(c.name, func(t *testing.T) {
			e := newE2E(t, mcptest.Options{}, supervisor.Config{Limits: supervisor.LimitsConfig{CallTimeout: time.Hour}})
			e.start()
			ctx := context.Background()
			if c.deadline {
				ctx = e.ctx
			}
			errc := make(chan error, 1)
			go func() {
				_, err := e.sup.CallTool(ctx, &mcp.CallToolParams{Name: mcptest.BlockTool, Arguments: mcptest.IDArgs{ID: "c"}})
				errc <- err
			}()
			require.Eventually(t, func() bool { return e.srv.Invocations(mcptest.BlockTool, "c") == 1 },
				e2eTimeout, time.Millisecond, "the call reached the server")
			require.NoError(t, e.sup.Close())
			err := <-errc
			var ce *supervisor.CallError
			require.ErrorAs(t, err, &ce)
			require.Equal(t, classify.Canceled, ce.Verdict.Class, "%v", err)
			require.ErrorIs(t, err, supervisor.ErrClosed)
		})
	}
}
