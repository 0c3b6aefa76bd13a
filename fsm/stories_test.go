package fsm_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/fsm"
)

var none classify.Verdict

// S1: a blind resume whose templates probe answers 400 + -32601 still ends
// ready: the probes settle on their own and only tools/list decides, so the
// Probe command reports DiscoverySucceeded; no handshake is dialed.
func TestS1BlindResumeProbesToReady(t *testing.T) {
	d := newDriver(t, fsm.Config{})
	d.resume(fsm.ResumeBlind)
	d.step(trig(fsm.DiscoverySucceeded, 1), want{fsm.Ready, []fsm.Command{cmd(fsm.PublishCatalog, 1)},
		ev(fsm.Probing, fsm.Ready, fsm.DiscoverySucceeded, "", none, 1, 0, "")})
	require.Equal(t, uint64(1), d.m.Generation(), "one session: the resumed one")
	require.False(t, d.m.StaleRecoveryUsed())
}

// S1: a 401 on the strict tools/list probe propagates: terminal failed,
// no stale recovery, no retry.
func TestS1UnauthorizedProbeIsTerminal(t *testing.T) {
	d := newDriver(t, fsm.Config{})
	d.resume(fsm.ResumeBlind)
	v401 := verdict(classify.Unauthorized, 401)
	d.step(failTrig(fsm.DiscoveryFailed, 1, v401), want{fsm.Failed, []fsm.Command{cmd(fsm.DetachSession, 1)},
		ev(fsm.Probing, fsm.Failed, fsm.DiscoveryFailed, "fatal-verdict", v401, 1, 0, "unauthorized")})
	require.True(t, d.m.Terminal())
	require.Equal(t, fsm.ReasonUnauthorized, d.m.Reason())
	require.Equal(t, v401, d.m.Verdict())

	_, err := d.m.Step(fsm.Trigger{Kind: fsm.RetryDue, Generation: 1, Now: d.now})
	require.ErrorIs(t, err, fsm.ErrRejected, "no retry after unauthorized")
	// The host re-authorizes and asks to reconnect: a full handshake.
	d.step(fsm.Trigger{Kind: fsm.ReconnectRequested}, want{fsm.Connecting, []fsm.Command{dial(2)},
		ev(fsm.Failed, fsm.Connecting, fsm.ReconnectRequested, "resume-none+session-budget-left", none, 2, 0, "")})
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
			d.step(failTrig(fsm.DiscoveryFailed, 1, v), want{fsm.StaleRecovering, cmds,
				ev(fsm.Probing, fsm.StaleRecovering, fsm.DiscoveryFailed, guard, v, 2, 0, "")})
			require.True(t, d.m.StaleRecoveryUsed())

			// A late probe result of the stale session is dropped.
			_, err := d.m.Step(fsm.Trigger{Kind: fsm.DiscoverySucceeded, Generation: 1, Now: d.now})
			require.ErrorIs(t, err, fsm.ErrStaleGeneration)
			require.Equal(t, fsm.StaleRecovering, d.m.State())

			d.handshakeToReady(fsm.StaleRecovering, 2, 0)
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
	d.step(failTrig(fsm.DiscoveryFailed, 1, vExp), want{fsm.StaleRecovering,
		[]fsm.Command{cmd(fsm.DetachSession, 1), cmd(fsm.ClearSession, 1), dial(2)},
		ev(fsm.ListingDeclared, fsm.StaleRecovering, fsm.DiscoveryFailed, "stale-recovery-unused+expiry-evidence+session-budget-left", vExp, 2, 0, "")})
	d.step(failTrig(fsm.HandshakeFailed, 2, v503), want{fsm.Failed, []fsm.Command{retry(2, 1, v503)},
		ev(fsm.StaleRecovering, fsm.Failed, fsm.HandshakeFailed, "recoverable-verdict", v503, 2, 1, "")})
	require.False(t, d.m.Terminal())
	d.now = d.now.Add(time.Second)
	d.step(trig(fsm.RetryDue, 2), want{fsm.Connecting, []fsm.Command{dial(3)},
		ev(fsm.Failed, fsm.Connecting, fsm.RetryDue, "retrying+resume-none+session-budget-left", none, 3, 1, "")})
	d.handshakeToReady(fsm.Connecting, 3, 1)
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
				discovering, resuming, guard := fsm.Probing, fsm.ResumingBlind, "retrying+resume-blind+session-budget-left"
				if mode == fsm.ResumeKnown {
					discovering, resuming, guard = fsm.ListingDeclared, fsm.ResumingKnown, "retrying+resume-known+session-budget-left"
				}
				d.step(failTrig(fsm.DiscoveryFailed, 1, v), want{fsm.Failed,
					[]fsm.Command{cmd(fsm.DetachSession, 1), retry(1, 1, v)},
					ev(discovering, fsm.Failed, fsm.DiscoveryFailed, "no-answer", v, 1, 1, "")})
				require.False(t, d.m.StaleRecoveryUsed())
				require.Equal(t, mode, d.m.RetryResume(), "the persisted session is held")
				d.now = d.now.Add(time.Second)
				d.step(trig(fsm.RetryDue, 1), want{resuming, []fsm.Command{attach(2, mode)},
					ev(fsm.Failed, resuming, fsm.RetryDue, guard, none, 2, 1, "")})
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
	require.NotContains(t, fsm.TriggerKinds(), fsm.TriggerKind("call-failed"))
	require.NotContains(t, fsm.TriggerKinds(), fsm.TriggerKind("session-verified"))
	d := newDriver(t, fsm.Config{})
	d.toReady()

	v404 := classify.Verdict{Class: classify.SessionExpired, HTTPStatus: 404, SessionIDSent: true}
	d.step(failTrig(fsm.SessionDied, 1, v404), want{fsm.Connecting,
		[]fsm.Command{cmd(fsm.DetachSession, 1), dial(2)},
		ev(fsm.Ready, fsm.Connecting, fsm.SessionDied, "recoverable-verdict+session-budget-left", v404, 2, 0, "")})
	// A late end of the old session: dropped.
	_, err := d.m.Step(fsm.Trigger{Kind: fsm.SessionDied, Generation: 1, Verdict: v404, Now: d.now})
	require.ErrorIs(t, err, fsm.ErrStaleGeneration)
	d.handshakeToReady(fsm.Connecting, 2, 0)

	// A verification that went unanswered: the session died; it is
	// released without DELETE and replaced.
	vTr := verdict(classify.Transport, 0)
	d.step(failTrig(fsm.SessionDied, 2, vTr), want{fsm.Connecting, []fsm.Command{cmd(fsm.DetachSession, 2), dial(3)},
		ev(fsm.Ready, fsm.Connecting, fsm.SessionDied, "recoverable-verdict+session-budget-left", vTr, 3, 0, "")})
}

