package supervisor_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/supervisor"
)

// A tools/list that fails forever, whatever the answer, is retried at the
// backoff's pace and no faster: each retry waits for a retry-scheduled
// event's delay on the clock, and nothing is sent before the clock moves.
// Close stops the retries.
func TestE2EListingFailingForeverIsPaced(t *testing.T) {
	cases := []struct {
		name   string
		action mcptest.Action
	}{
		{"403 html", mcptest.HTML(http.StatusForbidden, mcptest.ForbiddenPage)},
		{"429 retry-after", mcptest.Respond(http.StatusTooManyRequests, http.Header{"Retry-After": {"3600"}}, []byte("slow down"))},
		{"500", mcptest.PlainText(http.StatusInternalServerError, "boom")},
		{"garbage 200", mcptest.JSONBody(`{not json`)},
		{"no result", mcptest.JSONBody(mcptest.BodyNoResult)},
		{"-32603", mcptest.JSONRPCError(http.StatusOK, mcptest.RequestID, -32603, "internal")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clock := clockwork.NewFakeClock()
			e := newE2E(t, mcptest.Options{Tools: 1}, supervisor.Config{
				Observe: supervisor.ObserveConfig{Clock: clock},
				Stream:  supervisor.StreamConfig{Policy: supervisor.StreamOff},
				Recovery: supervisor.RecoveryConfig{
					ListingRetries: 2,
					MaxSessions:    1000,
					Backoff:        supervisor.Backoff{InitialInterval: time.Second, MaxInterval: 8 * time.Second, NoJitter: true},
				},
			})
			e.srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Verb: http.MethodPost, Method: "tools/list"}, Action: tc.action})
			e.sup.Start()
			log := e.srv.Log()
			for k := 1; k <= 8; k++ {
				evs, err := e.rec.WaitFor(e.ctx, func(evs []events.Event) bool { return len(ofKind(evs, events.KindRetryScheduled)) >= k })
				require.NoError(t, err, "retry %d never scheduled", k)
				ev := ofKind(evs, events.KindRetryScheduled)[k-1]
				require.Positive(t, ev.Delay, "retry %d waits", k)
				require.LessOrEqual(t, ev.Delay, 8*time.Second)
				require.Equal(t, k, log.Count("tools/list"), "one listing per retry, none before the clock moves")
				require.NotEqual(t, supervisor.Ready, e.sup.State())
				clock.Advance(ev.Delay)
			}
			require.NoError(t, log.WaitCount(e.ctx, "tools/list", 9))
			require.NoError(t, e.sup.Close())
			n := log.Count("tools/list")
			clock.Advance(time.Hour)
			require.Equal(t, n, log.Count("tools/list"), "Close stopped the retries")
			require.Equal(t, supervisor.Closed, e.sup.State())
		})
	}
}

func ofKind(evs []events.Event, k events.Kind) []events.Event {
	var out []events.Event
	for _, e := range evs {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

// The ping that verifies a session after a call's transport failure, met
// by a hostile answer: a ping with no answer in ProbeTimeout, or answered
// 404, means the session died (replaced, one ping); a ping answered with
// garbage was answered: the session lives.
func TestE2EVerificationPingHostile(t *testing.T) {
	cases := []struct {
		name     string
		action   mcptest.Action
		replaced bool
	}{
		{"hangs", mcptest.Delay(time.Minute), true},
		{"404", mcptest.PlainText(http.StatusNotFound, "no such session"), true},
		{"reset", mcptest.Reset(), true},
		{"garbage 200", mcptest.JSONBody(`{not json`), false},
		{"500", mcptest.PlainText(http.StatusInternalServerError, "boom"), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newE2E(t, mcptest.Options{Tools: 1, MaxHold: time.Minute}, supervisor.Config{Stream: supervisor.StreamConfig{Policy: supervisor.StreamOff}, Recovery: supervisor.RecoveryConfig{ProbeTimeout: 200 * time.Millisecond}})
			e.start()
			e.srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Verb: http.MethodPost, Method: "tools/call", Occurrence: mcptest.First()}, Action: mcptest.Reset()})
			e.srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Verb: http.MethodPost, Method: "ping"}, Action: tc.action})
			err := e.call("blip")
			var ce *supervisor.CallError
			require.ErrorAs(t, err, &ce)
			require.Equal(t, classify.Transport, ce.Verdict.Class)
			require.NoError(t, e.call("next"), "the next call is served")
			require.Equal(t, 1, e.srv.Log().Count("ping"), "one ping")
			if tc.replaced {
				require.Equal(t, uint64(2), e.sup.Generation())
				require.Equal(t, 2, e.srv.Log().Count("initialize"))
			} else {
				require.Equal(t, uint64(1), e.sup.Generation())
				require.Equal(t, 1, e.srv.Log().Count("initialize"))
			}
			e.srv.Gateway().Close()
		})
	}
}

