package mcpsupotel_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/httpsession"
	"github.com/mcpsup/mcpsup/mcptest"
	mcpsupotel "github.com/mcpsup/mcpsup/otel"
)

func newServer(t *testing.T) *mcptest.Server {
	t.Helper()
	srv, err := mcptest.NewServer(mcptest.Options{Prompts: 1})
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	return srv
}

// bareSession connects a plain go-sdk client with mw to srv.
func bareSession(t *testing.T, ctx context.Context, srv *mcptest.Server, mw ...mcp.Middleware) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "v1"}, nil)
	client.AddSendingMiddleware(mw...)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL(), HTTPClient: srv.HTTPClient(), DisableStandaloneSSE: true}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// The caller's trace reaches the server in _meta, the call's span is the
// caller's child with the conventions' attributes, and the caller's params
// are left as they were.
func TestMiddlewarePropagatesTraceToServer(t *testing.T) {
	h := newHarness(t, mcpsupotel.Options{})
	srv := newServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	cs := bareSession(t, ctx, srv, h.obs.Middleware("bare"))

	ctx, parent := h.tp.Tracer("host").Start(ctx, "host work")
	params := &mcp.CallToolParams{Name: mcptest.RecordTool, Arguments: mcptest.IDArgs{ID: "traced"}}
	_, err := cs.CallTool(ctx, params)
	require.NoError(t, err)
	parent.End()
	require.Nil(t, params.Meta, "the caller's params keep no _meta")

	spans := h.spanNamed("tools/call record")
	require.Len(t, spans, 1)
	sp := spans[0]
	require.Equal(t, trace.SpanKindClient, sp.SpanKind)
	require.Equal(t, parent.SpanContext().TraceID(), sp.SpanContext.TraceID())
	require.Equal(t, parent.SpanContext().SpanID(), sp.Parent.SpanID())
	require.Equal(t, codes.Unset, sp.Status.Code)

	meta := srv.RecordedMeta("traced")
	require.Equal(t, "00-"+sp.SpanContext.TraceID().String()+"-"+sp.SpanContext.SpanID().String()+"-01", meta["traceparent"],
		"the server got the call span's context (W3C Trace Context)")

	for key, want := range map[attribute.Key]attribute.Value{
		"mcp.method.name":          attribute.StringValue("tools/call"),
		"gen_ai.tool.name":         attribute.StringValue(mcptest.RecordTool),
		"gen_ai.operation.name":    attribute.StringValue("execute_tool"),
		"mcp.session.id":           attribute.StringValue(events.HashSessionID(cs.ID())),
		"mcp.protocol.version":     attribute.StringValue(cs.InitializeResult().ProtocolVersion),
		"jsonrpc.protocol.version": attribute.StringValue("2.0"),
		mcpsupotel.AttrServer:      attribute.StringValue("bare"),
	} {
		got, ok := attr(sp, key)
		require.True(t, ok, "attribute %s", key)
		require.Equal(t, want, got, "attribute %s", key)
	}
	for _, kv := range sp.Attributes {
		require.NotContains(t, kv.Value.String(), cs.ID(), "no raw session id in %s", kv.Key)
	}
	_, ok := attr(sp, "gen_ai.tool.call.arguments")
	require.False(t, ok, "no payload unless asked")
	_, ok = attr(sp, mcpsupotel.AttrGeneration)
	require.False(t, ok, "no generation before the sink heard of a session")

	// Once the sink heard of a session of this server, spans carry its
	// generation.
	h.obs.Sink().Emit(events.Event{Kind: events.KindSessionOpened, Server: "bare", Generation: 7})
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: mcptest.RecordTool, Arguments: mcptest.IDArgs{ID: "gen"}})
	require.NoError(t, err)
	spans = h.spanNamed("tools/call record")
	require.Len(t, spans, 2)
	gen, ok := attr(spans[1], mcpsupotel.AttrGeneration)
	require.True(t, ok)
	require.EqualValues(t, 7, gen.AsInt64())

	// The handshake's requests have spans too; a successful call is timed.
	require.Len(t, h.spanNamed("initialize"), 1)
	require.EqualValues(t, 2, h.value("mcp.client.operation.duration", mcpsupotel.AttrMethod.String("tools/call"), attribute.String("gen_ai.tool.name", mcptest.RecordTool)))
}

