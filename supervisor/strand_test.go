package supervisor

import (
	"errors"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
)

// A server down for ten minutes is retried on the default schedule (fast,
// then every MaxInterval) and reconnected when it returns: never terminal.
func TestServerDownTenMinutesIsReconnectedNeverTerminal(t *testing.T) {
	r := newRig(t, Config{})
	r.sup.Start()
	start := r.clock.Now()
	r.next().fail(errRefused)
	for n := 1; r.clock.Now().Sub(start) < 10*time.Minute; n++ {
		retries := r.waitEvents(events.KindRetryScheduled, n)
		d := retries[n-1].Delay
		require.LessOrEqual(t, d, 30*time.Second, "attempt %d: capped at Backoff.MaxInterval", n)
		require.NoError(t, r.clock.BlockUntilContext(r.ctx, 1))
		r.clock.Advance(d)
		req := r.next()
		reason, _ := r.sup.Failure()
		require.Equal(t, ReasonNone, reason, "attempt %d: still retrying", n)
		req.fail(errRefused)
	}
	retries := r.waitEvents(events.KindRetryScheduled, 1)
	require.Greater(t, len(retries), 20, "ten minutes of retries")
	require.Equal(t, 30*time.Second, retries[len(retries)-1].Delay, "the slow capped interval")
	require.NoError(t, r.clock.BlockUntilContext(r.ctx, 1))
	r.clock.Advance(30 * time.Second)
	r.next().ok(newFakeSession("back", "a"))
	r.wait(Ready)
	for _, e := range r.eventsOf(events.KindTransition) {
		require.NotEqual(t, ReasonBudgetSpent, e.Reason, "no budget by default")
	}
}

// The bounded budget stays an option: MaxElapsed ends an outage in
// budget-spent.
func TestMaxElapsedBoundsAnOutage(t *testing.T) {
	r := newRig(t, Config{Recovery: RecoveryConfig{Backoff: Backoff{MaxElapsed: time.Minute}}})
	r.sup.Start()
	r.next().fail(errRefused)
	for n := 1; ; n++ {
		if reason, _ := r.sup.Failure(); reason == ReasonBudgetSpent {
			break
		}
		retries := r.waitEvents(events.KindRetryScheduled, n)
		require.NoError(t, r.clock.BlockUntilContext(r.ctx, 1))
		r.clock.Advance(retries[n-1].Delay)
		r.next().fail(errRefused)
		r.until("retry or budget", func() bool {
			reason, _ := r.sup.Failure()
			return reason == ReasonBudgetSpent || len(r.eventsOf(events.KindRetryScheduled)) > n
		})
	}
	require.LessOrEqual(t, r.clock.Now().Sub(time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)), 2*time.Minute)
}

// Churn is terminal for Config.Recovery.ChurnCooldown, then the supervisor tries again.
func TestChurnCoolsDownAndRetries(t *testing.T) {
	r := newRig(t, Config{Recovery: RecoveryConfig{MaxSessions: 2, ChurnWindow: time.Minute}})
	r.sup.Start()
	for i := 0; i < 2; i++ {
		s := newFakeSession("s", "a")
		r.next().ok(s)
		r.wait(Ready)
		s.die(errors.New("gone"))
	}
	r.waitReason(ReasonChurn)
	churnAt := r.clock.Now()
	require.Equal(t, uint64(2), r.sup.Generation())

	r.clock.Advance(DefaultChurnCooldown)
	req := r.next()
	require.Equal(t, uint64(3), req.spec.gen)
	require.GreaterOrEqual(t, r.clock.Now().Sub(churnAt), DefaultChurnCooldown)
	req.ok(newFakeSession("s3", "a"))
	r.wait(Ready)
	var cooled []events.Event
	for _, e := range r.eventsOf(events.KindTransition) {
		if e.Trigger == events.TriggerChurnCooled {
			cooled = append(cooled, e)
		}
	}
	require.Len(t, cooled, 1)
	require.Equal(t, Connecting, cooled[0].To)
}

// A Reconnect storm opens at most MaxSessions sessions per ChurnWindow; the
// rest are held by churn and open nothing: the live session serves on.
func TestReconnectStormIsHeldByChurn(t *testing.T) {
	r := newRig(t, Config{Recovery: RecoveryConfig{MaxSessions: 5, ChurnWindow: time.Hour}})
	r.ready(newFakeSession("s1", "a"))
	for r.sup.Generation() < 5 {
		r.sup.Reconnect()
		r.next().ok(newFakeSession("s", "a"))
		r.wait(Ready)
	}
	for i := 0; i < 19; i++ {
		r.sup.Reconnect()
	}
	r.until("every reconnect taken", func() bool {
		n := 0
		for _, e := range r.eventsOf(events.KindTransition) {
			if e.Trigger == events.TriggerReconnectRequested {
				n++
			}
		}
		return n == 4+19
	})
	require.Equal(t, Ready, r.sup.State(), "the live session is kept")
	require.Equal(t, uint64(5), r.sup.Generation(), "5 sessions, not 24")
	require.Empty(t, r.conn.reqs, "no Dial past the churn limit")
	require.Equal(t, 5, r.sup.SessionsOpened())
	_, err := r.sup.CallTool(r.ctx, &mcp.CallToolParams{Name: "a"})
	require.NoError(t, err, "the session kept serves")
}

// After Reconnect, WaitForState(Ready) waits for the new attempt instead of
// returning the terminal failure Reconnect was called from.
func TestWaitForStateAfterReconnectWaits(t *testing.T) {
	r := newRig(t, Config{})
	r.sup.Start()
	r.next().fail(&classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", Method: "initialize", Status: 401}})
	r.waitReason(ReasonUnauthorized)
	require.ErrorIs(t, r.sup.WaitForState(r.ctx, Ready), ErrNotReady, "terminal before Reconnect")

	r.sup.Reconnect()
	done := make(chan error, 1)
	go func() { done <- r.sup.WaitForState(r.ctx, Ready) }()
	r.next().ok(newFakeSession("s2", "a"))
	require.NoError(t, <-done)

	// A reconnect that fails again reports that failure.
	r2 := newRig(t, Config{})
	r2.sup.Start()
	unauth := &classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", Method: "initialize", Status: 401}}
	r2.next().fail(unauth)
	r2.waitReason(ReasonUnauthorized)
	r2.sup.Reconnect()
	go func() { done <- r2.sup.WaitForState(r2.ctx, Ready) }()
	r2.next().fail(unauth)
	var se *StateError
	require.ErrorAs(t, <-done, &se)
	require.Equal(t, ReasonUnauthorized, se.Reason)
	require.Equal(t, uint64(2), r2.sup.Generation())
}
