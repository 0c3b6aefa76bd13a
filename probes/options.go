package probes

import (
	"log/slog"
	"time"
)

// Defaults of [Options] (see its fields).
const (
	DefaultProbeTimeout = 10 * time.Second
	DefaultMaxPages     = 100
	DefaultMaxItems     = 10_000
)

// Options tune discovery; every zero field means its documented default.
type Options struct {
	// ProbeTimeout bounds each list, all its pages included; it expires as
	// our own deadline (timeout). Zero means [DefaultProbeTimeout]; negative,
	// only the caller's context.
	ProbeTimeout time.Duration
	// MaxPages is the most pages read of one list before it fails with
	// [ErrPageLimit]. Zero or negative means [DefaultMaxPages].
	MaxPages int
	// MaxItems is the most items accepted in one list before it fails with
	// [ErrItemLimit]. Zero or negative means [DefaultMaxItems].
	MaxItems int
	// Logger gets a record per settled list: Warn when degraded, failed or
	// warned of, else Debug. Nil means none.
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.ProbeTimeout == 0 {
		o.ProbeTimeout = DefaultProbeTimeout
	}
	if o.MaxPages <= 0 {
		o.MaxPages = DefaultMaxPages
	}
	if o.MaxItems <= 0 {
		o.MaxItems = DefaultMaxItems
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}
