package supervisor_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/supervisor"
)

// quickRetries is a deterministic, short retry schedule for tests on a real
// server.
var quickRetries = supervisor.Backoff{InitialInterval: 5 * time.Millisecond, MaxInterval: 20 * time.Millisecond, NoJitter: true}

// A fresh connect whose handshake succeeds but whose tools/list is answered
// 403 by a WAF page keeps the healthy session: every retry sends only the
// list, on the same session; no new initialize, no DELETE.
func TestE2EForbiddenListingIsRetriedOnTheSession(t *testing.T) {
	e := newE2E(t, mcptest.Options{Tools: 2, Prompts: 1}, supervisor.Config{Recovery: supervisor.RecoveryConfig{Backoff: quickRetries}})
	e.srv.Gateway().Add(mcptest.Rule{
		Match:  mcptest.Match{Verb: http.MethodPost, Method: "tools/list", Occurrence: mcptest.FirstN(3)},
		Action: mcptest.HTML(http.StatusForbidden, mcptest.ForbiddenPage),
	})
	e.start()

	log := e.srv.Log()
	require.Equal(t, 1, log.Count("initialize"), "one handshake")
	require.Equal(t, 1, log.Count("notifications/initialized"))
	require.Zero(t, log.CountVerb(http.MethodDelete), "the session was never thrown away")
	require.Equal(t, 4, log.Count("tools/list"), "three refusals, then the list")
	require.Equal(t, 1, log.Count("prompts/list"), "what settled is not listed again")
	require.Zero(t, log.Count("notifications/cancelled"), "nothing was cut off")
	require.Equal(t, uint64(1), e.sup.Generation())
	sessions := map[string]bool{}
	for _, en := range log.Entries() {
		if en.Method == "tools/list" {
			sessions[en.SessionID] = true
		}
	}
	require.Len(t, sessions, 1, "every listing went to the one session")
	require.ElementsMatch(t, e.srv.ToolNames(), e.sup.Catalog().ToolNames())

	var kept int
	for _, ev := range e.rec.Events() {
		if ev.Kind == events.KindTransition && ev.Trigger == events.TriggerDiscoveryFailed {
			require.Equal(t, supervisor.Connecting, ev.To, "kept in connecting")
			require.Equal(t, classify.Forbidden, ev.Verdict.Class)
			kept++
		}
	}
	require.Equal(t, 3, kept)
	require.NoError(t, e.call("a"), "the session serves calls")
}

// Past Config.Recovery.ListingRetries the session is replaced; a listing that fails
// with transport replaces it at once.
func TestE2EListingRetriesSpentReplaceTheSession(t *testing.T) {
	e := newE2E(t, mcptest.Options{Tools: 1}, supervisor.Config{Recovery: supervisor.RecoveryConfig{Backoff: quickRetries, ListingRetries: 1}})
	e.srv.Gateway().Add(mcptest.Rule{
		Match:  mcptest.Match{Verb: http.MethodPost, Method: "tools/list", Occurrence: mcptest.FirstN(2)},
		Action: mcptest.PlainText(http.StatusServiceUnavailable, "busy"),
	})
	e.srv.Gateway().Add(mcptest.Rule{
		Match:  mcptest.Match{Verb: http.MethodPost, Method: "tools/list", Occurrence: mcptest.Nth(3)},
		Action: mcptest.Reset(),
	})
	e.start()
	log := e.srv.Log()
	require.Equal(t, 3, log.Count("initialize"), "503, 503: the retry spent; reset: at once")
	require.Equal(t, 4, log.Count("tools/list"))
	require.Equal(t, uint64(3), e.sup.Generation())
}

