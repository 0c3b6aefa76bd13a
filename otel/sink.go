package mcpsupotel

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/semconv/v1.41.0/mcpconv"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
)

// Attribute keys of mcpsup's own, where the semantic conventions have none.
const (
	// AttrServer is the supervised server's name (events.Event.Server).
	AttrServer = attribute.Key("mcpsup.server")
	// AttrState is a connection state, e.g. "ready".
	AttrState = attribute.Key("mcpsup.state")
	// AttrFrom and AttrTo are a transition's states before and after.
	AttrFrom = attribute.Key("mcpsup.from")
	AttrTo   = attribute.Key("mcpsup.to")
	// AttrTrigger is the fact that caused a transition, e.g. "session-died".
	AttrTrigger = attribute.Key("mcpsup.trigger")
	// AttrDelivery is how far a failed call got: "not-sent",
	// "outcome-unknown" or "answered".
	AttrDelivery = attribute.Key("mcpsup.delivery")
	// AttrCatalogKind is a list of the catalog: "tools", "resources",
	// "prompts" or "resource-templates".
	AttrCatalogKind = attribute.Key("mcpsup.catalog.kind")
	// AttrGeneration is the connection generation (events.Event.Generation).
	AttrGeneration = attribute.Key("mcpsup.generation")
	// AttrRetryAfter is a verdict's Retry-After in seconds.
	AttrRetryAfter = attribute.Key("mcpsup.retry_after")
	// AttrErrorType is the conventions' error.type; its value here is the
	// verdict's class, e.g. "rate-limited", or "tool_error".
	AttrErrorType = semconv.ErrorTypeKey
	// AttrMethod is the conventions' mcp.method.name, e.g. "tools/call".
	AttrMethod = semconv.McpMethodNameKey
)

// instruments are the metrics; their names and units are in the package doc.
type instruments struct {
	state       metric.Int64UpDownCounter
	transitions metric.Int64Counter
	opened      metric.Int64Counter
	ended       metric.Int64Counter
	retries     metric.Int64Counter
	failed      metric.Int64Counter
	catalog     metric.Int64Gauge
	stream      metric.Int64Gauge
	dropped     metric.Int64Counter
	windows     metric.Int64Counter
	window      metric.Float64Histogram
	duration    mcpconv.ClientOperationDuration
}

// durationBuckets are the bucket boundaries the MCP conventions advise for
// mcp.client.operation.duration, in seconds.
var durationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

func (in *instruments) make(m metric.Meter) error {
	var errs [12]error
	in.state, errs[0] = m.Int64UpDownCounter("mcpsup.connection.state", metric.WithUnit("{connection}"),
		metric.WithDescription("Connections in each state (idle and closed not counted)."))
	in.transitions, errs[1] = m.Int64Counter("mcpsup.connection.transitions", metric.WithUnit("{transition}"),
		metric.WithDescription("State machine transitions, internal ones included."))
	in.opened, errs[2] = m.Int64Counter("mcpsup.sessions.opened", metric.WithUnit("{session}"),
		metric.WithDescription("go-sdk client sessions opened or attached."))
	in.ended, errs[3] = m.Int64Counter("mcpsup.sessions.ended", metric.WithUnit("{session}"),
		metric.WithDescription("go-sdk client sessions ended."))
	in.retries, errs[4] = m.Int64Counter("mcpsup.retries.scheduled", metric.WithUnit("{retry}"),
		metric.WithDescription("Retries scheduled from failed."))
	in.failed, errs[5] = m.Int64Counter("mcpsup.calls.failed", metric.WithUnit("{call}"),
		metric.WithDescription("Calls that failed, by class and delivery."))
	in.catalog, errs[6] = m.Int64Gauge("mcpsup.catalog.size", metric.WithUnit("{item}"),
		metric.WithDescription("Items in the catalog, by kind."))
	in.stream, errs[7] = m.Int64Gauge("mcpsup.stream.enabled", metric.WithUnit("1"),
		metric.WithDescription("1 while the standalone SSE stream is opened, 0 while it is held."))
	in.dropped, errs[8] = m.Int64Counter("mcpsup.stream.events.dropped", metric.WithUnit("{event}"),
		metric.WithDescription("Standalone stream events not handed to go-sdk."))
	in.windows, errs[9] = m.Int64Counter("mcpsup.rate_limit.windows", metric.WithUnit("{window}"),
		metric.WithDescription("Rate-limit windows opened by a 429 with Retry-After."))
	in.window, errs[10] = m.Float64Histogram("mcpsup.rate_limit.window.duration", metric.WithUnit("s"),
		metric.WithDescription("Length of each rate-limit window."))
	in.duration, errs[11] = mcpconv.NewClientOperationDuration(m, metric.WithExplicitBucketBoundaries(durationBuckets...))
	return errors.Join(errs[:]...)
}

