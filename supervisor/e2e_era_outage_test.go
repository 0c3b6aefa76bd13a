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

// A server/discover whose event-stream answer breaks, or ends, before its
// response got no answer: MCP 2026-07-28 changelog item 9 (SEP-2575), "A
// broken response stream loses the in-flight request; clients MUST
// re-issue it as a new request with a new request ID". It is an outage, as
// a reset is, not a verdict on the era: the handshake is retried with a new
// discover, no initialize is sent, and the era never changes (the test
// server also serves initialize: a fallback would have held 2025 for
// EraReprobe).
func TestE2EDiscoverStreamBrokenIsAnOutage(t *testing.T) {
	cases := []struct {
		name   string
		action mcptest.Action
	}{
		{"reset mid-stream", mcptest.SSEThenReset("data:", "")},
		{"ended without the response", mcptest.SSE(": nothing yet", "")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newE2E2026(t, mcptest.Options{Tools: 1}, fastStream(supervisor.Config{}))
			e.srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Verb: http.MethodPost, Method: "server/discover", Occurrence: mcptest.First()}, Action: tc.action})
			e.start()
			require.Equal(t, "2026-07-28", e.version())
			require.Equal(t, 2, e.srv.Log().Count("server/discover"), "the lost discover, re-issued")
			require.Zero(t, e.srv.Log().Count("initialize"), "never taken for 2025")
			require.Empty(t, e.eraChanges(), "the era never changed")
			failed := transitionsOf(e.rec, events.TriggerHandshakeFailed)
			require.Len(t, failed, 1)
			require.Equal(t, "server/discover", failed[0].Verdict.Method, "%v", failed[0].Verdict)
			require.NoError(t, e.srv.Log().WaitCount(e.ctx, mcptest.ListenMethod, 1), "the 2026-07-28 push channel")
		})
	}
}

// A handshake whose server/discover met an outage fails with the
// discover's facts, not those of the fallback initialize the wire layer
// refused unsent: its status, its Retry-After and its method. So a 429's
// retry waits for Retry-After (RFC 9110 section 10.2.3; DESIGN.md section
// 3: rate-limited is retried "not before Retry-After"), as a 2025 server's
// 429 to initialize does, and nothing is sent before the clock moves.
func TestE2EDiscoverOutageVerdictIsTheDiscovers(t *testing.T) {
	t.Run("429 with Retry-After", func(t *testing.T) {
		clock := clockwork.NewFakeClock()
		e := newE2E2026(t, mcptest.Options{Tools: 1}, supervisor.Config{
			Observe:  supervisor.ObserveConfig{Clock: clock},
			Stream:   supervisor.StreamConfig{Policy: supervisor.StreamOff},
			Limits:   supervisor.LimitsConfig{CatalogPollInterval: -1},
			Recovery: supervisor.RecoveryConfig{Backoff: supervisor.Backoff{InitialInterval: 10 * time.Millisecond, NoJitter: true}},
		})
		e.srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Verb: http.MethodPost, Method: "server/discover", Occurrence: mcptest.First()},
			Action: mcptest.Respond(http.StatusTooManyRequests, http.Header{"Retry-After": {"3"}, "Content-Type": {"text/plain"}}, []byte("slow down"))})
		e.sup.Start()
		evs, err := e.rec.WaitFor(e.ctx, func(evs []events.Event) bool { return len(ofKind(evs, events.KindRetryScheduled)) == 1 })
		require.NoError(t, err)
		ev := ofKind(evs, events.KindRetryScheduled)[0]
		v := ev.Verdict
		require.Equal(t, classify.RateLimited, v.Class, "%v", v)
		require.Equal(t, http.StatusTooManyRequests, v.HTTPStatus)
		require.Equal(t, 3*time.Second, v.RetryAfter)
		require.Equal(t, "server/discover", v.Method)
		require.GreaterOrEqual(t, ev.Delay, 3*time.Second, "not before Retry-After")
		require.Equal(t, 1, e.srv.Log().Count("server/discover"), "nothing sent before the clock moves")
		require.Zero(t, e.srv.Log().Count("initialize"))

		clock.Advance(ev.Delay)
		require.NoError(t, e.sup.WaitForState(e.ctx, supervisor.Ready))
		require.Equal(t, "2026-07-28", e.version())
		require.Equal(t, 2, e.srv.Log().Count("server/discover"))
		require.Zero(t, e.srv.Log().Count("initialize"))
	})

	cases := []struct {
		name   string
		opts   mcptest.Options
		cfg    supervisor.Config
		action mcptest.Action
		class  classify.Class
		status int
	}{
		{"503", mcptest.Options{Tools: 1}, supervisor.Config{}, mcptest.PlainText(http.StatusServiceUnavailable, "busy"), classify.ServerError, http.StatusServiceUnavailable},
		// Held until our DiscoveryTimeout ends the request (the gateway
		// sends nothing on once it did).
		{"held past DiscoveryTimeout", mcptest.Options{Tools: 1, MaxHold: time.Minute}, supervisor.Config{Recovery: supervisor.RecoveryConfig{DiscoveryTimeout: slowDiscovery}},
			mcptest.Delay(time.Hour), classify.Timeout, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Recovery.Backoff = supervisor.Backoff{InitialInterval: 10 * time.Millisecond}
			e := newE2E2026(t, tc.opts, fastStream(tc.cfg))
			e.srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Verb: http.MethodPost, Method: "server/discover", Occurrence: mcptest.First()}, Action: tc.action})
			e.start()
			require.Equal(t, "2026-07-28", e.version())
			failed := transitionsOf(e.rec, events.TriggerHandshakeFailed)
			require.Len(t, failed, 1)
			v := failed[0].Verdict
			require.Equal(t, tc.class, v.Class, "%v", v)
			require.Equal(t, tc.status, v.HTTPStatus)
			require.Equal(t, "server/discover", v.Method)
			require.Zero(t, e.srv.Log().Count("initialize"))
		})
	}
}