// S5 without the fix: sessions that keep dying are stopped by the churn
// guard instead of reconnecting forever; time passing reopens the window.
func TestChurnStopsASessionLoop(t *testing.T) {
	d := newDriver(t, fsm.Config{MaxSessions: 2, Window: time.Minute})
	d.toReady() // session 1
	vTr := verdict(classify.Transport, 0)
	d.now = d.now.Add(7 * time.Second)
	d.step(failTrig(fsm.SessionDied, 1, vTr), want{fsm.Connecting,
		[]fsm.Command{cmd(fsm.DetachSession, 1), dial(2)},
		ev(fsm.Ready, fsm.Connecting, fsm.SessionDied, "recoverable-verdict+session-budget-left", vTr, 2, 0, "")})
	d.handshakeToReady(fsm.Connecting, 2, 0)
	d.now = d.now.Add(7 * time.Second)
	d.step(failTrig(fsm.SessionDied, 2, vTr), want{fsm.Failed, []fsm.Command{cmd(fsm.DetachSession, 2)},
		ev(fsm.Ready, fsm.Failed, fsm.SessionDied, "recoverable-verdict+churn-limit-reached", vTr, 2, 0, "churn")})
	require.True(t, d.m.Terminal())
	require.Equal(t, fsm.ReasonChurn, d.m.Reason())

	// The host asks again at once: a reconnect is a session too, held by
	// churn; so is a cool-down that ends while the window is still full.
	d.step(fsm.Trigger{Kind: fsm.ReconnectRequested}, want{fsm.Failed, nil,
		ev(fsm.Failed, fsm.Failed, fsm.ReconnectRequested, "churn-limit-reached", none, 2, 0, "churn")})
	d.step(fsm.Trigger{Kind: fsm.ChurnCooled, Generation: 2}, want{fsm.Failed, nil,
		ev(fsm.Failed, fsm.Failed, fsm.ChurnCooled, "churn-failure+churn-limit-reached", none, 2, 0, "churn")})
	require.Equal(t, uint64(2), d.m.Generation(), "no session opened past the limit")

	// The cool-down ends after the window: the machine tries again.
	d.now = d.now.Add(time.Minute)
	d.step(fsm.Trigger{Kind: fsm.ChurnCooled, Generation: 2}, want{fsm.Connecting, []fsm.Command{dial(3)},
		ev(fsm.Failed, fsm.Connecting, fsm.ChurnCooled, "churn-failure+session-budget-left", none, 3, 0, "")})
}

