package mcpsupotel_test

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"

	"github.com/mcpsup/mcpsup/mcptest"
	mcpsupotel "github.com/mcpsup/mcpsup/otel"
	"github.com/mcpsup/mcpsup/supervisor"
)

// S4 through a supervisor: the host's Middleware in
// Config.Client.SendingMiddleware runs outside the supervisor's wire facts, so the
// span of a call a 429 answers carries the rate-limited verdict, HTTP 429
// and delivery answered; a successful call has its span, and its trace
// reaches the server in _meta.
func TestSupervisorCallSpans(t *testing.T) {
	h := newHarness(t, mcpsupotel.Options{})
	srv, err := mcptest.NewServer(mcptest.Options{Tools: 1})
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	sup := newSupervisor(t, srv, supervisor.Config{Name: "s4", Client: supervisor.ClientConfig{SendingMiddleware: []mcp.Middleware{h.obs.Middleware("s4")}}})
	sup.Start()
	require.NoError(t, sup.WaitForState(ctx, supervisor.Ready))

	call := func(id string) error {
		_, err := sup.CallTool(ctx, &mcp.CallToolParams{Name: mcptest.RecordTool, Arguments: mcptest.IDArgs{ID: id}})
		return err
	}
	require.NoError(t, call("ok"))
	rule := mcptest.ToolCallRateLimited(30 * time.Second)
	rule.Match.Occurrence = mcptest.First()
	srv.Gateway().Add(rule)
	err = call("limited")
	var ce *supervisor.CallError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, supervisor.Answered, ce.Delivery)

	spans := h.spanNamed("tools/call record")
	require.Len(t, spans, 2, "one span per call sent")
	ok, failed := spans[0], spans[1]

	require.Equal(t, codes.Unset, ok.Status.Code)
	_, has := attr(ok, "error.type")
	require.False(t, has)
	require.Equal(t, "00-"+ok.SpanContext.TraceID().String()+"-"+ok.SpanContext.SpanID().String()+"-01", srv.RecordedMeta("ok")["traceparent"],
		"the server got the call span's context")
	name, has := attr(ok, mcpsupotel.AttrServer)
	require.True(t, has)
	require.Equal(t, "s4", name.AsString())

	require.Equal(t, codes.Error, failed.Status.Code)
	for key, want := range map[attribute.Key]attribute.Value{
		"error.type":                attribute.StringValue("rate-limited"),
		"http.response.status_code": attribute.IntValue(429),
		mcpsupotel.AttrRetryAfter:   attribute.Float64Value(30),
		mcpsupotel.AttrDelivery:     attribute.StringValue(ce.Delivery.String()),
	} {
		got, has := attr(failed, key)
		require.True(t, has, "attribute %s", key)
		require.Equal(t, want, got, "attribute %s", key)
	}
	require.EqualValues(t, 1, sup.SessionsOpened(), "0 extra sessions")
}
