package supervisor_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

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
			require.Empty(t, e.eraDetails(), "the era never changed")
			require.Len(t, transitionsOf(e.rec, events.TriggerHandshakeFailed), 1)
			require.NoError(t, e.srv.Log().WaitCount(e.ctx, mcptest.ListenMethod, 1), "the 2026-07-28 push channel")
		})
	}
}
