package mcpsupotel

import (
	"cmp"
	"errors"
	"sync"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of every meter and tracer this
// package makes.
const ScopeName = "github.com/mcpsup/mcpsup/otel"

// DefaultMaxPayloadBytes bounds a payload attribute when
// [Options.RecordPayloads] is set and [Options.MaxPayloadBytes] is zero.
const DefaultMaxPayloadBytes = 4 << 10

// Options configures an [Observer]. The zero value uses the global providers
// and W3C Trace Context, and records no payloads.
type Options struct {
	// MeterProvider makes the meter of every metric; nil means
	// otel.GetMeterProvider() at New.
	MeterProvider metric.MeterProvider
	// TracerProvider makes the tracer of the call spans; nil means
	// otel.GetTracerProvider() at New.
	TracerProvider trace.TracerProvider
	// RecordPayloads adds a tool call's arguments and result to its span as
	// JSON, each cut to MaxPayloadBytes. Off by default: user data.
	RecordPayloads bool
	// MaxPayloadBytes bounds each payload attribute; zero means
	// [DefaultMaxPayloadBytes].
	MaxPayloadBytes int
}

// Observer turns supervisors' events into metrics ([Observer.Sink]) and
// their calls into client spans ([Observer.Middleware]). One Observer may
// serve many supervisors: every point and span names its server. It is safe
// for concurrent use.
type Observer struct {
	opts   Options
	tracer trace.Tracer
	inst   instruments

	gens sync.Map // server name -> uint64: the latest session's generation
}

// New returns an Observer with its instruments made on opts.MeterProvider.
// The error is the meter's, when it refused an instrument.
func New(opts Options) (*Observer, error) {
	opts.MeterProvider = cmp.Or(opts.MeterProvider, otel.GetMeterProvider())
	opts.TracerProvider = cmp.Or(opts.TracerProvider, otel.GetTracerProvider())
	if opts.MaxPayloadBytes <= 0 {
		opts.MaxPayloadBytes = DefaultMaxPayloadBytes
	}
	o := &Observer{
		opts:   opts,
		tracer: opts.TracerProvider.Tracer(ScopeName),
	}
	if err := o.inst.make(opts.MeterProvider.Meter(ScopeName)); err != nil {
		return nil, errors.Join(errors.New("mcpsupotel: making instruments"), err)
	}
	return o, nil
}