// A server that serves tools without declaring the tools capability: they
// are listed and callable. A server with no tools at all answers -32601:
// ready, with no tools.
func TestE2EUndeclaredToolsAreListedAndCallable(t *testing.T) {
	e := newE2E(t, mcptest.Options{Tools: 1, UndeclaredTools: true}, supervisor.Config{})
	e.start()
	require.ElementsMatch(t, e.srv.ToolNames(), e.sup.Catalog().ToolNames())
	require.NoError(t, e.call("u"))
	require.Equal(t, 1, e.srv.Invocations(mcptest.RecordTool, "u"))

	none := newE2E(t, mcptest.Options{WithoutTools: true, Prompts: 1}, supervisor.Config{})
	none.start()
	require.Empty(t, none.sup.Catalog().Tools)
	require.Len(t, none.sup.Catalog().Prompts, 1)
	require.Equal(t, 1, none.srv.Log().Count("tools/list"), "tried once, answered -32601")
	require.Equal(t, 1, none.srv.Log().Count("initialize"))
}

// A connection reset on one tools/call of a live session costs one ping on
// that session: answered, the session and the generation stay, and the
// call alone fails, outcome unknown.
func TestE2EResetOnACallIsVerifiedWithOnePing(t *testing.T) {
	e := newE2E(t, mcptest.Options{Tools: 1}, supervisor.Config{})
	e.start()
	log := e.srv.Log()
	require.NoError(t, log.WaitVerb(e.ctx, http.MethodGet, 1), "the stream is open")
	e.srv.Gateway().Add(mcptest.Rule{
		Match:  mcptest.Match{Verb: http.MethodPost, Method: "tools/call", Occurrence: mcptest.First()},
		Action: mcptest.Reset(),
	})
	before := len(log.Entries())

	err := e.call("blip")
	var ce *supervisor.CallError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, classify.Transport, ce.Verdict.Class, "verdict %s", ce.Verdict)
	require.Equal(t, supervisor.OutcomeUnknown, ce.Delivery)
	evs, err := e.rec.WaitFor(e.ctx, func(evs []events.Event) bool { return countKind(evs, events.KindSessionVerified) == 1 })
	require.NoError(t, err)
	for _, ev := range evs {
		if ev.Kind == events.KindSessionVerified {
			require.Equal(t, classify.None, ev.Verdict.Class, "answered: %s", ev.Detail)
		}
		require.NotEqual(t, events.TriggerSessionDied, ev.Trigger)
	}
	require.Equal(t, supervisor.Ready, e.sup.State())

	after := log.Entries()[before:]
	methods := make([]string, len(after))
	for i, en := range after {
		methods[i] = en.Verb + " " + en.Method
	}
	require.Equal(t, []string{"POST tools/call", "POST ping"}, methods, "one extra request")
	require.Equal(t, after[0].SessionID, after[1].SessionID, "the ping went to the same session")
	require.Equal(t, uint64(1), e.sup.Generation())
	require.Zero(t, log.CountVerb(http.MethodDelete))
	require.NoError(t, e.call("next"), "the session serves the next call")
	require.Equal(t, 1, log.Count("initialize"))
	require.Zero(t, e.srv.Invocations(mcptest.RecordTool, "blip"), "the gateway cut it before the server")
}

// The ping unanswered too: the session is replaced, without DELETE.
func TestE2EResetOnACallAndItsPingReplacesTheSession(t *testing.T) {
	e := newE2E(t, mcptest.Options{Tools: 1}, supervisor.Config{Stream: supervisor.StreamConfig{Policy: supervisor.StreamOff}})
	e.start()
	e.srv.Gateway().Add(mcptest.Rule{
		Match:  mcptest.Match{Verb: http.MethodPost, Method: "tools/call", Occurrence: mcptest.First()},
		Action: mcptest.Reset(),
	})
	e.srv.Gateway().Add(mcptest.Rule{
		Match:  mcptest.Match{Verb: http.MethodPost, Method: "ping", Occurrence: mcptest.First()},
		Action: mcptest.Reset(),
	})
	require.Error(t, e.call("blip"))
	require.NoError(t, e.call("next"), "waits for the new session")
	require.Equal(t, uint64(2), e.sup.Generation())
	require.Equal(t, 1, e.srv.Log().Count("ping"))
	require.Equal(t, 2, e.srv.Log().Count("initialize"))
	require.Zero(t, e.srv.Log().CountVerb(http.MethodDelete), "the dead session is detached")
	sessions := map[string]bool{}
	for _, en := range e.srv.Log().Entries() {
		if en.Method == "tools/call" {
			sessions[en.SessionID] = true
		}
	}
	require.Len(t, sessions, 2, "the next call waited for the new session")
}

