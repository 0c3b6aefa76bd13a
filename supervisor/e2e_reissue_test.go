package supervisor_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/supervisor"
)

// brokenStream is a tools/call answer whose event stream breaks before its
// response, after the server ran the call: a SEP-1699 priming event (an
// event id, which 2025-11-25 would resume after) and a reset.
func brokenStream(occ mcptest.Occurrence) mcptest.Rule {
	return mcptest.Rule{
		Match:  mcptest.Match{Verb: http.MethodPost, Method: "tools/call", Occurrence: occ},
		Action: mcptest.ServerThen(mcptest.SSEThenReset("id: 1", "retry: 1", "data:", "")),
	}
}

// toolCalls returns the JSON-RPC ids of the tools/call requests the server
// was sent, in order.
func (e *e2e) toolCalls() []string {
	var ids []string
	for _, x := range e.srv.Log().Entries() {
		if x.Method == "tools/call" {
			ids = append(ids, x.ID)
		}
	}
	return ids
}

// requireNoResumption checks that no request tried to resume a stream: no
// GET and no Last-Event-ID, as 2026-07-28 removed resumption (changelog
// item 9; transports: "Resumable SSE streams via Last-Event-ID are not
// supported").
func (e *e2e) requireNoResumption() {
	e.t.Helper()
	require.Zero(e.t, e.srv.Log().CountVerb(http.MethodGet), "no GET on 2026-07-28")
	for _, x := range e.srv.Log().Entries() {
		require.Empty(e.t, x.LastEventID, "no Last-Event-ID: %+v", x)
	}
}

// The 2026-07-28 changelog, item 9 (SEP-2575): "A broken response stream
// loses the in-flight request; clients MUST re-issue it as a new request
// with a new request ID." A call whose stream breaks is re-issued once, at
// once, with a new id: the server sees two tools/call requests (the first
// ran too: a tool that is not idempotent runs twice, which Config.Recovery.NoReissue
// prevents), a call-reissued event names both ids, and nothing tries to
// resume the stream.
func TestE2EBrokenStreamIsReissuedWithANewID(t *testing.T) {
	e := newE2E2026(t, mcptest.Options{}, supervisor.Config{})
	e.start()
	e.srv.Gateway().Add(brokenStream(mcptest.First()))

	require.NoError(t, e.call("r"), "the re-issued request is answered")

	ids := e.toolCalls()
	require.Len(t, ids, 2, "the original request and one re-issue")
	require.NotEqual(t, ids[0], ids[1], "the re-issue has a new request id")
	require.Equal(t, 2, e.srv.Invocations(mcptest.RecordTool, "r"), "the server ran both requests")
	e.requireNoResumption()

	re := e.eventsOf(events.KindCallReissued)
	require.Len(t, re, 1)
	assert.Equal(t, ids[0], re[0].RequestID)
	assert.Equal(t, ids[1], re[0].ReissuedAs)
	assert.Equal(t, classify.Transport, re[0].Verdict.Class, "a reset mid-stream is no complete HTTP answer")
	assert.Equal(t, events.DeliveryOutcomeUnknown, re[0].Delivery)
	assert.Empty(t, e.eventsOf(events.KindCallResent), "a re-issue, not a resend")
}

// A re-issued call that fails again names both attempts: the CallError is
// the second's, its First the lost request's, and no third request is sent.
func TestE2EReissuedCallFailingAgainNamesBothAttempts(t *testing.T) {
	e := newE2E2026(t, mcptest.Options{}, supervisor.Config{Recovery: supervisor.RecoveryConfig{Resend: supervisor.ResendSafe}})
	e.start()
	e.srv.Gateway().Add(brokenStream(mcptest.FirstN(2)))

	err := e.call("r")
	var ce *supervisor.CallError
	require.ErrorAs(t, err, &ce)
	ids := e.toolCalls()
	require.Len(t, ids, 2, "one re-issue, never more (and no resend on top)")
	require.NotEqual(t, ids[0], ids[1])
	require.NotNil(t, ce.First, "the error names the first attempt")
	assert.Equal(t, ids[0], ce.First.RequestID)
	assert.Equal(t, ids[1], ce.RequestID)
	assert.Equal(t, classify.Transport, ce.Verdict.Class)
	assert.Equal(t, classify.Transport, ce.First.Verdict.Class)
	assert.Equal(t, supervisor.OutcomeUnknown, ce.Delivery)
	assert.Contains(t, err.Error(), "sent twice, first attempt (request "+ids[0]+")")
	e.requireNoResumption()
	require.Len(t, e.eventsOf(events.KindCallReissued), 1)
}

// Config.Recovery.NoReissue is the host's at-most-once opt-out: the call fails with
// the broken stream's verdict, transport (a reset, outcome unknown), and
// exactly one request reached the server.
func TestE2EBrokenStreamNoReissueSendsOnce(t *testing.T) {
	e := newE2E2026(t, mcptest.Options{}, supervisor.Config{Recovery: supervisor.RecoveryConfig{NoReissue: true}})
	e.start()
	e.srv.Gateway().Add(brokenStream(mcptest.First()))

	err := e.call("r")
	var ce *supervisor.CallError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, classify.Transport, ce.Verdict.Class, "verdict %v", ce.Verdict)
	assert.Equal(t, supervisor.OutcomeUnknown, ce.Delivery)
	assert.Nil(t, ce.First)
	require.Len(t, e.toolCalls(), 1, "at most once")
	require.Equal(t, 1, e.srv.Invocations(mcptest.RecordTool, "r"))
	e.requireNoResumption()
	require.Empty(t, e.eventsOf(events.KindCallReissued))
}

// A proxy that cuts every listen stream once it is idle (after the
// server's acknowledgement) is no hostile gateway: the acknowledged
// listens do not fail at once (wire.StreamAttempt.Acknowledged), so the
// stream is never disabled and a tool the server adds later reaches the
// catalog through a listen, with polling off. The span is longer than the
// cut, so each cut listen would otherwise count toward the rule.
func TestE2EAcknowledgedListenCutIsNotHostile(t *testing.T) {
	cfg := fastStream(supervisor.Config{Limits: supervisor.LimitsConfig{CatalogPollInterval: -1}})
	cfg.Stream.Keeper.Span = time.Hour
	e := newE2E2026(t, mcptest.Options{Tools: 1}, cfg)
	cut := mcptest.ListenIdleCut(50 * time.Millisecond)
	cut.Match.Occurrence = mcptest.FirstN(4)
	e.srv.Gateway().Add(cut)
	e.start()

	// Four acknowledged listens cut, while calls succeed: with the old rule
	// the third made the server hostile and no fifth listen was sent.
	require.NoError(t, e.srv.Log().WaitFunc(e.ctx, 4, func(x mcptest.Entry) bool { return x.Method == mcptest.ListenMethod && x.Done }),
		"four listens were cut")
	require.NoError(t, e.call("probe"))
	require.NoError(t, e.srv.Log().WaitFunc(e.ctx, 5, func(x mcptest.Entry) bool { return x.Method == mcptest.ListenMethod && x.Status == 200 }),
		"the fifth listen was sent and acknowledged")
	require.NoError(t, e.call("probe2"))
	require.Empty(t, e.eventsOf(events.KindStreamDisabled))

	e.srv.AddTool("late-tool")
	e.waitTool("late-tool", "the listen carries list_changed")
	require.Empty(t, e.eventsOf(events.KindStreamDisabled))
	require.Equal(t, 1, e.sup.SessionsOpened())
}
