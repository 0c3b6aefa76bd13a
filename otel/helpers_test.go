package mcpsupotel_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	mcpsupotel "github.com/mcpsup/mcpsup/otel"
)

// e2eTimeout bounds every wait on a real server.
const e2eTimeout = 20 * time.Second

// harness is an Observer on the real SDK with in-memory readers.
type harness struct {
	t      *testing.T
	reader *sdkmetric.ManualReader
	spans  *tracetest.InMemoryExporter
	tp     *sdktrace.TracerProvider
	obs    *mcpsupotel.Observer
}

func newHarness(t *testing.T, opts mcpsupotel.Options) *harness {
	t.Helper()
	h := &harness{t: t, reader: sdkmetric.NewManualReader(), spans: tracetest.NewInMemoryExporter()}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(h.reader))
	h.tp = sdktrace.NewTracerProvider(sdktrace.WithSyncer(h.spans))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()); _ = h.tp.Shutdown(context.Background()) })
	opts.MeterProvider, opts.TracerProvider = mp, h.tp
	obs, err := mcpsupotel.New(opts)
	require.NoError(t, err)
	h.obs = obs
	return h
}

// metric returns the collected metric named name (ok false when absent).
func (h *harness) metric(name string) (metricdata.Metrics, bool) {
	h.t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(h.t, h.reader.Collect(context.Background(), &rm))
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				return m, true
			}
		}
	}
	return metricdata.Metrics{}, false
}

// value is the int64 point of metric name whose attributes include every
// one of want (summed over points that do); 0 when none.
func (h *harness) value(name string, want ...attribute.KeyValue) int64 {
	h.t.Helper()
	m, ok := h.metric(name)
	if !ok {
		return 0
	}
	var n int64
	match := func(set attribute.Set) bool {
		for _, kv := range want {
			if v, ok := set.Value(kv.Key); !ok || v != kv.Value {
				return false
			}
		}
		return true
	}
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		for _, p := range d.DataPoints {
			if match(p.Attributes) {
				n += p.Value
			}
		}
	case metricdata.Gauge[int64]:
		for _, p := range d.DataPoints {
			if match(p.Attributes) {
				n += p.Value
			}
		}
	case metricdata.Histogram[float64]:
		for _, p := range d.DataPoints {
			if match(p.Attributes) {
				n += int64(p.Count)
			}
		}
	default:
		h.t.Fatalf("metric %s: unexpected data %T", name, m.Data)
	}
	return n
}

// attr returns the value of key on a recorded span.
func attr(s tracetest.SpanStub, key attribute.Key) (attribute.Value, bool) {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

// spanNamed returns the recorded spans named name.
func (h *harness) spanNamed(name string) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, s := range h.spans.GetSpans() {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}