// Only a churn failure cools down: the other terminal reasons wait for the
// host.
func TestOnlyChurnCoolsDown(t *testing.T) {
	d := newDriver(t, fsm.Config{})
	d.step(fsm.Trigger{Kind: fsm.Started}, want{fsm.Connecting, []fsm.Command{dial(1)},
		ev(fsm.Idle, fsm.Connecting, fsm.Started, "resume-none", none, 1, 0, "")})
	vAuth := verdict(classify.Unauthorized, 401)
	d.step(failTrig(fsm.HandshakeFailed, 1, vAuth), want{fsm.Failed, nil,
		ev(fsm.Connecting, fsm.Failed, fsm.HandshakeFailed, "fatal-verdict", vAuth, 1, 0, "unauthorized")})
	_, err := d.m.Step(fsm.Trigger{Kind: fsm.ChurnCooled, Generation: 1, Now: d.now})
	require.ErrorIs(t, err, fsm.ErrRejected)
	require.Equal(t, fsm.ReasonUnauthorized, d.m.Reason())
}

// The retry budget: RetriesExhausted makes failed terminal (budget-spent);
// after canceled there is no retry at all.
func TestRetryBudgetAndCanceled(t *testing.T) {
	d := newDriver(t, fsm.Config{})
	vRef := verdict(classify.Transport, 0)
	d.step(fsm.Trigger{Kind: fsm.Started}, want{fsm.Connecting, []fsm.Command{dial(1)},
		ev(fsm.Idle, fsm.Connecting, fsm.Started, "resume-none", none, 1, 0, "")})
	d.step(failTrig(fsm.HandshakeFailed, 1, vRef), want{fsm.Failed, []fsm.Command{retry(1, 1, vRef)},
		ev(fsm.Connecting, fsm.Failed, fsm.HandshakeFailed, "recoverable-verdict", vRef, 1, 1, "")})
	d.step(trig(fsm.RetryDue, 1), want{fsm.Connecting, []fsm.Command{dial(2)},
		ev(fsm.Failed, fsm.Connecting, fsm.RetryDue, "retrying+resume-none+session-budget-left", none, 2, 1, "")})
	d.step(failTrig(fsm.HandshakeFailed, 2, vRef), want{fsm.Failed, []fsm.Command{retry(2, 2, vRef)},
		ev(fsm.Connecting, fsm.Failed, fsm.HandshakeFailed, "recoverable-verdict", vRef, 2, 2, "")})
	d.step(trig(fsm.RetriesExhausted, 2), want{fsm.Failed, nil,
		ev(fsm.Failed, fsm.Failed, fsm.RetriesExhausted, "retrying", none, 2, 2, "budget-spent")})
	require.Equal(t, fsm.ReasonBudgetSpent, d.m.Reason())
	require.Equal(t, vRef, d.m.Verdict(), "the verdict that failed the connection is kept")

	d.step(fsm.Trigger{Kind: fsm.ReconnectRequested}, want{fsm.Connecting, []fsm.Command{dial(3)},
		ev(fsm.Failed, fsm.Connecting, fsm.ReconnectRequested, "resume-none+session-budget-left", none, 3, 0, "")})
	vCan := verdict(classify.Canceled, 0)
	d.step(failTrig(fsm.HandshakeFailed, 3, vCan), want{fsm.Failed, nil,
		ev(fsm.Connecting, fsm.Failed, fsm.HandshakeFailed, "fatal-verdict", vCan, 3, 0, "canceled")})
	require.Equal(t, fsm.ReasonCanceled, d.m.Reason())
}

// Close ends the server-side session; detach keeps it resumable; closed
// absorbs every later trigger without event or command.
func TestCloseDetachAndClosedAbsorbs(t *testing.T) {
	d := newDriver(t, fsm.Config{})
	d.toReady()
	d.step(fsm.Trigger{Kind: fsm.CloseRequested}, want{fsm.Closed, []fsm.Command{cmd(fsm.CloseSession, 1)},
		ev(fsm.Ready, fsm.Closed, fsm.CloseRequested, "", none, 1, 0, "")})
	for _, k := range fsm.TriggerKinds() {
		d.step(fsm.Trigger{Kind: k, Generation: 7, Verdict: verdict(classify.Transport, 0)}, want{fsm.Closed, nil, nil})
	}

	d2 := newDriver(t, fsm.Config{})
	d2.toReady()
	d2.step(fsm.Trigger{Kind: fsm.DetachRequested}, want{fsm.Closed, []fsm.Command{cmd(fsm.DetachSession, 1)},
		ev(fsm.Ready, fsm.Closed, fsm.DetachRequested, "", none, 1, 0, "")})
}