// The resend policy, with recording tools that count executions at the
// server: the server runs the call and the answer is lost (outcome
// unknown). An idempotent-annotated tool is sent once more after recovery
// (executed twice, once per send); every other tool, and every tool under
// the default policy, is executed at most once.
func TestE2EResendPolicy(t *testing.T) {
	cases := []struct {
		name    string
		policy  supervisor.ResendPolicy
		tool    string
		runs    int
		resent  bool
		failure bool
	}{
		{"safe, idempotent tool", supervisor.ResendSafe, mcptest.IdempotentRecordTool, 2, true, false},
		{"safe, plain tool", supervisor.ResendSafe, mcptest.RecordTool, 1, false, true},
		{"never, idempotent tool", supervisor.ResendNever, mcptest.IdempotentRecordTool, 1, false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newE2E(t, mcptest.Options{IdempotentRecord: true}, supervisor.Config{Recovery: supervisor.RecoveryConfig{Resend: tc.policy}})
			e.start()
			e.srv.Gateway().Add(mcptest.Rule{
				Match:  mcptest.Match{Verb: http.MethodPost, Method: "tools/call", Occurrence: mcptest.First()},
				Action: mcptest.ResetAfterServer(),
			})
			_, err := e.sup.CallTool(e.ctx, &mcp.CallToolParams{Name: tc.tool, Arguments: mcptest.IDArgs{ID: "r"}})
			if tc.failure {
				var ce *supervisor.CallError
				require.ErrorAs(t, err, &ce)
				require.Equal(t, supervisor.OutcomeUnknown, ce.Delivery)
			} else {
				require.NoError(t, err, "the second send was answered")
			}
			require.Equal(t, tc.runs, e.srv.Invocations(tc.tool, "r"), "executions at the server")
			require.Equal(t, tc.runs, e.srv.Log().Count("tools/call"), "sends")
			settle(t, e.ctx, e.sup, e.rec, supervisor.Ready)
			resent := e.eventsOf(events.KindCallResent)
			if !tc.resent {
				require.Empty(t, resent)
				return
			}
			require.Len(t, resent, 1)
			require.Equal(t, tc.tool, resent[0].Name)
			require.Equal(t, "outcome-unknown", resent[0].Delivery)
			require.Equal(t, classify.Transport, resent[0].Verdict.Class)
			require.Equal(t, uint64(1), e.sup.Generation(), "the verified session served the resend")
		})
	}
}

// A server that restarted while the host was idle refuses the host's next
// call 404 for its session (session-expired): the tool never ran, so the
// CallError is Resendable, and under ResendSafe the new session serves the
// call once, a plain tool included.
func TestE2ESessionExpiredCallIsResendable(t *testing.T) {
	for _, policy := range []supervisor.ResendPolicy{supervisor.ResendSafe, supervisor.ResendNever} {
		t.Run(policy.String(), func(t *testing.T) {
			// No standalone stream: nothing but the call finds the expiry.
			e := newE2E(t, mcptest.Options{}, supervisor.Config{Recovery: supervisor.RecoveryConfig{Resend: policy}, Stream: supervisor.StreamConfig{Policy: supervisor.StreamOff}})
			e.start()
			require.Equal(t, 1, e.srv.ExpireAll())
			err := e.call("r")
			if policy == supervisor.ResendNever {
				var ce *supervisor.CallError
				require.ErrorAs(t, err, &ce)
				require.Equal(t, classify.SessionExpired, ce.Verdict.Class)
				require.Equal(t, supervisor.Answered, ce.Delivery)
				require.True(t, ce.Resendable(), "refused for its session: never run")
				require.Zero(t, e.srv.Invocations(mcptest.RecordTool, "r"))
				require.Equal(t, 1, e.srv.Log().Count("tools/call"))
				return
			}
			require.NoError(t, err, "the new session served the resend")
			require.Equal(t, 1, e.srv.Invocations(mcptest.RecordTool, "r"), "the plain tool ran once")
			require.Equal(t, 2, e.srv.Log().Count("tools/call"), "refused once, sent once more")
			require.Equal(t, uint64(2), e.sup.Generation())
			resent := e.eventsOf(events.KindCallResent)
			require.Len(t, resent, 1)
			require.Equal(t, classify.SessionExpired, resent[0].Verdict.Class)
			require.Equal(t, "answered", resent[0].Delivery)
		})
	}
}