// A caller without a trace sends no traceparent.
func TestMiddlewareWithoutTraceSendsNone(t *testing.T) {
	h := newHarness(t, mcpsupotel.Options{})
	srv := newServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	cs := bareSession(t, ctx, srv, h.obs.Middleware("bare"))
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: mcptest.RecordTool, Arguments: mcptest.IDArgs{ID: "root"}})
	require.NoError(t, err)
	sp := h.spanNamed("tools/call record")
	require.Len(t, sp, 1)
	require.False(t, sp[0].Parent.IsValid(), "a root span")
	require.Equal(t, "00-"+sp[0].SpanContext.TraceID().String()+"-"+sp[0].SpanContext.SpanID().String()+"-01", srv.RecordedMeta("root")["traceparent"], "the root span's own context")
}

// S4 on the span: a 429 answering tools/call ends the call's span with the
// rate-limited verdict, the HTTP status, Retry-After and delivery; the
// session and its server-side state survive.
func TestMiddlewareFailedCallSpanCarriesTheVerdict(t *testing.T) {
	h := newHarness(t, mcpsupotel.Options{})
	srv := newServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "v1"}, nil)
	// Outside the wire facts, so the verdict rests on the HTTP status.
	client.AddSendingMiddleware(h.obs.Middleware("s4"), httpsession.FactsMiddleware())
	s, err := httpsession.Open(ctx, httpsession.Options{Endpoint: srv.URL(), HTTPClient: srv.HTTPClient(), Client: client, Era: httpsession.Era2025, Stream: httpsession.StreamOff})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	rule := mcptest.ToolCallRateLimited(30 * time.Second)
	rule.Match.Occurrence = mcptest.First()
	srv.Gateway().Add(rule)
	initBefore := srv.Log().Count("initialize")

	_, err = s.ClientSession().CallTool(ctx, &mcp.CallToolParams{Name: mcptest.RecordTool, Arguments: mcptest.IDArgs{ID: "limited"}})
	require.Error(t, err)
	require.Equal(t, classify.RateLimited, classify.Classify(ctx, err).Class)
	_, err = s.ClientSession().CallTool(ctx, &mcp.CallToolParams{Name: mcptest.RecordTool, Arguments: mcptest.IDArgs{ID: "after"}})
	require.NoError(t, err, "the session survives")
	require.Equal(t, initBefore, srv.Log().Count("initialize"), "no new handshake")

	spans := h.spanNamed("tools/call record")
	require.Len(t, spans, 2)
	failed := spans[0]
	require.Equal(t, codes.Error, failed.Status.Code)
	require.Contains(t, failed.Status.Description, "rate-limited")
	for key, want := range map[attribute.Key]attribute.Value{
		"error.type":                attribute.StringValue("rate-limited"),
		"http.response.status_code": attribute.IntValue(429),
		mcpsupotel.AttrRetryAfter:   attribute.Float64Value(30),
		mcpsupotel.AttrDelivery:     attribute.StringValue("answered"),
	} {
		got, ok := attr(failed, key)
		require.True(t, ok, "attribute %s", key)
		require.Equal(t, want, got, "attribute %s", key)
	}
	require.Equal(t, codes.Unset, spans[1].Status.Code)
	_, ok := attr(spans[1], "error.type")
	require.False(t, ok)
	require.EqualValues(t, 1, h.value("mcp.client.operation.duration", attribute.String("error.type", "rate-limited")))
	require.EqualValues(t, 2, h.value("mcp.client.operation.duration", attribute.String("gen_ai.tool.name", mcptest.RecordTool)))
}

