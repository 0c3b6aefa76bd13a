package mcpsupotel

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpsup/mcpsup/supervisor"
)

// Names of the call span's events, one per supervisor.CallStage (mcpsup's
// own: the conventions have none).
const (
	EventWaitForReady    = "mcpsup.wait_for_ready"   // CallWaited
	EventSessionReplaced = "mcpsup.session_replaced" // CallSessionLost
	EventCallResent      = "mcpsup.call_resent"      // CallResent
	EventCallReissued    = "mcpsup.call_reissued"    // CallReissued (changelog item 9, SEP-2575)
)

// Attribute keys of the call span's events.
const (
	// AttrWaitDuration is how long a call waited for ready, in seconds.
	AttrWaitDuration = attribute.Key("mcpsup.wait.duration")
	// AttrPreviousGeneration is the latest session's generation when a call
	// began to wait, when it differs from the one the call went out on.
	AttrPreviousGeneration = attribute.Key("mcpsup.generation.previous")
)

// CallHandler returns the handler for supervisor.Config.Observe.CallHandler
// that makes an internal span "mcpsup.call {mcp.method.name} {name}" of each
// host call, from its entry to its end (a call waits before any request
// exists); the requests it sends are its children. Its events:
// mcpsup.wait_for_ready (mcpsup.state found, mcpsup.wait.duration,
// mcpsup.generation and mcpsup.generation.previous),
// mcpsup.session_replaced (mcpsup.generation lost, mcpsup.to, error.type),
// mcpsup.call_resent and mcpsup.call_reissued (error.type and
// mcpsup.delivery of the first sending). On error its status is Error with
// the verdict, with error.type, mcpsup.delivery and mcpsup.generation.
func (o *Observer) CallHandler() supervisor.CallHandler { return callHandler{o} }

type callHandler struct{ o *Observer }

func (h callHandler) TagCall(ctx context.Context, info supervisor.CallInfo) context.Context {
	ctx, span := h.o.tracer.Start(ctx, "mcpsup.call", trace.WithSpanKind(trace.SpanKindInternal))
	if !span.IsRecording() {
		return ctx
	}
	name := "mcpsup.call " + info.Op
	attrs := []attribute.KeyValue{AttrMethod.String(info.Op), AttrServer.String(info.Server)}
	if suffix, attr := target(info.Op, info.Name); attr.Valid() {
		attrs = append(attrs, attr)
		if suffix != "" {
			name += " " + suffix
		}
	}
	span.SetName(name)
	span.SetAttributes(attrs...)
	return ctx
}

func (h callHandler) HandleCall(ctx context.Context, stage supervisor.CallStage) {
	span := trace.SpanFromContext(ctx)
	if end, ok := stage.(*supervisor.CallEnd); ok {
		if end.Err != nil && span.IsRecording() {
			endWithError(span, end.Err)
		}
		span.End()
		return
	}
	if !span.IsRecording() {
		return
	}
	switch st := stage.(type) {
	case *supervisor.CallWaited:
		attrs := []attribute.KeyValue{AttrState.String(string(st.From)), AttrWaitDuration.Float64(st.Waited.Seconds())}
		if st.Generation > 0 {
			attrs = append(attrs, AttrGeneration.Int64(int64(st.Generation)))
			if st.FromGeneration != st.Generation {
				attrs = append(attrs, AttrPreviousGeneration.Int64(int64(st.FromGeneration)))
			}
		}
		span.AddEvent(EventWaitForReady, trace.WithAttributes(attrs...))
	case *supervisor.CallSessionLost:
		span.AddEvent(EventSessionReplaced, trace.WithAttributes(AttrGeneration.Int64(int64(st.Generation)),
			AttrTo.String(string(st.To)), AttrErrorType.String(st.Verdict.Class.String())))
	case *supervisor.CallResent:
		span.AddEvent(EventCallResent, resent(st.Err))
	case *supervisor.CallReissued:
		span.AddEvent(EventCallReissued, resent(st.Err))
	}
}

// resent is the attributes of a resent or re-issued call's first sending.
func resent(first *supervisor.CallError) trace.EventOption {
	return trace.WithAttributes(AttrErrorType.String(first.Verdict.Class.String()), AttrDelivery.String(first.Delivery.String()))
}

// endWithError sets a failed call's status and error attributes.
func endWithError(span trace.Span, err error) {
	var ce *supervisor.CallError
	if !errors.As(err, &ce) {
		span.SetStatus(codes.Error, "invalid call") // nil params: the host's mistake
		return
	}
	attrs := []attribute.KeyValue{AttrDelivery.String(ce.Delivery.String())}
	if ce.Generation > 0 {
		attrs = append(attrs, AttrGeneration.Int64(int64(ce.Generation)))
	}
	setFailed(span, ce.Verdict.Class.String(), ce.Verdict.String(), attrs...)
}