// A 2026-07-28 session has no ping (go-sdk serves it only before): its
// transport failure is verified with one server/discover, the era's cheap
// request, and the session stays.
func TestE2EResetOnA2026SessionIsVerifiedWithOneDiscover(t *testing.T) {
	e := newE2E(t, mcptest.Options{Mode: mcptest.Sessionless2026, Tools: 1}, supervisor.Config{})
	e.start()
	e.srv.Gateway().Add(mcptest.Rule{
		Match:  mcptest.Match{Verb: http.MethodPost, Method: "tools/call", Occurrence: mcptest.First()},
		Action: mcptest.Reset(),
	})
	discovers := e.srv.Log().Count("server/discover")
	require.Error(t, e.call("blip"))
	require.NoError(t, e.call("next"))
	require.Equal(t, uint64(1), e.sup.Generation(), "the session was verified, not replaced")
	require.Equal(t, discovers+1, e.srv.Log().Count("server/discover"), "one server/discover verified it")
	require.Zero(t, e.srv.Log().Count("ping"), "the 2026-07-28 era has no ping")
}

// Never twice: when the resend's answer is lost too, its error is returned
// and the tool ran twice, once per send.
func TestE2EResendIsSentOnce(t *testing.T) {
	e := newE2E(t, mcptest.Options{IdempotentRecord: true}, supervisor.Config{Recovery: supervisor.RecoveryConfig{Resend: supervisor.ResendSafe}})
	e.start()
	e.srv.Gateway().Add(mcptest.Rule{
		Match:  mcptest.Match{Verb: http.MethodPost, Method: "tools/call", Occurrence: mcptest.FirstN(2)},
		Action: mcptest.ResetAfterServer(),
	})
	_, err := e.sup.CallTool(e.ctx, &mcp.CallToolParams{Name: mcptest.IdempotentRecordTool, Arguments: mcptest.IDArgs{ID: "r"}})
	var ce *supervisor.CallError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, supervisor.OutcomeUnknown, ce.Delivery)
	require.Equal(t, 2, e.srv.Invocations(mcptest.IdempotentRecordTool, "r"))
	require.Equal(t, 2, e.srv.Log().Count("tools/call"))
	settle(t, e.ctx, e.sup, e.rec, supervisor.Ready)
	require.Len(t, e.eventsOf(events.KindCallResent), 1)
}

// A bounded retry budget covers the listing retries too: spent, the
// session is closed and the failed state is terminal (budget-spent).
func TestE2EListingRetriesSpendABoundedBudget(t *testing.T) {
	b := quickRetries
	b.MaxAttempts = 2
	e := newE2E(t, mcptest.Options{Tools: 1}, supervisor.Config{Recovery: supervisor.RecoveryConfig{Backoff: b}})
	e.srv.Gateway().Add(mcptest.Rule{
		Match:  mcptest.Match{Verb: http.MethodPost, Method: "tools/list"},
		Action: mcptest.HTML(http.StatusForbidden, mcptest.ForbiddenPage),
	})
	e.sup.Start()
	require.NoError(t, e.sup.WaitForState(e.ctx, supervisor.Failed))
	settle(t, e.ctx, e.sup, e.rec, supervisor.Failed)
	reason, v := e.sup.Failure()
	require.Equal(t, supervisor.ReasonBudgetSpent, reason)
	require.Equal(t, classify.Forbidden, v.Class)
	require.Equal(t, 3, e.srv.Log().Count("tools/list"), "the first listing and two retries")
	require.Equal(t, 1, e.srv.Log().Count("initialize"))
	require.NoError(t, e.srv.Log().WaitVerb(e.ctx, http.MethodDelete, 1), "the session is closed")
}
