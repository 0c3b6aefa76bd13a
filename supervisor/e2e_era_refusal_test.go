package supervisor_test

import (
	"errors"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/supervisor"
)

// A server whose server/discover succeeds on 2026-07-28 while it answers
// every call 400 -32022, forever: each call fails alone, answered and
// classified with its JSON-RPC code, and the re-discovery the refusal asks
// for costs one session and one server/discover per Config.HTTP.EraReprobe on
// the clock, however many calls are refused; a refusal within the period
// does not use up the session's watch, so the first one after it
// re-discovers again.
func TestE2ECallsRefusedVersionForeverRediscoverOncePerPeriod(t *testing.T) {
	clock := clockwork.NewFakeClock()
	const reprobe = 10 * time.Minute
	e := newE2E2026(t, mcptest.Options{Tools: 1}, supervisor.Config{
		Observe: supervisor.ObserveConfig{Clock: clock},
		HTTP:    supervisor.HTTPConfig{EraReprobe: reprobe},
		Stream:  supervisor.StreamConfig{Policy: supervisor.StreamOff},
		Limits:  supervisor.LimitsConfig{CatalogPollInterval: -1},
	})
	e.srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Verb: "POST", Method: "tools/call"}, Action: refuseVersion()})
	e.start()
	refused := func() {
		t.Helper()
		err := e.call("refused")
		var ce *supervisor.CallError
		require.True(t, errors.As(err, &ce), "%v", err)
		require.Equal(t, int64(-32022), ce.Verdict.RPC.Code, "%v", err)
		require.Equal(t, classify.Application, ce.Verdict.Class)
		require.Equal(t, supervisor.Answered, ce.Delivery)
	}
	rediscovered := func(gen uint64) {
		t.Helper()
		for e.sup.Generation() < gen || e.sup.State() != supervisor.Ready {
			require.True(t, e.sup.WaitForStateChange(e.ctx, e.sup.State()), "generation %d never ready", gen)
		}
	}
	for period := range 2 {
		gen := uint64(2 + period)
		refused() // the refusal that asks for a re-discovery
		rediscovered(gen)
		for range 9 {
			refused()
		}
		require.Equal(t, int(gen), e.srv.Log().Count("server/discover"), "the handshake and one re-discovery per period")
		require.Equal(t, gen, e.sup.Generation())
		clock.Advance(reprobe)
	}
	require.Equal(t, 20, e.srv.Log().Count("tools/call"), "every call reached the server once")
	require.Zero(t, e.srv.Log().Count("initialize"), "discover answered: no fallback")
	require.Equal(t, "2026-07-28", e.version())
}
