package fsm_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/fsm"
)

var none classify.Verdict

// S1: a blind resume whose templates probe answers 400 + -32601 still ends
// ready: the probes settle on their own and only tools/list decides, so the
// Probe command reports DiscoverySucceeded; no handshake is dialed.
func TestS1BlindResumeProbesToReady(t *testing.T) {
	d := newDriver(t, fsm.Config{})
	d.resume(fsm.ResumeBlind)
	d.step(trig(events.TriggerDiscoverySucceeded, 1), want{events.StateReady, []fsm.Command{cmd(fsm.PublishCatalog, 1)},
		ev(events.StateProbing, events.StateReady, events.TriggerDiscoverySucceeded, "", none, 1, 0, "")})
	require.Equal(t, uint64(1), d.m.Generation(), "one session: the resumed one")
	require.False(t, d.m.StaleRecoveryUsed())
}

// S1: a 401 on the strict tools/list probe propagates: terminal failed,
// no stale recovery, no retry.
func TestS1UnauthorizedProbeIsTerminal(t *testing.T) {
	d := newDriver(t, fsm.Config{})
	d.resume(fsm.ResumeBlind)
	v401 := verdict(classify.Unauthorized, 401)
	d.step(failTrig(events.TriggerDiscoveryFailed, 1, v401), want{events.StateFailed, []fsm.Command{cmd(fsm.DetachSession, 1)},
		ev(events.StateProbing, events.StateFailed, events.TriggerDiscoveryFailed, "fatal-verdict", v401, 1, 0, "unauthorized")})
	require.True(t, d.m.Terminal())
	require.Equal(t, events.ReasonUnauthorized, d.m.Reason())
	require.Equal(t, v401, d.m.Verdict())

	_, err := d.m.Step(fsm.Trigger{Kind: events.TriggerRetryDue, Generation: 1, Now: d.now})
	require.ErrorIs(t, err, fsm.ErrRejected, "no retry after unauthorized")
	// The host re-authorizes and asks to reconnect: a full handshake.
	d.step(fsm.Trigger{Kind: events.TriggerReconnectRequested}, want{events.StateConnecting, []fsm.Command{dial(2)},
		ev(events.StateFailed, events.StateConnecting, events.TriggerReconnectRequested, "resume-none+session-budget-left", none, 2, 0, "")})
}

// S2: a resumed session rejected with 400 and a null-id -32000 body (or a
// 500) enters stale-recovering once: detach, one full handshake, list
// once, ready; it never probes again. An answer that shows the session
// expired forgets its id at once; a 500 (a busy server's answer too) keeps
// it until the new session replaces it.
func TestS2StaleSessionRecoversOnce(t *testing.T) {
	for _, c := range []struct {
		v      classify.Verdict
		forget bool
	}{
		{classify.Verdict{Class: classify.SessionExpired, HTTPStatus: 400, RPC: classify.RPCError{Present: true, Code: -32000}}, true},
		{verdict(classify.ServerError, 500), false},
		{verdict(classify.SessionExpired, 404), true},
	} {
		v := c.v
		t.Run(v.String(), func(t *testing.T) {
			d := newDriver(t, fsm.Config{})
			d.resume(fsm.ResumeBlind)
			cmds, guard := []fsm.Command{cmd(fsm.DetachSession, 1), cmd(fsm.ClearSession, 1), dial(2)}, "stale-recovery-unused+expiry-evidence+session-budget-left"
			if !c.forget {
				cmds, guard = []fsm.Command{cmd(fsm.DetachSession, 1), dial(2)}, "stale-recovery-unused+server-busy+session-budget-left"
			}
			d.step(failTrig(events.TriggerDiscoveryFailed, 1, v), want{events.StateStaleRecovering, cmds,
				ev(events.StateProbing, events.StateStaleRecovering, events.TriggerDiscoveryFailed, guard, v, 2, 0, "")})
			require.True(t, d.m.StaleRecoveryUsed())

			// A late probe result of the stale session is dropped.
			_, err := d.m.Step(fsm.Trigger{Kind: events.TriggerDiscoverySucceeded, Generation: 1, Now: d.now})
			require.ErrorIs(t, err, fsm.ErrStaleGeneration)
			require.Equal(t, events.StateStaleRecovering, d.m.State())

			d.handshakeToReady(events.StateStaleRecovering, 2, 0)
			require.Equal(t, uint64(2), d.m.Generation(), "exactly one new session")
		})
	}
}

