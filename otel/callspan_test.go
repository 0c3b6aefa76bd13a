package mcpsupotel_test

import (
	"context"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mcpsup/mcpsup/mcptest"
	mcpsupotel "github.com/mcpsup/mcpsup/otel"
	"github.com/mcpsup/mcpsup/supervisor"
)

// eventAttrs returns the attributes of the span's event named name.
func eventAttrs(t *testing.T, s tracetest.SpanStub, name string) map[attribute.Key]attribute.Value {
	t.Helper()
	for _, e := range s.Events {
		if e.Name == name {
			out := map[attribute.Key]attribute.Value{}
			for _, kv := range e.Attributes {
				out[kv.Key] = kv.Value
			}
			return out
		}
	}
	t.Fatalf("span %q has no event %q (events %v)", s.Name, name, s.Events)
	return nil
}

// A call made while the connection recovers carries the wait as an event of
// its call span, and a call whose failure costs the session says so; the
// request's client span is the call span's child.
func TestCallSpansCarryTheRecovery(t *testing.T) {
	h := newHarness(t, mcpsupotel.Options{})
	srv, err := mcptest.NewServer(mcptest.Options{Tools: 1})
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	clock := clockwork.NewFakeClock()
	// The first handshake is refused: the supervisor waits out its backoff
	// (500ms on the fake clock) in failed.
	srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Method: "initialize", Occurrence: mcptest.First()},
		Action: mcptest.PlainText(503, "busy")})
	sup := newSupervisor(t, srv, supervisor.Config{
		Name: "rec",
		Observe: supervisor.ObserveConfig{
			Clock:       clock,
			CallHandler: h.obs.CallHandler(),
		},
		Recovery: supervisor.RecoveryConfig{Backoff: supervisor.Backoff{NoJitter: true}},
		Client:   supervisor.ClientConfig{SendingMiddleware: []mcp.Middleware{h.obs.Middleware("rec")}},
	})
	sup.Start()
	require.NoError(t, sup.WaitForState(ctx, supervisor.Failed))

	errc := make(chan error, 1)
	go func() {
		_, err := sup.CallTool(ctx, &mcp.CallToolParams{Name: mcptest.RecordTool, Arguments: mcptest.IDArgs{ID: "waited"}})
		errc <- err
	}()
	require.NoError(t, clock.BlockUntilContext(ctx, 2), "the backoff timer and the call's MaxCallWait timer")
	clock.Advance(500 * time.Millisecond)
	require.NoError(t, <-errc)

	calls := h.spanNamed("mcpsup.call tools/call " + mcptest.RecordTool)
	require.Len(t, calls, 1)
	waited := calls[0]
	require.Equal(t, map[attribute.Key]attribute.Value{
		mcpsupotel.AttrState:              attribute.StringValue("failed"),
		mcpsupotel.AttrWaitDuration:       attribute.Float64Value(0.5),
		mcpsupotel.AttrGeneration:         attribute.Int64Value(2),
		mcpsupotel.AttrPreviousGeneration: attribute.Int64Value(1),
	}, eventAttrs(t, waited, mcpsupotel.EventWaitForReady))
	require.Equal(t, codes.Unset, waited.Status.Code)
	requests := h.spanNamed("tools/call " + mcptest.RecordTool)
	require.Len(t, requests, 1)
	require.Equal(t, waited.SpanContext.SpanID(), requests[0].Parent.SpanID(), "the request's span is the call span's child")
	require.Equal(t, waited.SpanContext.TraceID(), requests[0].SpanContext.TraceID())

	// A 404 to a call that carried the session id: the session expired, and
	// the supervisor replaces it.
	srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Method: "tools/call", Occurrence: mcptest.First()},
		Action: mcptest.PlainText(404, "session not found")})
	_, err = sup.CallTool(ctx, &mcp.CallToolParams{Name: mcptest.RecordTool, Arguments: mcptest.IDArgs{ID: "expired"}})
	var ce *supervisor.CallError
	require.ErrorAs(t, err, &ce)
	calls = h.spanNamed("mcpsup.call tools/call " + mcptest.RecordTool)
	require.Len(t, calls, 2)
	lost := calls[1]
	replaced := eventAttrs(t, lost, mcpsupotel.EventSessionReplaced)
	require.Equal(t, attribute.Int64Value(2), replaced[mcpsupotel.AttrGeneration])
	require.Equal(t, attribute.StringValue("session-expired"), replaced[mcpsupotel.AttrErrorType])
	require.Contains(t, replaced, mcpsupotel.AttrTo, "the state when the call returned")
	require.Equal(t, codes.Error, lost.Status.Code)
	got, _ := attr(lost, mcpsupotel.AttrErrorType)
	require.Equal(t, "session-expired", got.AsString())
	got, _ = attr(lost, mcpsupotel.AttrDelivery)
	require.Equal(t, ce.Delivery.String(), got.AsString())
}

// A 2026-07-28 call whose response stream broke is re-issued (changelog
// item 9, SEP-2575: "clients MUST re-issue it as a new request with a new
// request ID"): its call span carries the re-issue as an event naming the
// lost attempt's verdict and delivery, and one request span per attempt.
func TestCallSpanCarriesTheReissue(t *testing.T) {
	h := newHarness(t, mcpsupotel.Options{})
	srv, err := mcptest.NewServer(mcptest.Options{Mode: mcptest.Sessionless2026})
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	sup := newSupervisor(t, srv, supervisor.Config{
		Name:    "rec",
		Observe: supervisor.ObserveConfig{CallHandler: h.obs.CallHandler()},
		Client:  supervisor.ClientConfig{SendingMiddleware: []mcp.Middleware{h.obs.Middleware("rec")}},
	})
	sup.Start()
	require.NoError(t, sup.WaitForState(ctx, supervisor.Ready))
	srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Method: "tools/call", Occurrence: mcptest.First()},
		Action: mcptest.ServerThen(mcptest.SSEThenReset("id: 1", "data:", ""))})
	_, err = sup.CallTool(ctx, &mcp.CallToolParams{Name: mcptest.RecordTool, Arguments: mcptest.IDArgs{ID: "r"}})
	require.NoError(t, err)

	calls := h.spanNamed("mcpsup.call tools/call " + mcptest.RecordTool)
	require.Len(t, calls, 1)
	require.Equal(t, map[attribute.Key]attribute.Value{
		mcpsupotel.AttrErrorType: attribute.StringValue("transport"),
		mcpsupotel.AttrDelivery:  attribute.StringValue("outcome-unknown"),
	}, eventAttrs(t, calls[0], mcpsupotel.EventCallReissued))
	require.Equal(t, codes.Unset, calls[0].Status.Code)
	require.Len(t, h.spanNamed("tools/call "+mcptest.RecordTool), 2, "one request span per attempt")
}
