package mcpsupotel

import (
	"context"
	"encoding/json"
	"maps"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
)

// Keys of the MCP and GenAI semantic conventions the spans carry.
const (
	attrToolName        = attribute.Key("gen_ai.tool.name")
	attrPromptName      = attribute.Key("gen_ai.prompt.name")
	attrOperationName   = attribute.Key("gen_ai.operation.name")
	attrResourceURI     = attribute.Key("mcp.resource.uri")
	attrSessionID       = attribute.Key("mcp.session.id")
	attrProtocolVersion = attribute.Key("mcp.protocol.version")
	attrJSONRPCVersion  = attribute.Key("jsonrpc.protocol.version")
	attrRPCStatusCode   = attribute.Key("rpc.response.status_code")
	attrHTTPStatusCode  = attribute.Key("http.response.status_code")
	attrNetTransport    = attribute.Key("network.transport")
	attrNetProtocol     = attribute.Key("network.protocol.name")
	attrToolArguments   = attribute.Key("gen_ai.tool.call.arguments")
	attrToolResult      = attribute.Key("gen_ai.tool.call.result")
)

// clientSpan is the spans' start option, made once: a variadic option
// built per call would allocate.
var clientSpan = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient)}

// toolError is error.type for a tool's own error (CallToolResult.IsError),
// as the MCP conventions name it.
const toolError = "tool_error"

// Middleware returns go-sdk sending middleware for the sessions of the
// server named server (the name the host gives its supervisor, so spans and
// metrics agree). Add it with mcp.Client.AddSendingMiddleware, or in
// supervisor.Config.Client.SendingMiddleware, which runs it outside the
// supervisor's wire facts.
//
// For every request and notification the client sends it:
//   - starts a client span, a child of the caller's context, named
//     "{mcp.method.name} {target}" (the tool or prompt name; the method alone
//     otherwise, a resource URI being too many names), with the MCP
//     conventions' attributes: mcp.method.name, gen_ai.tool.name and
//     gen_ai.operation.name "execute_tool", gen_ai.prompt.name,
//     mcp.resource.uri, mcp.session.id (hashed as events.HashSessionID, never
//     raw), mcp.protocol.version, jsonrpc.protocol.version, network.transport
//     "tcp", network.protocol.name "http"; and mcpsup.server and
//     mcpsup.generation (the generation of the latest session the
//     Observer's [Observer.Sink] heard of for server; absent before one);
//   - writes the span's context into the request's _meta (traceparent and
//     tracestate with the default propagator, SEP-414) on a copy of the
//     params: the caller's params and _meta map are not modified. Requests
//     of a type go-sdk may add later get a span without propagation;
//   - ends the span with the outcome: on error, status Error with the
//     verdict (classify.Classify with the caller's context; session ids
//     hashed), error.type (the verdict's class), http.response.status_code,
//     rpc.response.status_code (the JSON-RPC error code), mcpsup.retry_after
//     (seconds) and mcpsup.delivery (how far the request got,
//     classify.DeliveryOf, the rule of supervisor.CallError's Delivery;
//     absent when not known); a tool's own error
//     (CallToolResult.IsError) is error.type "tool_error";
//   - records mcp.client.operation.duration (seconds) by mcp.method.name,
//     gen_ai.tool.name or gen_ai.prompt.name, error.type and mcpsup.server.
//
// Arguments and results are recorded only with [Options.RecordPayloads].
// The verdict's facts (HTTP status, Retry-After) come from the wire layer:
// on a bare go-sdk client, place this middleware before (outside)
// wire.FactsMiddleware in one AddSendingMiddleware call, or add it after
// it; supervisor.Config.Client.SendingMiddleware does so. Without wire facts,
// classify sees only go-sdk's error values. With no-op providers it reads no clock and
// classifies nothing: its cost is the no-op tracer's (one allocation, the
// span's context; docs/benchmarks.md).
func (o *Observer) Middleware(server string) mcp.Middleware {
	serverAttr := AttrServer.String(server)
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			target, targetAttr := describe(method, req)
			ctx, span := o.tracer.Start(ctx, method, clientSpan...)
			recording := span.IsRecording()
			if recording {
				if target != "" {
					span.SetName(method + " " + target) // built only for a span that is kept
				}
				o.startAttrs(span, server, serverAttr, method, targetAttr, req)
			}
			if trace.SpanContextFromContext(ctx).IsValid() {
				req = o.inject(ctx, method, req)
			}
			timed := o.inst.duration.Enabled(ctx)
			if !recording && !timed {
				res, err := next(ctx, method, req) // nothing would keep the outcome
				span.End()
				return res, err
			}
			start := time.Now()
			res, err := next(ctx, method, req)
			elapsed := time.Since(start)

			var v classify.Verdict
			errType := ""
			if err != nil {
				v = classify.Classify(ctx, err)
				errType = v.Class.String()
			} else if r, ok := res.(*mcp.CallToolResult); ok && r != nil && r.IsError {
				errType = toolError
			}
			if recording {
				o.endAttrs(span, req, res, err, v, errType)
			}
			span.End()
			if timed {
				attrs := []attribute.KeyValue{serverAttr, AttrMethod.String(method)}
				if targetAttr.Valid() && targetAttr.Key != attrResourceURI {
					attrs = append(attrs, targetAttr)
				}
				if errType != "" {
					attrs = append(attrs, AttrErrorType.String(errType))
				}
				o.inst.duration.Record(ctx, elapsed.Seconds(), metric.WithAttributes(attrs...))
			}
			return res, err
		}
	}
}