// S2: when the stale recovery itself fails, the machine retries through
// connecting (a full handshake), never through probing.
func TestS2FailedStaleRecoveryRetriesWithHandshake(t *testing.T) {
	d := newDriver(t, fsm.Config{})
	vExp := verdict(classify.SessionExpired, 404)
	v503 := verdict(classify.ServerError, 503)
	d.resume(fsm.ResumeKnown)
	d.step(failTrig(events.TriggerDiscoveryFailed, 1, vExp), want{events.StateStaleRecovering,
		[]fsm.Command{cmd(fsm.DetachSession, 1), cmd(fsm.ClearSession, 1), dial(2)},
		ev(events.StateListingDeclared, events.StateStaleRecovering, events.TriggerDiscoveryFailed, "stale-recovery-unused+expiry-evidence+session-budget-left", vExp, 2, 0, "")})
	d.step(failTrig(events.TriggerHandshakeFailed, 2, v503), want{events.StateFailed, []fsm.Command{retry(2, 1, v503)},
		ev(events.StateStaleRecovering, events.StateFailed, events.TriggerHandshakeFailed, "recoverable-verdict", v503, 2, 1, "")})
	require.False(t, d.m.Terminal())
	d.now = d.now.Add(time.Second)
	d.step(trig(events.TriggerRetryDue, 2), want{events.StateConnecting, []fsm.Command{dial(3)},
		ev(events.StateFailed, events.StateConnecting, events.TriggerRetryDue, "retrying+resume-none+session-budget-left", none, 3, 1, "")})
	d.handshakeToReady(events.StateConnecting, 3, 1)
}

// S2, reconciled: a resumed session whose discovery got no answer at all
// (transport: connection refused, reset; or our own timeout) is not shown
// to be stale: the server may be down. The machine detaches it without
// forgetting it (no clear-session: the host's Detach still saves it) and
// its retry re-attaches it, the stale recovery unused; no initialize.
func TestResumeWithNoAnswerRetriesTheResume(t *testing.T) {
	for _, mode := range []fsm.ResumeMode{fsm.ResumeBlind, fsm.ResumeKnown} {
		for _, v := range []classify.Verdict{{Class: classify.Transport}, {Class: classify.Timeout}} {
			t.Run(mode.String()+"/"+v.String(), func(t *testing.T) {
				d := newDriver(t, fsm.Config{})
				d.resume(mode)
				discovering, resuming, guard := events.StateProbing, events.StateResumingBlind, "retrying+resume-blind+session-budget-left"
				if mode == fsm.ResumeKnown {
					discovering, resuming, guard = events.StateListingDeclared, events.StateResumingKnown, "retrying+resume-known+session-budget-left"
				}
				d.step(failTrig(events.TriggerDiscoveryFailed, 1, v), want{events.StateFailed,
					[]fsm.Command{cmd(fsm.DetachSession, 1), retry(1, 1, v)},
					ev(discovering, events.StateFailed, events.TriggerDiscoveryFailed, "no-answer", v, 1, 1, "")})
				require.False(t, d.m.StaleRecoveryUsed())
				require.Equal(t, mode, d.m.RetryResume(), "the persisted session is held")
				d.now = d.now.Add(time.Second)
				d.step(trig(events.TriggerRetryDue, 1), want{resuming, []fsm.Command{attach(2, mode)},
					ev(events.StateFailed, resuming, events.TriggerRetryDue, guard, none, 2, 1, "")})
			})
		}
	}
}

// S4: a failed call is no trigger of the machine: there is none for it
// (500, 429, 403, 401 on a call keep ready by construction). Only the
// session's own end leaves ready: a 404 on a request with a session id
// (the session ended itself, session-expired) or an unanswered
// verification (transport) is SessionDied, which releases the session
// without DELETE and opens exactly one new one.
func TestS4OnlyTheSessionsEndLeavesReady(t *testing.T) {
	require.NotContains(t, fsm.TriggerKinds(), events.Trigger("call-failed"))
	require.NotContains(t, fsm.TriggerKinds(), events.Trigger("session-verified"))
	d := newDriver(t, fsm.Config{})
	d.toReady()

	v404 := classify.Verdict{Class: classify.SessionExpired, HTTPStatus: 404, SessionIDSent: true}
	d.step(failTrig(events.TriggerSessionDied, 1, v404), want{events.StateConnecting,
		[]fsm.Command{cmd(fsm.DetachSession, 1), dial(2)},
		ev(events.StateReady, events.StateConnecting, events.TriggerSessionDied, "recoverable-verdict+session-budget-left", v404, 2, 0, "")})
	// A late end of the old session: dropped.
	_, err := d.m.Step(fsm.Trigger{Kind: events.TriggerSessionDied, Generation: 1, Verdict: v404, Now: d.now})
	require.ErrorIs(t, err, fsm.ErrStaleGeneration)
	d.handshakeToReady(events.StateConnecting, 2, 0)

	// A verification that went unanswered: the session died; it is
	// released without DELETE and replaced.
	vTr := verdict(classify.Transport, 0)
	d.step(failTrig(events.TriggerSessionDied, 2, vTr), want{events.StateConnecting, []fsm.Command{cmd(fsm.DetachSession, 2), dial(3)},
		ev(events.StateReady, events.StateConnecting, events.TriggerSessionDied, "recoverable-verdict+session-budget-left", vTr, 3, 0, "")})
}

