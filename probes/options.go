package probes

import (
	"log/slog"
	"time"
)

// Defaults of [Options].
const (
	// DefaultProbeTimeout bounds one list, all its pages included.
	DefaultProbeTimeout = 10 * time.Second
	// DefaultMaxPages is the most pages read of one list.
	DefaultMaxPages = 100
	// DefaultMaxItems is the most items accepted in one list.
	DefaultMaxItems = 10_000
)

// Options tune discovery. The zero value is ready to use: every zero field
// means its documented default. An Options value is read, never modified.
type Options struct {
	// ProbeTimeout bounds each list, all its pages included, from its first
	// request. It expires as our own deadline: classified timeout, so a
	// speculative list becomes degraded and `tools/list` fails strictly.
	// Zero means [DefaultProbeTimeout]; negative means no bound other than
	// the caller's context.
	ProbeTimeout time.Duration
	// MaxPages is the most pages read of one list before it fails with
	// [ErrPageLimit]. Zero or negative means [DefaultMaxPages].
	MaxPages int
	// MaxItems is the most items accepted in one list before it fails with
	// [ErrItemLimit]. Zero or negative means [DefaultMaxItems].
	MaxItems int
	// Logger receives a record per settled list: Debug when present or
	// absent, Warn when degraded, failed, or declared but answering -32601.
	// Nil means no logging.
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