// describe returns a request's span target (tool or prompt name, "" for the
// rest) and its naming attribute (gen_ai.tool.name, gen_ai.prompt.name or
// mcp.resource.uri; invalid when none), each cut to events.MaxNameBytes:
// a server names its tools, of any size.
func describe(method string, req mcp.Request) (string, attribute.KeyValue) {
	switch p := req.GetParams().(type) {
	case *mcp.CallToolParams:
		if p != nil {
			n := events.CutName(p.Name)
			return n, attrToolName.String(n)
		}
	case *mcp.GetPromptParams:
		if p != nil {
			n := events.CutName(p.Name)
			return n, attrPromptName.String(n)
		}
	case *mcp.ReadResourceParams:
		if p != nil {
			return "", attrResourceURI.String(events.CutName(p.URI))
		}
	case *mcp.SubscribeParams:
		if p != nil {
			return "", attrResourceURI.String(events.CutName(p.URI))
		}
	case *mcp.UnsubscribeParams:
		if p != nil {
			return "", attrResourceURI.String(events.CutName(p.URI))
		}
	}
	return "", attribute.KeyValue{}
}

func (o *Observer) startAttrs(span trace.Span, server string, serverAttr attribute.KeyValue, method string, target attribute.KeyValue, req mcp.Request) {
	attrs := make([]attribute.KeyValue, 0, 10)
	attrs = append(attrs, AttrMethod.String(method), serverAttr,
		attrJSONRPCVersion.String("2.0"), attrNetTransport.String("tcp"), attrNetProtocol.String("http"))
	if target.Valid() {
		attrs = append(attrs, target)
	}
	if method == "tools/call" {
		attrs = append(attrs, attrOperationName.String("execute_tool"))
	}
	if g, ok := o.gens.Load(server); ok {
		if n := g.(*atomic.Uint64).Load(); n > 0 {
			attrs = append(attrs, AttrGeneration.Int64(int64(n)))
		}
	}
	if cs, ok := req.GetSession().(*mcp.ClientSession); ok && cs != nil {
		if id := cs.ID(); id != "" {
			attrs = append(attrs, attrSessionID.String(events.HashSessionID(id)))
		}
		if ir := cs.InitializeResult(); ir != nil && ir.ProtocolVersion != "" {
			attrs = append(attrs, attrProtocolVersion.String(ir.ProtocolVersion))
		}
	}
	if o.opts.RecordPayloads {
		if p, ok := req.GetParams().(*mcp.CallToolParams); ok && p != nil {
			attrs = append(attrs, attrToolArguments.String(o.payload(p.Arguments)))
		}
	}
	span.SetAttributes(attrs...)
}