// S5 without the fix: sessions that keep dying are stopped by the churn
// guard instead of reconnecting forever; time passing reopens the window.
func TestChurnStopsASessionLoop(t *testing.T) {
	d := newDriver(t, fsm.Config{MaxSessions: 2, Window: time.Minute})
	d.toReady() // session 1
	vTr := verdict(classify.Transport, 0)
	d.now = d.now.Add(7 * time.Second)
	d.step(failTrig(events.TriggerSessionDied, 1, vTr), want{events.StateConnecting,
		[]fsm.Command{cmd(fsm.DetachSession, 1), dial(2)},
		ev(events.StateReady, events.StateConnecting, events.TriggerSessionDied, "recoverable-verdict+session-budget-left", vTr, 2, 0, "")})
	d.handshakeToReady(events.StateConnecting, 2, 0)
	d.now = d.now.Add(7 * time.Second)
	d.step(failTrig(events.TriggerSessionDied, 2, vTr), want{events.StateFailed, []fsm.Command{cmd(fsm.DetachSession, 2)},
		ev(events.StateReady, events.StateFailed, events.TriggerSessionDied, "recoverable-verdict+churn-limit-reached", vTr, 2, 0, "churn")})
	require.True(t, d.m.Terminal())
	require.Equal(t, events.ReasonChurn, d.m.Reason())

	// The host asks again at once: a reconnect is a session too, held by
	// churn; so is a cool-down that ends while the window is still full.
	d.step(fsm.Trigger{Kind: events.TriggerReconnectRequested}, want{events.StateFailed, nil,
		ev(events.StateFailed, events.StateFailed, events.TriggerReconnectRequested, "churn-limit-reached", none, 2, 0, "churn")})
	d.step(fsm.Trigger{Kind: events.TriggerChurnCooled, Generation: 2}, want{events.StateFailed, nil,
		ev(events.StateFailed, events.StateFailed, events.TriggerChurnCooled, "churn-failure+churn-limit-reached", none, 2, 0, "churn")})
	require.Equal(t, uint64(2), d.m.Generation(), "no session opened past the limit")

	// The cool-down ends after the window: the machine tries again.
	d.now = d.now.Add(time.Minute)
	d.step(fsm.Trigger{Kind: events.TriggerChurnCooled, Generation: 2}, want{events.StateConnecting, []fsm.Command{dial(3)},
		ev(events.StateFailed, events.StateConnecting, events.TriggerChurnCooled, "churn-failure+session-budget-left", none, 3, 0, "")})
}

// Only a churn failure cools down: the other terminal reasons wait for the
// host.
func TestOnlyChurnCoolsDown(t *testing.T) {
	d := newDriver(t, fsm.Config{})
	d.step(fsm.Trigger{Kind: events.TriggerStarted}, want{events.StateConnecting, []fsm.Command{dial(1)},
		ev(events.StateIdle, events.StateConnecting, events.TriggerStarted, "resume-none", none, 1, 0, "")})
	vAuth := verdict(classify.Unauthorized, 401)
	d.step(failTrig(events.TriggerHandshakeFailed, 1, vAuth), want{events.StateFailed, nil,
		ev(events.StateConnecting, events.StateFailed, events.TriggerHandshakeFailed, "fatal-verdict", vAuth, 1, 0, "unauthorized")})
	_, err := d.m.Step(fsm.Trigger{Kind: events.TriggerChurnCooled, Generation: 1, Now: d.now})
	require.ErrorIs(t, err, fsm.ErrRejected)
	require.Equal(t, events.ReasonUnauthorized, d.m.Reason())
}

