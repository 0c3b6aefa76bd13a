package main

import (
	"context"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/trace/noop"

	mcpsupotel "github.com/mcpsup/mcpsup/otel"
)

// metrics is the /metrics endpoint: the otel package's metrics (the
// connection states, transitions, calls failed, catalog sizes, and
// mcp.client.operation.duration per request: see package mcpsupotel) in the
// Prometheus text format, through the OpenTelemetry Prometheus exporter, on
// a registry of the process's own (no global registry, no Go runtime
// collectors).
type metrics struct {
	observer *mcpsupotel.Observer
	handler  http.Handler
	provider *sdkmetric.MeterProvider
}

func newMetrics() (*metrics, error) {
	reg := prometheus.NewRegistry()
	exp, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		return nil, err
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp))
	o, err := mcpsupotel.New(mcpsupotel.Options{MeterProvider: mp, TracerProvider: noop.NewTracerProvider()})
	if err != nil {
		_ = mp.Shutdown(context.Background())
		return nil, err
	}
	return &metrics{observer: o, provider: mp, handler: promhttp.HandlerFor(reg, promhttp.HandlerOpts{})}, nil
}

func (m *metrics) close() { _ = m.provider.Shutdown(context.Background()) }