func TestStepErrors(t *testing.T) {
	m := fsm.New(fsm.Config{})
	_, err := m.Step(fsm.Trigger{Kind: fsm.Attached})
	var rej *fsm.RejectedError
	require.ErrorAs(t, err, &rej)
	require.Equal(t, fsm.Idle, rej.State)
	require.Equal(t, fsm.Attached, rej.Trigger)
	require.ErrorIs(t, err, fsm.ErrRejected)
	require.EqualError(t, err, "fsm: trigger attached not permitted in state idle")

	_, err = m.Step(fsm.Trigger{Kind: fsm.Started, Resume: fsm.ResumeMode(9)})
	require.ErrorAs(t, err, &rej)
	require.Equal(t, []string{"resume-none", "resume-blind", "resume-known"}, rej.Guards)

	_, err = m.Step(fsm.Trigger{Kind: fsm.Started})
	require.NoError(t, err)
	_, err = m.Step(fsm.Trigger{Kind: fsm.HandshakeFailed, Generation: 1})
	var ve *fsm.VerdictError
	require.ErrorAs(t, err, &ve)
	require.ErrorIs(t, err, fsm.ErrMissingVerdict)

	_, err = m.Step(fsm.Trigger{Kind: fsm.HandshakeSucceeded, Generation: 2})
	var ge *fsm.GenerationError
	require.ErrorAs(t, err, &ge)
	require.ErrorIs(t, err, fsm.ErrFutureGeneration)
	require.NotErrorIs(t, err, fsm.ErrStaleGeneration)
	require.Equal(t, fsm.Connecting, m.State())
}

// A fresh session whose handshake succeeded but whose listing is answered
// 403 keeps that session: the listing is retried on it, on the retry
// schedule, ListingRetries times; the next such failure replaces it.
func TestListingRetriedOnTheLiveSession(t *testing.T) {
	d := newDriver(t, fsm.Config{ListingRetries: 2})
	v403 := verdict(classify.Forbidden, 403)
	d.step(fsm.Trigger{Kind: fsm.Started}, want{fsm.Connecting, []fsm.Command{dial(1)},
		ev(fsm.Idle, fsm.Connecting, fsm.Started, "resume-none", none, 1, 0, "")})
	d.step(trig(fsm.HandshakeSucceeded, 1), want{fsm.Connecting, []fsm.Command{cmd(fsm.ListDeclared, 1)},
		ev(fsm.Connecting, fsm.Connecting, fsm.HandshakeSucceeded, "", none, 1, 0, "")})
	for n := 1; n <= 2; n++ {
		d.step(failTrig(fsm.DiscoveryFailed, 1, v403), want{fsm.Connecting, []fsm.Command{retry(1, n, v403)},
			ev(fsm.Connecting, fsm.Connecting, fsm.DiscoveryFailed, "listing-retry-left", v403, 1, n, "")})
		require.Equal(t, n, d.m.ListingRetries())
		d.step(trig(fsm.RetryDue, 1), want{fsm.Connecting, []fsm.Command{cmd(fsm.ListDeclared, 1)},
			ev(fsm.Connecting, fsm.Connecting, fsm.RetryDue, "listing-failed", none, 1, n, "")})
	}
	require.Equal(t, uint64(1), d.m.Generation(), "one session so far")
	d.step(failTrig(fsm.DiscoveryFailed, 1, v403), want{fsm.Failed, []fsm.Command{cmd(fsm.CloseSession, 1), retry(1, 3, v403)},
		ev(fsm.Connecting, fsm.Failed, fsm.DiscoveryFailed, "listing-retry-spent", v403, 1, 3, "")})
	d.step(trig(fsm.RetryDue, 1), want{fsm.Connecting, []fsm.Command{dial(2)},
		ev(fsm.Failed, fsm.Connecting, fsm.RetryDue, "retrying+resume-none+session-budget-left", none, 2, 3, "")})
	require.Zero(t, d.m.ListingRetries(), "a new session starts its own count")
	d.handshakeToReady(fsm.Connecting, 2, 3)
}

// A listing whose verdict says the session may be gone (transport,
// session-expired) replaces the session at once.
func TestListingLostSessionIsReplaced(t *testing.T) {
	for _, v := range []classify.Verdict{verdict(classify.Transport, 0), verdict(classify.SessionExpired, 404)} {
		t.Run(v.String(), func(t *testing.T) {
			d := newDriver(t, fsm.Config{})
			d.step(fsm.Trigger{Kind: fsm.Started}, want{fsm.Connecting, []fsm.Command{dial(1)},
				ev(fsm.Idle, fsm.Connecting, fsm.Started, "resume-none", none, 1, 0, "")})
			d.step(trig(fsm.HandshakeSucceeded, 1), want{fsm.Connecting, []fsm.Command{cmd(fsm.ListDeclared, 1)},
				ev(fsm.Connecting, fsm.Connecting, fsm.HandshakeSucceeded, "", none, 1, 0, "")})
			d.step(failTrig(fsm.DiscoveryFailed, 1, v), want{fsm.Failed, []fsm.Command{cmd(fsm.CloseSession, 1), retry(1, 1, v)},
				ev(fsm.Connecting, fsm.Failed, fsm.DiscoveryFailed, "listing-retry-spent", v, 1, 1, "")})
		})
	}
}