// The retry budget: RetriesExhausted makes failed terminal (budget-spent);
// after canceled there is no retry at all.
func TestRetryBudgetAndCanceled(t *testing.T) {
	d := newDriver(t, fsm.Config{})
	vRef := verdict(classify.Transport, 0)
	d.step(fsm.Trigger{Kind: events.TriggerStarted}, want{events.StateConnecting, []fsm.Command{dial(1)},
		ev(events.StateIdle, events.StateConnecting, events.TriggerStarted, "resume-none", none, 1, 0, "")})
	d.step(failTrig(events.TriggerHandshakeFailed, 1, vRef), want{events.StateFailed, []fsm.Command{retry(1, 1, vRef)},
		ev(events.StateConnecting, events.StateFailed, events.TriggerHandshakeFailed, "recoverable-verdict", vRef, 1, 1, "")})
	d.step(trig(events.TriggerRetryDue, 1), want{events.StateConnecting, []fsm.Command{dial(2)},
		ev(events.StateFailed, events.StateConnecting, events.TriggerRetryDue, "retrying+resume-none+session-budget-left", none, 2, 1, "")})
	d.step(failTrig(events.TriggerHandshakeFailed, 2, vRef), want{events.StateFailed, []fsm.Command{retry(2, 2, vRef)},
		ev(events.StateConnecting, events.StateFailed, events.TriggerHandshakeFailed, "recoverable-verdict", vRef, 2, 2, "")})
	d.step(trig(events.TriggerRetriesExhausted, 2), want{events.StateFailed, nil,
		ev(events.StateFailed, events.StateFailed, events.TriggerRetriesExhausted, "retrying", none, 2, 2, "budget-spent")})
	require.Equal(t, events.ReasonBudgetSpent, d.m.Reason())
	require.Equal(t, vRef, d.m.Verdict(), "the verdict that failed the connection is kept")

	d.step(fsm.Trigger{Kind: events.TriggerReconnectRequested}, want{events.StateConnecting, []fsm.Command{dial(3)},
		ev(events.StateFailed, events.StateConnecting, events.TriggerReconnectRequested, "resume-none+session-budget-left", none, 3, 0, "")})
	vCan := verdict(classify.Canceled, 0)
	d.step(failTrig(events.TriggerHandshakeFailed, 3, vCan), want{events.StateFailed, nil,
		ev(events.StateConnecting, events.StateFailed, events.TriggerHandshakeFailed, "fatal-verdict", vCan, 3, 0, "canceled")})
	require.Equal(t, events.ReasonCanceled, d.m.Reason())
}

// Close ends the server-side session; detach keeps it resumable; closed
// absorbs every later trigger without event or command.
func TestCloseDetachAndClosedAbsorbs(t *testing.T) {
	d := newDriver(t, fsm.Config{})
	d.toReady()
	d.step(fsm.Trigger{Kind: events.TriggerCloseRequested}, want{events.StateClosed, []fsm.Command{cmd(fsm.CloseSession, 1)},
		ev(events.StateReady, events.StateClosed, events.TriggerCloseRequested, "", none, 1, 0, "")})
	for _, k := range fsm.TriggerKinds() {
		d.step(fsm.Trigger{Kind: k, Generation: 7, Verdict: verdict(classify.Transport, 0)}, want{events.StateClosed, nil, nil})
	}

	d2 := newDriver(t, fsm.Config{})
	d2.toReady()
	d2.step(fsm.Trigger{Kind: events.TriggerDetachRequested}, want{events.StateClosed, []fsm.Command{cmd(fsm.DetachSession, 1)},
		ev(events.StateReady, events.StateClosed, events.TriggerDetachRequested, "", none, 1, 0, "")})
}

func TestStepErrors(t *testing.T) {
	m := fsm.New(fsm.Config{})
	_, err := m.Step(fsm.Trigger{Kind: events.TriggerAttached})
	var rej *fsm.RejectedError
	require.ErrorAs(t, err, &rej)
	require.Equal(t, events.StateIdle, rej.State)
	require.Equal(t, events.TriggerAttached, rej.Trigger)
	require.ErrorIs(t, err, fsm.ErrRejected)
	require.EqualError(t, err, "fsm: trigger attached not permitted in state idle")

	_, err = m.Step(fsm.Trigger{Kind: events.TriggerStarted, Resume: fsm.ResumeMode(9)})
	require.ErrorAs(t, err, &rej)
	require.Equal(t, []string{"resume-none", "resume-blind", "resume-known"}, rej.Guards)

	_, err = m.Step(fsm.Trigger{Kind: events.TriggerStarted})
	require.NoError(t, err)
	_, err = m.Step(fsm.Trigger{Kind: events.TriggerHandshakeFailed, Generation: 1})
	var ve *fsm.VerdictError
	require.ErrorAs(t, err, &ve)
	require.ErrorIs(t, err, fsm.ErrMissingVerdict)

	_, err = m.Step(fsm.Trigger{Kind: events.TriggerHandshakeSucceeded, Generation: 2})
	var ge *fsm.GenerationError
	require.ErrorAs(t, err, &ge)
	require.ErrorIs(t, err, fsm.ErrFutureGeneration)
	require.NotErrorIs(t, err, fsm.ErrStaleGeneration)
	require.Equal(t, events.StateConnecting, m.State())
}

