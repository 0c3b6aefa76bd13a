package mcpsupotel

import (
	"context"
	"encoding/json"
	"maps"
	"reflect"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/semconv/v1.41.0/mcpconv"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
)

// toolError is error.type for a tool's own error (CallToolResult.IsError),
// as the MCP conventions name it.
const toolError = "tool_error"

// Middleware returns go-sdk sending middleware for the sessions of the
// server named server (the supervisor's name, so spans and metrics agree);
// install it outside the wire facts (supervisor.Config.Client.SendingMiddleware
// does). For every request it starts a client span "{mcp.method.name}
// {tool or prompt name}" with the MCP conventions' attributes (mcp.session.id
// hashed as events.HashSessionID) and mcpsup.server and mcpsup.generation;
// writes the span's context into a copy of the request's _meta (SEP-414);
// ends the span with the verdict (error.type its class, or "tool_error",
// http.response.status_code, rpc.response.status_code, mcpsup.retry_after in
// seconds, mcpsup.delivery); and records mcp.client.operation.duration.
// Arguments and results only with [Options.RecordPayloads]. With no-op
// providers it reads no clock and classifies nothing.
func (o *Observer) Middleware(server string) mcp.Middleware {
	serverAttr := AttrServer.String(server)
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			target, targetAttr := describe(method, req)
			ctx, span := o.tracer.Start(ctx, method, trace.WithSpanKind(trace.SpanKindClient))
			recording := span.IsRecording()
			if recording {
				if target != "" {
					span.SetName(method + " " + target) // built only for a span that is kept
				}
				o.startAttrs(span, server, serverAttr, method, targetAttr, req)
			}
			if trace.SpanContextFromContext(ctx).IsValid() {
				req = inject(ctx, method, req)
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
				o.endAttrs(span, res, err, v, errType)
			}
			span.End()
			if timed {
				attrs := []attribute.KeyValue{serverAttr}
				if targetAttr.Valid() && targetAttr.Key != semconv.McpResourceURIKey {
					attrs = append(attrs, targetAttr)
				}
				if errType != "" {
					attrs = append(attrs, AttrErrorType.String(errType))
				}
				o.inst.duration.Record(ctx, elapsed.Seconds(), mcpconv.MethodNameAttr(method), attrs...)
			}
			return res, err
		}
	}
}

// describe returns [target] of a request's params; nothing for params of
// another type, or nil ones.
func describe(method string, req mcp.Request) (string, attribute.KeyValue) {
	if v := reflect.ValueOf(req.GetParams()); !v.IsValid() || v.IsNil() {
		return "", attribute.KeyValue{}
	}
	switch p := req.GetParams().(type) {
	case *mcp.CallToolParams:
		return target(method, p.Name)
	case *mcp.GetPromptParams:
		return target(method, p.Name)
	case *mcp.ReadResourceParams:
		return target(method, p.URI)
	case *mcp.SubscribeParams:
		return target(method, p.URI)
	case *mcp.UnsubscribeParams:
		return target(method, p.URI)
	}
	return "", attribute.KeyValue{}
}

// target returns what names a request of method for name, cut to
// events.MaxNameBytes: the span name's suffix (a tool's or prompt's name,
// "" for a resource URI) and its attribute (invalid for other methods).
func target(method, name string) (string, attribute.KeyValue) {
	name = events.CutName(name) // a server's name, of any size
	switch method {
	case "tools/call":
		return name, semconv.GenAIToolNameKey.String(name)
	case "prompts/get":
		return name, semconv.GenAIPromptNameKey.String(name)
	case "resources/read", "resources/subscribe", "resources/unsubscribe":
		return "", semconv.McpResourceURIKey.String(name)
	}
	return "", attribute.KeyValue{}
}