// A call waiting for a verification whose ping never comes back is released
// by Close: not sent, ErrClosed; the ping's request ends too.
func TestE2ECloseReleasesCallsWaitingForAVerification(t *testing.T) {
	clock := clockwork.NewFakeClock()
	e := newE2E(t, mcptest.Options{Tools: 1, MaxHold: time.Minute}, supervisor.Config{
		Observe:  supervisor.ObserveConfig{Clock: clock},
		Stream:   supervisor.StreamConfig{Policy: supervisor.StreamOff},
		Limits:   supervisor.LimitsConfig{CatalogPollInterval: -1},
		Recovery: supervisor.RecoveryConfig{ProbeTimeout: time.Minute},
	})
	e.start()
	e.srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Verb: http.MethodPost, Method: "tools/call", Occurrence: mcptest.First()}, Action: mcptest.Reset()})
	e.srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Verb: http.MethodPost, Method: "ping"}, Action: mcptest.Delay(time.Minute)})
	require.Error(t, e.call("blip"))
	require.NoError(t, e.srv.Log().WaitCount(e.ctx, "ping", 1))
	errc := make(chan error, 1)
	go func() { errc <- e.call("waits") }()
	require.NoError(t, clock.BlockUntilContext(e.ctx, 1), "the call waits for the verification (its MaxCallWait timer)")
	require.NoError(t, e.sup.Close())
	err := <-errc
	var ce *supervisor.CallError
	require.ErrorAs(t, err, &ce)
	require.ErrorIs(t, err, supervisor.ErrClosed)
	require.Equal(t, supervisor.NotSent, ce.Delivery)
	require.Equal(t, 1, e.srv.Log().Count("tools/call"), "the waiting call never went out")
	require.NoError(t, e.srv.Log().WaitFunc(e.ctx, 1, func(en mcptest.Entry) bool { return en.Method == "ping" && en.Done }), "the ping's request ended")
}

// Whatever the fault, a tool not annotated idempotent or read-only runs at
// most once at the server under ResendSafe, and is sent once.
func TestE2EResendSafeNeverRunsAPlainToolTwice(t *testing.T) {
	cases := []struct {
		name   string
		action mcptest.Action
	}{
		{"reset before the server", mcptest.Reset()},
		{"reset after the server", mcptest.ResetAfterServer()},
		{"500", mcptest.PlainText(http.StatusInternalServerError, "boom")},
		{"429", mcptest.ToolCallRateLimited(0).Action},
		{"garbage 200", mcptest.JSONBody(`{not json`)},
		{"no result", mcptest.JSONBody(mcptest.BodyNoResult)},
		{"wrong id", mcptest.JSONBody(mcptest.BodyWrongID)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newE2E(t, mcptest.Options{IdempotentRecord: true}, supervisor.Config{
				Recovery: supervisor.RecoveryConfig{Resend: supervisor.ResendSafe},
				Limits:   supervisor.LimitsConfig{CallTimeout: time.Second},
			})
			e.start()
			e.srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Verb: http.MethodPost, Method: "tools/call", Occurrence: mcptest.First()}, Action: tc.action})
			err := e.call("once")
			var ce *supervisor.CallError
			require.ErrorAs(t, err, &ce)
			require.False(t, ce.Resendable(), "delivery %s", ce.Delivery)
			require.LessOrEqual(t, e.srv.Invocations(mcptest.RecordTool, "once"), 1)
			require.Equal(t, 1, e.srv.Log().Count("tools/call"), "sent once")
			require.NoError(t, e.call("next"))
			require.Empty(t, e.eventsOf(events.KindCallResent))
		})
	}
}

// A listing refused 401 after a handshake stops in a terminal failed state
// (unauthorized) and keeps the session, as a resumed one is kept: no
// DELETE, and Reconnect, the credential renewed, resumes it without a new
// initialize.
func TestE2EListingUnauthorizedKeepsTheSessionForReconnect(t *testing.T) {
	e := newE2E(t, mcptest.Options{Tools: 1}, supervisor.Config{})
	refused := e.srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Verb: http.MethodPost, Method: "tools/list"},
		Action: mcptest.Respond(http.StatusUnauthorized, http.Header{"Www-Authenticate": {`Bearer error="invalid_token"`}}, nil)})
	e.sup.Start()
	require.NoError(t, e.sup.WaitForState(e.ctx, supervisor.Failed))
	settle(t, e.ctx, e.sup, e.rec, supervisor.Failed)
	reason, v := e.sup.Failure()
	require.Equal(t, supervisor.ReasonUnauthorized, reason)
	require.Equal(t, classify.Unauthorized, v.Class)
	rs := e.sup.ResumeState()
	require.NotNil(t, rs)
	require.True(t, e.srv.KnownSession(rs.SessionID), "the server still has the session")
	ended := ofKind(e.rec.Events(), events.KindSessionEnded)
	require.Len(t, ended, 1)
	require.Equal(t, "detached", ended[0].Detail)

	e.srv.Gateway().Remove(refused) // the credential renewed
	e.sup.Reconnect()
	require.NoError(t, e.sup.WaitForState(e.ctx, supervisor.Ready))
	require.Equal(t, 1, e.srv.Log().Count("initialize"), "resumed, no new handshake")
	require.Zero(t, e.srv.Log().CountVerb(http.MethodDelete))
	require.NoError(t, e.call("after"))
	require.Equal(t, rs.SessionID, e.sup.ResumeState().SessionID)
}