// A fresh session whose handshake succeeded but whose listing is answered
// 403 keeps that session: the listing is retried on it, on the retry
// schedule, ListingRetries times; the next such failure replaces it.
func TestListingRetriedOnTheLiveSession(t *testing.T) {
	d := newDriver(t, fsm.Config{ListingRetries: 2})
	v403 := verdict(classify.Forbidden, 403)
	d.step(fsm.Trigger{Kind: events.TriggerStarted}, want{events.StateConnecting, []fsm.Command{dial(1)},
		ev(events.StateIdle, events.StateConnecting, events.TriggerStarted, "resume-none", none, 1, 0, "")})
	d.step(trig(events.TriggerHandshakeSucceeded, 1), want{events.StateConnecting, []fsm.Command{cmd(fsm.ListDeclared, 1)},
		ev(events.StateConnecting, events.StateConnecting, events.TriggerHandshakeSucceeded, "", none, 1, 0, "")})
	for n := 1; n <= 2; n++ {
		d.step(failTrig(events.TriggerDiscoveryFailed, 1, v403), want{events.StateConnecting, []fsm.Command{retry(1, n, v403)},
			ev(events.StateConnecting, events.StateConnecting, events.TriggerDiscoveryFailed, "listing-retry-left", v403, 1, n, "")})
		require.Equal(t, n, d.m.ListingRetries())
		d.step(trig(events.TriggerRetryDue, 1), want{events.StateConnecting, []fsm.Command{cmd(fsm.ListDeclared, 1)},
			ev(events.StateConnecting, events.StateConnecting, events.TriggerRetryDue, "listing-failed", none, 1, n, "")})
	}
	require.Equal(t, uint64(1), d.m.Generation(), "one session so far")
	d.step(failTrig(events.TriggerDiscoveryFailed, 1, v403), want{events.StateFailed, []fsm.Command{cmd(fsm.CloseSession, 1), retry(1, 3, v403)},
		ev(events.StateConnecting, events.StateFailed, events.TriggerDiscoveryFailed, "listing-retry-spent", v403, 1, 3, "")})
	d.step(trig(events.TriggerRetryDue, 1), want{events.StateConnecting, []fsm.Command{dial(2)},
		ev(events.StateFailed, events.StateConnecting, events.TriggerRetryDue, "retrying+resume-none+session-budget-left", none, 2, 3, "")})
	require.Zero(t, d.m.ListingRetries(), "a new session starts its own count")
	d.handshakeToReady(events.StateConnecting, 2, 3)
}

// A listing whose verdict says the session may be gone (transport,
// session-expired) replaces the session at once.
func TestListingLostSessionIsReplaced(t *testing.T) {
	for _, v := range []classify.Verdict{verdict(classify.Transport, 0), verdict(classify.SessionExpired, 404)} {
		t.Run(v.String(), func(t *testing.T) {
			d := newDriver(t, fsm.Config{})
			d.step(fsm.Trigger{Kind: events.TriggerStarted}, want{events.StateConnecting, []fsm.Command{dial(1)},
				ev(events.StateIdle, events.StateConnecting, events.TriggerStarted, "resume-none", none, 1, 0, "")})
			d.step(trig(events.TriggerHandshakeSucceeded, 1), want{events.StateConnecting, []fsm.Command{cmd(fsm.ListDeclared, 1)},
				ev(events.StateConnecting, events.StateConnecting, events.TriggerHandshakeSucceeded, "", none, 1, 0, "")})
			d.step(failTrig(events.TriggerDiscoveryFailed, 1, v), want{events.StateFailed, []fsm.Command{cmd(fsm.CloseSession, 1), retry(1, 1, v)},
				ev(events.StateConnecting, events.StateFailed, events.TriggerDiscoveryFailed, "listing-retry-spent", v, 1, 1, "")})
		})
	}
}
