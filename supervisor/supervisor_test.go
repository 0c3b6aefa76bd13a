//lint:file-ignore SA1019 logging/setLevel is deprecated from protocol 2026-07-28 on, and still served by 2025-era servers

package supervisor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/httpsession"
	"github.com/mcpsup/mcpsup/probes"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(mainWithServer{m}) }

var errRefused = &classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", Method: "initialize"}, Err: syscall.ECONNREFUSED}

func TestStartDialsAndPublishesTheCatalog(t *testing.T) {
	r := newRig(t, Config{})
	sess := newFakeSession("s1", "a", "b")
	r.ready(sess)

	require.Equal(t, uint64(1), r.sup.Generation())
	cat := r.sup.Catalog()
	require.Equal(t, []string{"a", "b"}, cat.ToolNames())
	require.Equal(t, uint64(1), cat.Generation)
	require.False(t, cat.Stale)
	require.Equal(t, []string{
		"idle -started-> connecting",
		"connecting -handshake-succeeded-> connecting",
		"connecting -discovery-succeeded-> ready",
	}, r.transitions())
	changed := r.eventsOf(events.KindCatalogChanged)
	require.Len(t, changed, 1)
	require.Equal(t, []string{"a", "b"}, changed[0].Added)

	rs := r.sup.ResumeState()
	require.NotNil(t, rs)
	require.Equal(t, "s1", rs.SessionID)
	require.Equal(t, "2025-11-25", rs.ProtocolVersion)

	res, err := r.sup.CallTool(r.ctx, &mcp.CallToolParams{Name: "a"})
	require.NoError(t, err)
	require.NotNil(t, res)
	require.Equal(t, []string{"a"}, sess.toolCalls())

	require.NoError(t, r.sup.Close())
	closed, detached := sess.counts()
	require.Equal(t, 1, closed, "Close ends the server-side session")
	require.Zero(t, detached)
	require.Equal(t, Closed, r.sup.State())
}

func TestEventsAreNumberedWithoutGaps(t *testing.T) {
	r := newRig(t, Config{})
	r.ready(newFakeSession("s1", "a"))
	require.NoError(t, r.sup.Close())
	for i, e := range r.events() {
		require.Equal(t, uint64(i+1), e.Seq)
		require.Equal(t, "fake", e.Server)
	}
}

func TestHandshakeFailureRetriesOnTheBackoffSchedule(t *testing.T) {
	r := newRig(t, Config{})
	r.sup.Start()
	r.next().fail(errRefused)
	retries := r.waitEvents(events.KindRetryScheduled, 1)
	require.Len(t, retries, 1)
	require.Equal(t, 500*time.Millisecond, retries[0].Delay, "Backoff.InitialInterval without jitter")
	require.Equal(t, classify.Transport, retries[0].Verdict.Class)

	require.NoError(t, r.clock.BlockUntilContext(r.ctx, 1))
	r.clock.Advance(500 * time.Millisecond)
	req := r.next()
	require.Equal(t, uint64(2), req.spec.gen)
	req.ok(newFakeSession("s2", "a"))
	r.wait(Ready)
	require.Equal(t, uint64(2), r.sup.Generation())
}

func TestRetryBudgetEndsInTerminalFailed(t *testing.T) {
	r := newRig(t, Config{Recovery: RecoveryConfig{Backoff: Backoff{MaxAttempts: 2}}})
	r.sup.Start()
	r.next().fail(errRefused)
	for i := 0; i < 2; i++ {
		require.NoError(t, r.clock.BlockUntilContext(r.ctx, 1))
		r.clock.Advance(time.Minute)
		r.next().fail(errRefused)
	}
	r.waitReason(ReasonBudgetSpent)

	_, err := r.sup.CallTool(r.ctx, &mcp.CallToolParams{Name: "a"})
	require.ErrorIs(t, err, ErrNotReady, "a terminal failed state refuses calls at once")
	var se *StateError
	require.ErrorAs(t, err, &se)
	require.Equal(t, ReasonBudgetSpent, se.Reason)

	r.sup.Reconnect()
	r.next().ok(newFakeSession("s4", "a"))
	r.wait(Ready)
}