func (o *Observer) startAttrs(span trace.Span, server string, serverAttr attribute.KeyValue, method string, target attribute.KeyValue, req mcp.Request) {
	attrs := make([]attribute.KeyValue, 0, 10)
	attrs = append(attrs, AttrMethod.String(method), serverAttr,
		semconv.JSONRPCProtocolVersionKey.String("2.0"), semconv.NetworkTransportKey.String("tcp"), semconv.NetworkProtocolNameKey.String("http"))
	if target.Valid() {
		attrs = append(attrs, target)
	}
	if method == "tools/call" {
		attrs = append(attrs, semconv.GenAIOperationNameKey.String("execute_tool"))
	}
	if g, _ := o.gens.Load(server); g != nil && g.(uint64) > 0 {
		attrs = append(attrs, AttrGeneration.Int64(int64(g.(uint64))))
	}
	if cs, ok := req.GetSession().(*mcp.ClientSession); ok && cs != nil {
		if id := cs.ID(); id != "" {
			attrs = append(attrs, semconv.McpSessionIDKey.String(events.HashSessionID(id)))
		}
		if ir := cs.InitializeResult(); ir != nil && ir.ProtocolVersion != "" {
			attrs = append(attrs, semconv.McpProtocolVersionKey.String(ir.ProtocolVersion))
		}
	}
	if p, ok := req.GetParams().(*mcp.CallToolParams); o.opts.RecordPayloads && ok && p != nil {
		attrs = append(attrs, semconv.GenAIToolCallArgumentsKey.String(o.payload(p.Arguments)))
	}
	span.SetAttributes(attrs...)
}

func (o *Observer) endAttrs(span trace.Span, res mcp.Result, err error, v classify.Verdict, errType string) {
	if r, ok := res.(*mcp.CallToolResult); o.opts.RecordPayloads && ok && r != nil {
		span.SetAttributes(semconv.GenAIToolCallResultKey.String(o.payload(r)))
	}
	if err != nil {
		var attrs []attribute.KeyValue
		if v.HTTPStatus != 0 {
			attrs = append(attrs, semconv.HTTPResponseStatusCodeKey.Int(v.HTTPStatus))
		}
		if v.RPC.Present {
			attrs = append(attrs, semconv.RPCResponseStatusCodeKey.String(strconv.FormatInt(v.RPC.Code, 10)))
		}
		if v.RetryAfter > 0 {
			attrs = append(attrs, AttrRetryAfter.Float64(v.RetryAfter.Seconds()))
		}
		if d := classify.DeliveryOf(err, v); d != classify.DeliveryNotKnown {
			attrs = append(attrs, AttrDelivery.String(d.String()))
		}
		setFailed(span, errType, v.String(), attrs...)
	} else if errType != "" { // a tool's own error
		setFailed(span, errType, toolError)
	}
}

// setFailed sets a failed span's status, with error.type and attrs.
func setFailed(span trace.Span, errType, status string, attrs ...attribute.KeyValue) {
	span.SetAttributes(append(attrs, AttrErrorType.String(errType))...)
	span.SetStatus(codes.Error, status)
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

// inject returns req with the W3C trace context of ctx in a copy of its
// _meta (SEP-414; not the global propagator, whose default propagates
// nothing); a request whose params copyParams cannot copy as it is.
func inject(ctx context.Context, method string, req mcp.Request) mcp.Request {
	r, ok := req.(*mcp.ClientRequest[mcp.Params])
	if !ok {
		return req
	}
	p := copyParams(method, r.Params)
	if p == nil {
		return req
	}
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, c)
	m := make(map[string]any, len(p.GetMeta())+len(c))
	maps.Copy(m, p.GetMeta())
	for k, v := range c {
		m[k] = v
	}
	p.SetMeta(m)
	return &mcp.ClientRequest[mcp.Params]{Session: r.Session, Params: p}
}

// copyParams returns a shallow copy of p, or new params of method's type
// when p is nil; nil for a method without params of a known type.
func copyParams(method string, p mcp.Params) mcp.Params {
	if v := reflect.ValueOf(p); v.Kind() == reflect.Pointer {
		cp := reflect.New(v.Type().Elem())
		if !v.IsNil() {
			cp.Elem().Set(v.Elem())
		}
		return cp.Interface().(mcp.Params)
	}
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
	return nil
}