func (o *Observer) endAttrs(span trace.Span, req mcp.Request, res mcp.Result, err error, v classify.Verdict, errType string) {
	if o.opts.RecordPayloads && res != nil {
		if r, ok := res.(*mcp.CallToolResult); ok && r != nil {
			span.SetAttributes(attrToolResult.String(o.payload(r)))
		}
	}
	if errType == "" {
		return
	}
	attrs := []attribute.KeyValue{AttrErrorType.String(errType)}
	if err == nil { // a tool's own error
		span.SetAttributes(attrs...)
		span.SetStatus(codes.Error, toolError)
		return
	}
	// The verdict's text may carry go-sdk's raw session id: the Redactor's
	// patterns hash it.
	var red *events.Redactor
	v = red.Verdict(v)
	if v.HTTPStatus != 0 {
		attrs = append(attrs, attrHTTPStatusCode.Int(v.HTTPStatus))
	}
	if v.RPC.Present {
		attrs = append(attrs, attrRPCStatusCode.String(strconv.FormatInt(int64(v.RPC.Code), 10)))
	}
	if v.RetryAfter > 0 {
		attrs = append(attrs, AttrRetryAfter.Float64(v.RetryAfter.Seconds()))
	}
	if d := classify.DeliveryOf(err, v); d != classify.DeliveryNotKnown {
		attrs = append(attrs, AttrDelivery.String(d.String()))
	}
	span.SetAttributes(attrs...)
	span.SetStatus(codes.Error, v.String())
}

// payload is v as JSON, cut to MaxPayloadBytes.
func (o *Observer) payload(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "(not JSON: " + err.Error() + ")"
	}
	if len(b) > o.opts.MaxPayloadBytes {
		b = b[:o.opts.MaxPayloadBytes]
	}
	return string(b)
}

// metaCarrier is a request's _meta as a propagation.TextMapCarrier.
type metaCarrier map[string]any

func (c metaCarrier) Get(key string) string {
	s, _ := c[key].(string)
	return s
}

func (c metaCarrier) Set(key, value string) { c[key] = value }

func (c metaCarrier) Keys() []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	return keys
}

// inject returns req with the trace context of ctx in a copy of its _meta.
// go-sdk sends every client request as a *mcp.ClientRequest[mcp.Params]
// holding the caller's params (nil when the caller passed none).
func (o *Observer) inject(ctx context.Context, method string, req mcp.Request) mcp.Request {
	r, ok := req.(*mcp.ClientRequest[mcp.Params])
	if !ok {
		return req
	}
	p := copyParams(method, r.Params)
	if p == nil {
		return req // a method this package does not know: sent as it is
	}
	meta := p.GetMeta()
	m := make(map[string]any, len(meta)+2)
	maps.Copy(m, meta)
	o.prop.Inject(ctx, metaCarrier(m))
	p.SetMeta(m)
	return &mcp.ClientRequest[mcp.Params]{Session: r.Session, Params: p}
}

// copyParams returns a shallow copy of p, or new params of method's type
// when p is nil; nil for params of a type it does not know.
func copyParams(method string, p mcp.Params) mcp.Params {
	switch p := p.(type) {
	case *mcp.CallToolParams:
		return clone(p)
	case *mcp.GetPromptParams:
		return clone(p)
	case *mcp.ReadResourceParams:
		return clone(p)
	case *mcp.CompleteParams:
		return clone(p)
	case *mcp.ListToolsParams:
		return clone(p)
	case *mcp.ListPromptsParams:
		return clone(p)
	case *mcp.ListResourcesParams:
		return clone(p)
	case *mcp.ListResourceTemplatesParams:
		return clone(p)
	case *mcp.SubscribeParams:
		return clone(p)
	case *mcp.UnsubscribeParams:
		return clone(p)
	case *mcp.PingParams:
		return clone(p)
	case *mcp.InitializeParams:
		return clone(p)
	case nil:
		switch method {
		case "tools/list":
			return &mcp.ListToolsParams{}
		case "prompts/list":
			return &mcp.ListPromptsParams{}
		case "resources/list":
			return &mcp.ListResourcesParams{}
		case "resources/templates/list":
			return &mcp.ListResourceTemplatesParams{}
		case "ping":
			return &mcp.PingParams{}
		}
	}
	return nil
}

// clone returns a shallow copy of *p (the zero value for a nil p).
func clone[T any](p *T) *T {
	var cp T
	if p != nil {
		cp = *p
	}
	return &cp
}