// A prompt's span is named by the prompt; a tool's own error is
// error.type tool_error; payloads are recorded only when asked, bounded.
func TestMiddlewarePromptToolErrorAndPayloads(t *testing.T) {
	h := newHarness(t, mcpsupotel.Options{RecordPayloads: true, MaxPayloadBytes: 16})
	srv := newServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	cs := bareSession(t, ctx, srv, h.obs.Middleware("p"))

	_, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: mcptest.PromptName(1)})
	require.NoError(t, err)
	require.Len(t, h.spanNamed("prompts/get "+mcptest.PromptName(1)), 1)

	// go-sdk answers arguments that fail the tool's input schema with a
	// tool error (IsError), not a JSON-RPC error.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: mcptest.RecordTool, Arguments: map[string]any{"id": 5, "pad": "a long argument for the bound"}})
	require.NoError(t, err)
	require.True(t, res.IsError)
	sp := h.spanNamed("tools/call " + mcptest.RecordTool)
	require.Len(t, sp, 1)
	et, _ := attr(sp[0], "error.type")
	require.Equal(t, "tool_error", et.AsString())
	require.Equal(t, codes.Error, sp[0].Status.Code)
	for _, key := range []attribute.Key{"gen_ai.tool.call.arguments", "gen_ai.tool.call.result"} {
		v, ok := attr(sp[0], key)
		require.True(t, ok, "%s recorded when asked", key)
		require.Len(t, v.AsString(), 16, "%s cut to MaxPayloadBytes", key)
	}

	// go-sdk answers an unknown tool with a JSON-RPC error: an answer.
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "no-such-tool"})
	require.Error(t, err)
	sp = h.spanNamed("tools/call no-such-tool")
	require.Len(t, sp, 1)
	d, _ := attr(sp[0], mcpsupotel.AttrDelivery)
	require.Equal(t, "answered", d.AsString())
	et, _ = attr(sp[0], "error.type")
	require.Equal(t, "application", et.AsString())
}

// Without the wire layer's facts a plain go-sdk client sees a 429 only as
// JSON-RPC -32005 "rejected by transport": the span says server-error, the
// class go-sdk's text supports (DESIGN.md section 3).
func TestMiddlewareWithoutWireFacts(t *testing.T) {
	h := newHarness(t, mcpsupotel.Options{})
	srv := newServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	cs := bareSession(t, ctx, srv, h.obs.Middleware("bare"))
	rule := mcptest.ToolCallRateLimited(30 * time.Second)
	rule.Match.Occurrence = mcptest.First()
	srv.Gateway().Add(rule)
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: mcptest.RecordTool, Arguments: mcptest.IDArgs{ID: "plain"}})
	require.Error(t, err)
	sp := h.spanNamed("tools/call record")
	require.Len(t, sp, 1)
	et, _ := attr(sp[0], "error.type")
	require.Equal(t, "server-error", et.AsString())
	_, ok := attr(sp[0], "http.response.status_code")
	require.False(t, ok, "no status without wire facts")
	_, ok = attr(sp[0], mcpsupotel.AttrDelivery)
	require.False(t, ok, "how far it got is not known without wire facts")
}

// A name a server chose is cut to events.MaxNameBytes in span names and
// attributes, as in events: a tool named with a mebibyte would put a
// mebibyte in every span and metric point of its calls.
func TestMiddlewareCutsLongNames(t *testing.T) {
	h := newHarness(t, mcpsupotel.Options{})
	srv := newServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	cs := bareSession(t, ctx, srv, h.obs.Middleware("p"))
	long := strings.Repeat("A", 1<<20)
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: long})
	require.Error(t, err, "no such tool")
	cut := events.CutName(long)
	require.LessOrEqual(t, len(cut), events.MaxNameBytes)
	sp := h.spanNamed("tools/call " + cut)
	require.Len(t, sp, 1)
	v, _ := attr(sp[0], "gen_ai.tool.name")
	require.Equal(t, cut, v.AsString())
	require.Equal(t, int64(1), h.value("mcp.client.operation.duration", attribute.String("gen_ai.tool.name", cut)))
}