// Sink returns the events sink that records the metrics; add it before Start
// (mcpsup.connection.state counts from the first transition). It reads only
// typed fields, never blocks, and is safe for concurrent use.
func (o *Observer) Sink() events.Sink { return events.SinkFunc(o.emit) }

func (o *Observer) emit(e events.Event) {
	ctx := context.Background()
	in := &o.inst
	server := AttrServer.String(e.Server)
	switch e.Kind {
	case events.KindTransition:
		in.transitions.Add(ctx, 1, withClass(e.Verdict, server,
			AttrFrom.String(string(e.From)), AttrTo.String(string(e.To)),
			AttrTrigger.String(string(e.Trigger))))
		if e.From == e.To {
			return
		}
		if counted(e.From) {
			in.state.Add(ctx, -1, metric.WithAttributes(server, AttrState.String(string(e.From))))
		}
		if counted(e.To) {
			in.state.Add(ctx, 1, metric.WithAttributes(server, AttrState.String(string(e.To))))
		}
		if e.To == events.StateClosed {
			o.gens.Delete(e.Server)
		}
	case events.KindSessionOpened:
		o.gens.Store(e.Server, e.Generation)
		in.opened.Add(ctx, 1, metric.WithAttributes(server))
	case events.KindSessionEnded:
		in.ended.Add(ctx, 1, metric.WithAttributes(server))
	case events.KindRetryScheduled:
		in.retries.Add(ctx, 1, withClass(e.Verdict, server))
	case events.KindCallFailed:
		in.failed.Add(ctx, 1, withClass(e.Verdict, server, AttrMethod.String(e.Op),
			AttrDelivery.String(e.Delivery)))
	case events.KindProbeReport:
		for _, l := range e.Lists {
			if l.Status == events.ListPresent || l.Status == events.ListDegraded || l.Status == events.ListAbsent {
				in.catalog.Record(ctx, int64(l.Items), metric.WithAttributes(server, AttrCatalogKind.String(l.List)))
			}
		}
	case events.KindCatalogChanged:
		in.catalog.Record(ctx, int64(e.Tools), metric.WithAttributes(server, AttrCatalogKind.String("tools")))
	case events.KindStreamEnabled:
		in.stream.Record(ctx, 1, metric.WithAttributes(server))
	case events.KindStreamDisabled:
		in.stream.Record(ctx, 0, metric.WithAttributes(server))
	case events.KindStreamEventDropped:
		in.dropped.Add(ctx, 1, metric.WithAttributes(server))
	case events.KindRateLimitWindow:
		in.windows.Add(ctx, 1, metric.WithAttributes(server))
		in.window.Record(ctx, e.Delay.Seconds(), metric.WithAttributes(server))
	}
}

// counted reports whether s counts in mcpsup.connection.state: not idle or
// closed, so the sum is the live connections.
func counted(s events.State) bool {
	return s != "" && s != events.StateIdle && s != events.StateClosed
}

// withClass is attrs with error.type set to the verdict's class, when
// something failed.
func withClass(v classify.Verdict, attrs ...attribute.KeyValue) metric.MeasurementOption {
	if v.Class != classify.None {
		attrs = append(attrs, AttrErrorType.String(v.Class.String()))
	}
	return metric.WithAttributes(attrs...)
}
