package supervisor_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/supervisor"
)

// slowDiscovery bounds each discovery at one second (a handshake under
// load stays well within it); the first tools/list is held by the gateway
// until the client gives up on it, and never reaches the server.
const slowDiscovery = time.Second

func holdFirstToolsList(srv *mcptest.Server) {
	srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Verb: "POST", Method: "tools/list", Occurrence: mcptest.FirstN(1)},
		Action: mcptest.Delay(time.Hour)}) // held until the request ends (bounded by the gateway's MaxHold)
}

// transitionsOf returns the transitions rec holds whose trigger is trig.
func transitionsOf(rec *events.Recorder, trig events.Trigger) []events.Event {
	var out []events.Event
	for _, ev := range rec.Events() {
		if ev.Kind == events.KindTransition && ev.Trigger == trig {
			out = append(out, ev)
		}
	}
	return out
}

// A listing that outlives Config.Recovery.DiscoveryTimeout met our own deadline, not
// the host's cancellation (DESIGN.md section 3: "timeout: our own deadline
// (discovery timeout, HTTP client timeout)", retried; "canceled: the
// caller's context is done", never retried): its verdict is timeout and the
// supervisor recovers, where it ended in a terminal failed (canceled).
func TestE2EListingPastDiscoveryTimeoutIsTimeout(t *testing.T) {
	cfg := func(listingRetries int) supervisor.Config {
		return fastStream(supervisor.Config{Recovery: supervisor.RecoveryConfig{DiscoveryTimeout: slowDiscovery, ListingRetries: listingRetries}, Limits: supervisor.LimitsConfig{CatalogPollInterval: -1}})
	}
	timedOut := func(t *testing.T, rec *events.Recorder, from, to supervisor.State) {
		t.Helper()
		failed := transitionsOf(rec, events.TriggerDiscoveryFailed)
		require.NotEmpty(t, failed)
		ev := failed[0]
		require.Equal(t, classify.Timeout, ev.Verdict.Class, "%v", ev.Verdict)
		require.Equal(t, "tools/list", ev.Verdict.Method)
		require.Equal(t, from, ev.From)
		require.Equal(t, to, ev.To)
		require.Empty(t, ev.Reason, "not terminal")
	}

	t.Run("fresh connect retries the listing on its session", func(t *testing.T) {
		e := newE2E(t, mcptest.Options{Tools: 2}, cfg(0))
		holdFirstToolsList(e.srv)
		e.start()
		timedOut(t, e.rec, supervisor.Connecting, supervisor.Connecting)
		require.Equal(t, uint64(1), e.sup.Generation(), "the session is kept: a slow server is no dead session")
		require.Equal(t, 2, e.srv.Log().Count("tools/list"), "the held listing, then its retry")
		require.Equal(t, 1, e.srv.Log().Count("initialize"))
		require.ElementsMatch(t, e.srv.ToolNames(), e.sup.Catalog().ToolNames())
	})

	t.Run("fresh connect without listing retries fails and connects again", func(t *testing.T) {
		e := newE2E(t, mcptest.Options{Tools: 2}, cfg(-1))
		holdFirstToolsList(e.srv)
		e.start()
		timedOut(t, e.rec, supervisor.Connecting, supervisor.Failed)
		require.NotEmpty(t, transitionsOf(e.rec, events.TriggerRetryDue), "failed, then connecting again")
		require.Equal(t, uint64(2), e.sup.Generation())
		require.Equal(t, 2, e.srv.Log().Count("initialize"), "a new session")
		require.ElementsMatch(t, e.srv.ToolNames(), e.sup.Catalog().ToolNames())
	})

	t.Run("blind resume fails and re-attaches its session", func(t *testing.T) {
		e := newE2E(t, mcptest.Options{Tools: 2}, supervisor.Config{})
		rs := persisted(t, e, true)
		holdFirstToolsList(e.srv)
		sup, rec := resumeE2E(t, e, rs, cfg(0))
		sup.Start()
		require.NoError(t, sup.WaitForState(e.ctx, supervisor.Ready), "state %s", sup.State())
		settle(t, e.ctx, sup, rec, supervisor.Ready)
		timedOut(t, rec, supervisor.Probing, supervisor.Failed)
		retried := transitionsOf(rec, events.TriggerRetryDue)
		require.NotEmpty(t, retried)
		require.Equal(t, supervisor.ResumingBlind, retried[0].To, "our own deadline is no evidence the session expired: the retry re-attaches it")
		require.Zero(t, countTransitions(rec, supervisor.StaleRecovering), "our own timeout is no stale session")
		require.Zero(t, e.srv.Log().Count("initialize"), "the resume paid no initialize")
		require.ElementsMatch(t, e.srv.ToolNames(), sup.Catalog().ToolNames())
	})
}