func TestUnauthorizedHandshakeIsTerminalUntilReconnect(t *testing.T) {
	r := newRig(t, Config{})
	r.sup.Start()
	r.next().fail(&classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", Method: "initialize", Status: 401}})
	r.wait(Failed)
	reason, v := r.sup.Failure()
	require.Equal(t, ReasonUnauthorized, reason)
	require.Equal(t, classify.Unauthorized, v.Class)
	require.Empty(t, r.eventsOf(events.KindRetryScheduled), "unauthorized never retries")

	r.sup.Reconnect()
	r.next().ok(newFakeSession("s2", "a"))
	r.wait(Ready)
}

func TestCallDuringRecoveryWaitsAndIsSentOnce(t *testing.T) {
	r := newRig(t, Config{})
	r.sup.Start()
	req := r.next() // connecting: the call must wait

	errc := r.callAsync(r.ctx, "a")
	require.NoError(t, r.clock.BlockUntilContext(r.ctx, 1), "the call waits on its MaxCallWait timer")
	sess := newFakeSession("s1", "a")
	req.ok(sess)
	require.NoError(t, <-errc)
	require.Equal(t, []string{"a"}, sess.toolCalls())
}

func TestCallWaitIsBoundedByMaxCallWait(t *testing.T) {
	r := newRig(t, Config{Limits: LimitsConfig{MaxCallWait: 5 * time.Second}})
	r.sup.Start()
	r.next() // never answered

	errc := r.callAsync(context.Background(), "a")
	require.NoError(t, r.clock.BlockUntilContext(r.ctx, 1))
	r.clock.Advance(5 * time.Second)
	err := <-errc
	require.ErrorIs(t, err, ErrWaitTimeout)
	var ce *CallError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, NotSent, ce.Delivery)
}

// Close refuses a call the same way whether it waited for ready or came
// after: canceled, not sent, ErrClosed (as a sent call Close cuts is
// canceled).
func TestCallRefusedByCloseIsCanceled(t *testing.T) {
	r := newRig(t, Config{})
	r.sup.Start()
	r.next() // never answered: the call waits

	errc := r.callAsync(context.Background(), "a")
	require.NoError(t, r.clock.BlockUntilContext(r.ctx, 1), "the call waits on its MaxCallWait timer")
	require.NoError(t, r.sup.Close())
	for _, err := range []error{<-errc, <-r.callAsync(context.Background(), "a")} {
		require.ErrorIs(t, err, ErrClosed)
		var ce *CallError
		require.ErrorAs(t, err, &ce)
		require.Equal(t, classify.Canceled, ce.Verdict.Class)
		require.Equal(t, NotSent, ce.Delivery)
	}
}

// A wait for ready that its caller's context ends while the connection is
// down says why: WaitForState's error and a call's (canceled, not sent)
// wrap a *StateError naming the state and the last failure's verdict, the
// context's error still found by errors.Is.
func TestWaitEndedWhileDownNamesTheLastFailure(t *testing.T) {
	waits := map[string]func(t *testing.T, r *rig, ctx context.Context) error{
		"WaitForState": func(_ *testing.T, r *rig, ctx context.Context) error { return r.sup.WaitForState(ctx, Ready) },
		"CallTool": func(t *testing.T, r *rig, ctx context.Context) error {
			_, err := r.sup.CallTool(ctx, &mcp.CallToolParams{Name: "a"})
			var ce *CallError
			require.ErrorAs(t, err, &ce)
			require.Equal(t, classify.Canceled, ce.Verdict.Class, "the caller gave up")
			require.Equal(t, NotSent, ce.Delivery)
			return err
		},
	}
	for name, wait := range waits {
		t.Run(name, func(t *testing.T) {
			r := newRig(t, Config{})
			r.sup.Start()
			r.next().fail(errRefused)
			r.waitEvents(events.KindRetryScheduled, 1)
			ctx, cancel := context.WithCancel(r.ctx)
			cancel()
			err := wait(t, r, ctx)
			require.ErrorIs(t, err, context.Canceled)
			var se *StateError
			require.ErrorAs(t, err, &se)
			require.Equal(t, Failed, se.State)
			require.Equal(t, classify.Transport, se.Verdict.Class)
			require.Contains(t, err.Error(), "last failure transport")
		})
	}
}

func TestSessionDeathWhileIdleOpensOneNewSession(t *testing.T) {
	r := newRig(t, Config{})
	old := newFakeSession("s1", "a")
	r.ready(old)

	old.die(mcpSessionMissing())
	req := r.next()
	require.False(t, req.attach, "a dead session is replaced by a full handshake")
	require.Equal(t, uint64(2), req.spec.gen)
	req.ok(newFakeSession("s2", "a", "c"))
	r.wait(Ready)
	require.Equal(t, []string{"a", "c"}, r.sup.Catalog().ToolNames())
	require.Equal(t, uint64(2), r.sup.Catalog().Generation)
	r.until("the dead session released", func() bool { _, d := old.counts(); return d == 1 })
	closed, _ := old.counts()
	require.Zero(t, closed, "a session that died by itself is released without DELETE")
	changed := r.eventsOf(events.KindCatalogChanged)
	require.Equal(t, []string{"c"}, changed[len(changed)-1].Added)
}

func TestS4CallFailuresThatDoNotReconnect(t *testing.T) {
	for _, status := range []int{500, 429, 403, 400, 413} {
		t.Run(httpName(status), func(t *testing.T) {
			r := newRig(t, Config{Limits: LimitsConfig{DisableRateLimitWindow: true}})
			sess := newFakeSession("s1", "a")
			r.ready(sess)
			sess.failNextCall(&classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", Method: "tools/call", RequestID: "3", Status: status, SessionIDSent: true, RetryAfter: time.Second}})

			_, err := r.sup.CallTool(r.ctx, &mcp.CallToolParams{Name: "a"})
			var ce *CallError
			require.ErrorAs(t, err, &ce)
			require.Equal(t, status, ce.Verdict.HTTPStatus)
			require.Equal(t, "a", ce.Name)
			require.Equal(t, uint64(1), ce.Generation)
			require.Equal(t, Ready, r.sup.State())
			require.Equal(t, uint64(1), r.sup.Generation())
			select {
			case req := <-r.conn.reqs:
				t.Fatalf("unexpected new session (gen %d)", req.spec.gen)
			default:
			}
			failed := r.eventsOf(events.KindCallFailed)
			require.Len(t, failed, 1)
			require.Equal(t, "tools/call", failed[0].Op)

			_, err = r.sup.CallTool(r.ctx, &mcp.CallToolParams{Name: "a"})
			require.NoError(t, err)
			require.Equal(t, []string{"a", "a"}, sess.toolCalls(), "the failed call was not replayed")
		})
	}
}

func httpName(status int) string { return fmt.Sprintf("HTTP %d", status) }

func TestRateLimitWindowRefusesCallsUntilRetryAfter(t *testing.T) {
	r := newRig(t, Config{})
	sess := newFakeSession("s1", "a")
	r.ready(sess)
	sess.failNextCall(&classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", Method: "tools/call", Status: 429, RetryAfter: 30 * time.Second}})

	_, err := r.sup.CallTool(r.ctx, &mcp.CallToolParams{Name: "a"})
	require.Error(t, err)
	_, err = r.sup.CallTool(r.ctx, &mcp.CallToolParams{Name: "a"})
	require.ErrorIs(t, err, ErrRateLimited)
	var ce *CallError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, NotSent, ce.Delivery)
	require.Equal(t, 30*time.Second, ce.RetryAfter())
	require.Len(t, sess.toolCalls(), 1, "nothing was sent inside the window")
	require.Len(t, r.eventsOf(events.KindRateLimitWindow), 1)

	r.clock.Advance(30 * time.Second)
	_, err = r.sup.CallTool(r.ctx, &mcp.CallToolParams{Name: "a"})
	require.NoError(t, err)
}

func TestUnknownToolFailsLocally(t *testing.T) {
	r := newRig(t, Config{})
	sess := newFakeSession("s1", "a")
	r.ready(sess)
	_, err := r.sup.CallTool(r.ctx, &mcp.CallToolParams{Name: "gone"})
	require.ErrorIs(t, err, ErrUnknownTool)
	require.Empty(t, sess.toolCalls())
}

func TestSessionExpiredCallReconnectsOnceAndIsNotReplayed(t *testing.T) {
	r := newRig(t, Config{})
	old := newFakeSession("s1", "a")
	r.ready(old)
	old.failNextCall(&classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", Method: "tools/call", Status: 404, SessionIDSent: true}})

	_, err := r.sup.CallTool(r.ctx, &mcp.CallToolParams{Name: "a"})
	var ce *CallError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, classify.SessionExpired, ce.Verdict.Class)
	// The session ended before the caller saw the error: a call made at
	// once is not sent on it, and goes out on the new session, once.
	next := r.callAsync(r.ctx, "a")

	req := r.next()
	require.Equal(t, uint64(2), req.spec.gen)
	require.Equal(t, []string{"a"}, old.toolCalls(), "nothing more went to the expired session")
	fresh := newFakeSession("s2", "a")
	req.ok(fresh)
	require.NoError(t, <-next)
	require.Equal(t, []string{"a"}, old.toolCalls())
	require.Equal(t, []string{"a"}, fresh.toolCalls(), "the waiting call, once; the failed call is never replayed")
	r.until("the expired session released", func() bool { _, d := old.counts(); return d > 0 })
	closed, detached := old.counts()
	require.Equal(t, 1, detached, "an expired session is released without DELETE")
	require.Zero(t, closed)
}

func TestBlindResumeProbesAndStaleRecoversOnce(t *testing.T) {
	rs := &ResumeState{Version: ResumeStateVersion, ResumeState: httpsession.ResumeState{SessionID: "old", ProtocolVersion: "2025-11-25"}}
	r := newRig(t, Config{Resume: rs})
	r.sup.Start()
	req := r.next()
	require.True(t, req.attach)
	require.Equal(t, "old", req.spec.resume.SessionID)
	stale := newFakeSession("old", "a")
	stale.init = nil // blind
	stale.listErr = &classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", Method: "tools/list", Status: 400, SessionIDSent: true, RPC: classify.RPCError{Present: true, Code: -32000, Message: "Bad Request: No valid session ID provided"}, BodyRPCID: "null"}}
	req.ok(stale)

	req = r.next()
	require.False(t, req.attach, "stale recovery is a full handshake")
	require.Nil(t, r.sup.ResumeState(), "the stale session id was dropped")
	req.ok(newFakeSession("new", "a", "b"))
	r.wait(Ready)
	// The 400 with the null-id -32000 ended the session (session-expired)
	// before the listing returned: the machine hears it from the session.
	require.Contains(t, r.transitions(), "probing -session-died-> stale-recovering")
	require.Equal(t, "new", r.sup.ResumeState().SessionID)
	require.Equal(t, []string{"a", "b"}, r.sup.Catalog().ToolNames())
}

func TestBlindResumeSpeculativeFailureStillReady(t *testing.T) {
	rs := &ResumeState{Version: ResumeStateVersion, ResumeState: httpsession.ResumeState{SessionID: "old", ProtocolVersion: "2025-11-25"}}
	r := newRig(t, Config{Resume: rs})
	r.sup.Start()
	sess := newFakeSession("old", "a", "b")
	sess.init = nil
	sess.sideErr = &classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", Status: 400, RPC: classify.RPCError{Present: true, Code: -32601, HasID: true}, BodyRPCID: "3"}}
	r.next().ok(sess)
	r.wait(Ready)
	require.Equal(t, []string{"a", "b"}, r.sup.Catalog().ToolNames())
	reports := r.eventsOf(events.KindProbeReport)
	require.Len(t, reports, 1)
}

func TestListChangedRelists(t *testing.T) {
	r := newRig(t, Config{})
	r.sup.Start()
	req := r.next()
	sess := newFakeSession("s1", "a")
	req.ok(sess)
	r.wait(Ready)

	sess.addTool("z")
	req.spec.hooks.listChanged(probes.Tools)
	changed := r.waitEvents(events.KindCatalogChanged, 2)
	require.Len(t, r.sup.Catalog().Tools, 2)
	require.Equal(t, []string{"z"}, changed[len(changed)-1].Added)
	require.Equal(t, uint64(1), r.sup.Generation())
}

func TestSubscriptionsAndLoggingLevelAreRestored(t *testing.T) {
	r := newRig(t, Config{})
	old := newFakeSession("s1", "a")
	r.ready(old)
	require.NoError(t, r.sup.Subscribe(r.ctx, &mcp.SubscribeParams{URI: "file:///x"}))
	require.NoError(t, r.sup.SetLoggingLevel(r.ctx, &mcp.SetLoggingLevelParams{Level: "debug"}))

	old.die(errors.New("gone"))
	fresh := newFakeSession("s2", "a")
	r.next().ok(fresh)
	r.wait(Ready)
	r.until("the subscription and the level on the new session", func() bool {
		fresh.mu.Lock()
		defer fresh.mu.Unlock()
		return len(fresh.subs) == 1 && len(fresh.levels) == 1
	})
}

func TestChurnEndsInTerminalFailed(t *testing.T) {
	r := newRig(t, Config{Recovery: RecoveryConfig{MaxSessions: 2, ChurnWindow: time.Hour}})
	r.sup.Start()
	for i := 0; i < 2; i++ {
		s := newFakeSession("s", "a")
		r.next().ok(s)
		r.wait(Ready)
		s.die(errors.New("gone"))
	}
	r.waitReason(ReasonChurn)
}

func TestDetachKeepsTheServerSession(t *testing.T) {
	r := newRig(t, Config{})
	sess := newFakeSession("s1", "a")
	r.ready(sess)
	require.NoError(t, r.sup.Detach())
	closed, detached := sess.counts()
	require.Zero(t, closed)
	require.Equal(t, 1, detached)
	require.Equal(t, "s1", r.sup.ResumeState().SessionID)
}

func TestCloseFromEveryState(t *testing.T) {
	t.Run("idle", func(t *testing.T) {
		r := newRig(t, Config{})
		require.NoError(t, r.sup.Close())
		require.Equal(t, Closed, r.sup.State())
		_, err := r.sup.CallTool(r.ctx, &mcp.CallToolParams{Name: "a"})
		require.ErrorIs(t, err, ErrClosed)
	})
	t.Run("connecting", func(t *testing.T) {
		r := newRig(t, Config{})
		r.sup.Start()
		dial := r.next() // the dial hangs until Close cancels it
		require.NoError(t, r.sup.Close())
		require.Equal(t, Closed, r.sup.State())
		require.ErrorIs(t, dial.ctx.Err(), context.Canceled, "Close ended the dial's context, not its timeout")
	})
	t.Run("failed", func(t *testing.T) {
		r := newRig(t, Config{})
		r.sup.Start()
		r.next().fail(errRefused)
		r.wait(Failed)
		require.NoError(t, r.sup.Close())
	})
	t.Run("ready with a call in flight", func(t *testing.T) {
		r := newRig(t, Config{})
		sess := newFakeSession("s1", "a")
		sess.callHang = true
		r.ready(sess)
		errc := r.callAsync(context.Background(), "a")
		r.until("the call sent", func() bool { return len(sess.toolCalls()) == 1 })
		require.NoError(t, r.sup.Close(), "Close cancels the call and waits for it")
		// The call's answer came back before Close returned; its caller's
		// goroutine hands the error on after, whenever it runs.
		require.Equal(t, 1, sess.toolCallsDone(), "Close returned before the call it canceled")
		select {
		case err := <-errc:
			require.ErrorIs(t, err, ErrClosed)
		case <-r.ctx.Done():
			t.Fatal("the canceled call never returned")
		}
		require.NoError(t, r.sup.Close(), "Close is idempotent")
	})
	t.Run("idle: calls fail at once", func(t *testing.T) {
		r := newRig(t, Config{})
		_, err := r.sup.CallTool(r.ctx, &mcp.CallToolParams{Name: "a"})
		require.ErrorIs(t, err, ErrNotReady)
		var se *StateError
		require.ErrorAs(t, err, &se)
		require.Equal(t, Idle, se.State)
	})
	t.Run("late dial result", func(t *testing.T) {
		r := newRig(t, Config{})
		r.conn.stubborn = true
		r.sup.Start()
		req := r.next()
		done := make(chan struct{})
		go func() { _ = r.sup.Close(); close(done) }()
		r.wait(Closed) // the machine is closed; the handshake completes after
		late := newFakeSession("late", "a")
		req.ok(late)
		<-done
		closed, _ := late.counts()
		require.Equal(t, 1, closed, "a session that arrived too late is ended")
	})
}

func TestRetryAfterLengthensTheRetryWait(t *testing.T) {
	r := newRig(t, Config{Recovery: RecoveryConfig{Backoff: Backoff{MaxInterval: 20 * time.Second}}})
	r.sup.Start()
	r.next().fail(&classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", Method: "initialize", Status: 429, RetryAfter: 10 * time.Second}})
	retries := r.waitEvents(events.KindRetryScheduled, 1)
	require.Equal(t, 10*time.Second, retries[0].Delay, "not before Retry-After")

	require.NoError(t, r.clock.BlockUntilContext(r.ctx, 1))
	r.clock.Advance(9 * time.Second)
	select {
	case <-r.conn.reqs:
		t.Fatal("retried before Retry-After")
	default:
	}
	r.clock.Advance(time.Second)
	r.next().ok(newFakeSession("s2", "a"))
	r.wait(Ready)
}

func TestRetryAfterIsCappedByMaxInterval(t *testing.T) {
	r := newRig(t, Config{Recovery: RecoveryConfig{Backoff: Backoff{MaxInterval: 5 * time.Second}}})
	r.sup.Start()
	r.next().fail(&classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", Method: "initialize", Status: 503, RetryAfter: time.Hour}})
	require.Equal(t, 5*time.Second, r.waitEvents(events.KindRetryScheduled, 1)[0].Delay)
}

func TestAPanickingSinkDoesNotStopTheSupervisor(t *testing.T) {
	r := newRig(t, Config{})
	var jl *events.JSONLines // a typed nil: Emit panics
	r.addSink(jl)
	r.ready(newFakeSession("s1", "a"))
	_, err := r.sup.CallTool(r.ctx, &mcp.CallToolParams{Name: "a"})
	require.NoError(t, err)
}

func TestRateLimitWindowIsCappedAndEndsOnReconnect(t *testing.T) {
	r := newRig(t, Config{Recovery: RecoveryConfig{Backoff: Backoff{MaxInterval: 10 * time.Second}}})
	sess := newFakeSession("s1", "a")
	r.ready(sess)
	sess.failNextCall(&classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", Method: "tools/call", Status: 429, RetryAfter: 24 * time.Hour}})
	_, err := r.sup.CallTool(r.ctx, &mcp.CallToolParams{Name: "a"})
	var ce *CallError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, classify.MaxRetryAfter, ce.RetryAfter(), "capped once, by classify")
	require.Equal(t, ce.RetryAfter(), r.waitEvents(events.KindRateLimitWindow, 1)[0].Delay, "the event carries the error's value")

	r.clock.Advance(classify.MaxRetryAfter - time.Second)
	_, err = r.sup.CallTool(r.ctx, &mcp.CallToolParams{Name: "a"})
	require.ErrorIs(t, err, ErrRateLimited, "the window is the error's value")
	require.ErrorAs(t, err, &ce)
	require.Equal(t, classify.MaxRetryAfter, ce.RetryAfter())
	r.clock.Advance(time.Second)
	_, err = r.sup.CallTool(r.ctx, &mcp.CallToolParams{Name: "a"})
	require.NoError(t, err, "the window ended")

	sess.failNextCall(&classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", Method: "tools/call", Status: 429, RetryAfter: 5 * time.Second}})
	_, err = r.sup.CallTool(r.ctx, &mcp.CallToolParams{Name: "a"})
	require.Error(t, err)
	r.sup.Reconnect()
	r.next().ok(newFakeSession("s2", "a"))
	r.until("the new session", func() bool { return r.sup.State() == Ready && r.sup.Generation() == 2 })
	_, err = r.sup.CallTool(r.ctx, &mcp.CallToolParams{Name: "a"})
	require.NoError(t, err, "Reconnect ends the window")
}

func TestCallWithoutDeadlineIsBoundedByCallTimeout(t *testing.T) {
	r := newRig(t, Config{Limits: LimitsConfig{CallTimeout: time.Minute}})
	sess := newFakeSession("s1", "a")
	sess.callHang = true
	r.ready(sess)
	errc := r.callAsync(context.Background(), "a")
	r.until("the call sent", func() bool { return len(sess.toolCalls()) == 1 })
	require.NoError(t, r.clock.BlockUntilContext(r.ctx, 1))
	r.clock.Advance(time.Minute)
	err := <-errc
	var ce *CallError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, classify.Timeout, ce.Verdict.Class)
	require.Equal(t, Ready, r.sup.State(), "a slow answer is not a dead session")
}

func TestNewRefusesBadEndpointsAndForeignResumeStates(t *testing.T) {
	for _, ep := range []string{"", "not a url", "ftp://127.0.0.1/mcp", "http://", "/mcp"} {
		_, err := New(Config{Endpoint: ep})
		require.Error(t, err, "endpoint %q", ep)
	}
	rs := &ResumeState{Version: ResumeStateVersion, Endpoint: "http://127.0.0.1:1/other",
		ResumeState: httpsession.ResumeState{SessionID: "abc", ProtocolVersion: "2025-11-25"}}
	_, err := New(Config{Endpoint: "http://127.0.0.1:1/mcp", Resume: rs})
	var rse *ResumeStateError
	require.ErrorAs(t, err, &rse)
	require.Equal(t, "endpoint", rse.Field, "a session id is never sent to another server")
	rs.Endpoint = ""
	_, err = New(Config{Endpoint: "http://127.0.0.1:1/mcp", Resume: rs})
	require.ErrorAs(t, err, &rse)
	require.Equal(t, "endpoint", rse.Field, "a state that does not say where it was saved is not trusted")

	_, err = ParseResumeState(make([]byte, MaxResumeStateBytes+1))
	require.ErrorAs(t, err, &rse)
}

func TestCloseReleasesACallWaitingForReady(t *testing.T) {
	r := newRig(t, Config{})
	r.sup.Start()
	r.next() // connecting: never answered
	errc := r.callAsync(context.Background(), "a")
	require.NoError(t, r.clock.BlockUntilContext(r.ctx, 1), "the call waits on its MaxCallWait timer")
	require.NoError(t, r.sup.Close())
	err := <-errc
	require.ErrorIs(t, err, ErrClosed)
	var ce *CallError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, NotSent, ce.Delivery)
}

func TestCloseFromTheEventsSinkDoesNotDeadlock(t *testing.T) {
	r := newRig(t, Config{})
	closed := make(chan struct{})
	var once sync.Once
	r.addSink(events.SinkFunc(func(e events.Event) {
		if e.Kind == events.KindTransition && e.To == "failed" {
			once.Do(func() { _ = r.sup.Close(); close(closed) })
		}
	}))
	r.sup.Start()
	r.next().fail(&classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", Method: "initialize", Status: 401}})
	<-closed
	r.wait(Closed)
}

// Close from another goroutine waits for the sink to receive every event,
// also while a callback that began before it is still running: a host that
// closes its event file after Close loses nothing.
func TestCloseWaitsForASlowSink(t *testing.T) {
	r := newRig(t, Config{})
	inCallback, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	r.addSink(events.SinkFunc(func(e events.Event) {
		if e.Kind == events.KindTransition && e.To == Ready {
			once.Do(func() { close(inCallback); <-release })
		}
	}))
	r.ready(newFakeSession("s1", "a"))
	<-inCallback
	closed := make(chan struct{})
	go func() { _ = r.sup.Close(); close(closed) }()
	r.wait(Closed) // the stop is done but for the sink
	close(release)
	<-closed
	n := r.rec.Len()
	closedSeen := false
	for _, e := range r.rec.Events() {
		closedSeen = closedSeen || (e.Kind == events.KindTransition && e.To == Closed)
	}
	require.True(t, closedSeen, "Close returned before the sink received the close")
	r.sup.sink.wait(false)
	require.Equal(t, n, r.rec.Len(), "events reached the sink after Close returned")
}

func TestInSinkKnowsWhereItRuns(t *testing.T) {
	require.False(t, inSink())
	q := newSinkQueue(nil, slog.New(slog.DiscardHandler), "x")
	var got bool
	q.sink = events.SinkFunc(func(events.Event) { got = inSink() })
	q.push(events.Event{})
	q.wait(false)
	require.True(t, got, "inside a callback")
}

func TestStaleRecoveryKeepsTheStreamDecision(t *testing.T) {
	decided := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	rs := &ResumeState{Version: ResumeStateVersion, ResumeState: httpsession.ResumeState{SessionID: "old", ProtocolVersion: "2025-11-25"},
		StandaloneStream: StreamDecision{Off: true, DecidedAt: decided}}
	r := newRig(t, Config{Resume: rs})
	r.sup.Start()
	req := r.next()
	stale := newFakeSession("old", "a")
	stale.init = nil
	stale.listErr = &classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", Method: "tools/list", Status: 404, SessionIDSent: true}}
	req.ok(stale)
	req = r.next()
	req.ok(newFakeSession("new", "a"))
	r.wait(Ready)
	got := r.sup.ResumeState()
	require.Equal(t, "new", got.SessionID)
	require.Equal(t, StreamDecision{Off: true, DecidedAt: decided}, got.StandaloneStream, "the decision outlives the stale session")
}

func TestRememberedStreamDecisionExpires(t *testing.T) {
	r := newRig(t, Config{Stream: StreamConfig{HostileMemory: time.Hour}})
	decided := r.clock.Now().Add(-30 * time.Minute)
	rs := &ResumeState{Version: ResumeStateVersion, ResumeState: httpsession.ResumeState{SessionID: "s1", ProtocolVersion: "2025-11-25",
		InitializeResult: &mcp.InitializeResult{ProtocolVersion: "2025-11-25", Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}}},
		StandaloneStream: StreamDecision{Off: true, DecidedAt: decided}}
	r.sup.cfg.Resume = rs
	r.sup = newSupervisor(r.sup.cfg, r.conn)
	t.Cleanup(func() { _ = r.sup.Close() })
	r.sup.Start()
	req := r.next()
	sess := newFakeSession("s1", "a")
	req.ok(sess)
	r.wait(Ready)

	require.NoError(t, r.clock.BlockUntilContext(r.ctx, 1))
	r.clock.Advance(30 * time.Minute)
	enabled := r.waitEvents(events.KindStreamEnabled, 1)
	require.Equal(t, "expired", enabled[0].Why)
	require.False(t, r.sup.ResumeState().StandaloneStream.Off)
}

func TestListChangedDuringAReListIsNotLost(t *testing.T) {
	r := newRig(t, Config{})
	r.sup.Start()
	req := r.next()
	sess := newFakeSession("s1", "a")
	req.ok(sess)
	r.wait(Ready)

	gate := make(chan struct{})
	sess.mu.Lock()
	sess.listGate = gate
	sess.mu.Unlock()
	req.spec.hooks.listChanged(probes.Tools) // the re-list reads [a] and waits
	r.until("the first re-list reading", func() bool { return sess.lists() == 2 })
	sess.addTool("z")
	req.spec.hooks.listChanged(probes.Tools) // arrives while the first re-list runs
	close(gate)
	require.NoError(t, r.clock.BlockUntilContext(r.ctx, 1), "the second re-list waits for the gap")
	require.Equal(t, 2, sess.lists())
	r.clock.Advance(DefaultRelistMinGap)
	r.until("the second change listed", func() bool { return r.sup.Catalog().Tool("z") != nil })
	require.Equal(t, 3, sess.lists())
}

func TestUnknownToolTriggersOneReList(t *testing.T) {
	r := newRig(t, Config{})
	sess := newFakeSession("s1", "a")
	r.ready(sess)
	sess.addTool("z")

	_, err := r.sup.CallTool(r.ctx, &mcp.CallToolParams{Name: "z"})
	require.ErrorIs(t, err, ErrUnknownTool, "refused locally, nothing sent")
	r.until("the re-listed catalog", func() bool { return r.sup.Catalog().Tool("z") != nil })
	_, err = r.sup.CallTool(r.ctx, &mcp.CallToolParams{Name: "z"})
	require.NoError(t, err)

	_, err = r.sup.CallTool(r.ctx, &mcp.CallToolParams{Name: "nope"})
	require.ErrorIs(t, err, ErrUnknownTool)
	_, err = r.sup.CallTool(r.ctx, &mcp.CallToolParams{Name: "nope"})
	require.ErrorIs(t, err, ErrUnknownTool)
	require.Equal(t, 2, sess.lists(), "unknown tools re-list at most once per 30s")
}

// A transition's event reaches the sink once its state is published: State
// read on the event is the state it announces or a later one, never an
// earlier one. The sink runs on its own goroutine, so the machine may have
// moved on.
func TestStateReadOnATransitionEventIsNeverOlder(t *testing.T) {
	r := newRig(t, Config{})
	type read struct {
		seq uint64
		got State
	}
	var reads []read
	var mu sync.Mutex
	r.addSink(events.SinkFunc(func(e events.Event) {
		if e.Kind == events.KindTransition {
			mu.Lock()
			reads = append(reads, read{e.Seq, r.sup.State()})
			mu.Unlock()
		}
	}))
	r.sup.Start()
	r.next().fail(&classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", Method: "initialize", Status: 401}})
	r.wait(Failed)
	r.sup.Reconnect()
	r.next().ok(newFakeSession("s1", "a"))
	r.wait(Ready)
	require.NoError(t, r.sup.Close())
	evs := r.rec.Events()
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, reads, len(r.eventsOf(events.KindTransition)))
	for _, rd := range reads {
		// The state read is the To of this transition or of a later one.
		ok := false
		for _, e := range evs {
			ok = ok || (e.Kind == events.KindTransition && e.Seq >= rd.seq && e.To == rd.got)
		}
		require.True(t, ok, "event %d: read %s, which no transition from it on announces", rd.seq, rd.got)
	}
}

func TestWaitForReadyEndsOnATerminalFailure(t *testing.T) {
	r := newRig(t, Config{})
	r.sup.Start()
	r.next().fail(&classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", Method: "initialize", Status: 401}})
	err := r.sup.WaitForState(r.ctx, Ready)
	require.ErrorIs(t, err, ErrNotReady)
	var se *StateError
	require.ErrorAs(t, err, &se)
	require.Equal(t, ReasonUnauthorized, se.Reason)
	require.Equal(t, 401, se.Verdict.HTTPStatus)
}
