// Package htmltimeline draws mcpsup events as one self-contained HTML page:
// a lane per server with its states as bands across time, session
// boundaries, markers (hover one to see the event), the tool catalog's size,
// zoom and pan. [Write] makes the page from a recording; [Live] serves it and
// feeds it events as server-sent events.
//
// The page reads only the events' JSON lines ([events.JSONLines]), loads
// nothing from the network and sets every event text as text, never markup.
// A lane with more than 300 marks (or 1500 bands) in view draws them
// aggregated per 8-pixel column. [Build] computes the page's model in Go by
// the rules the page's script applies; the tests hold the page to it.
package htmltimeline

import (
	"slices"
	"time"

	"github.com/mcpsup/mcpsup/events"
)

// Model is what the page draws, by the page's rules: a lane per server in
// order of first appearance; an event without a Time takes the one before
// it, and a lane's time never goes backwards; Start and End span every time
// and window end, End at least 1ms after Start; a state change opens a band
// (the last ends at End); session-opened and -ended are boundaries; the
// [MarkerKind] kinds are markers, a rate-limit window spanning Delay;
// catalog-changed gives catalog points. Other events are only counted.
type Model struct {
	Start, End time.Time
	Lanes      []Lane
}

// Lane is one server's row.
type Lane struct {
	Server     string
	Events     int // every event of the server, drawn or not
	Bands      []Band
	Boundaries []Boundary
	Markers    []Marker
	Catalog    []CatalogPoint
}

// Band is a span of time the server spent in one state; Seq, From and
// Trigger are those of the transition that opened it.
type Band struct {
	State      string
	Start, End time.Time
	Seq        uint64
	From       string
	Trigger    string
}

// Boundary is a session opened or ended.
type Boundary struct {
	Time       time.Time
	Opened     bool // session-opened; false: session-ended
	Generation uint64
	SessionID  string // hashed, as in the event
}

// MarkerKind is the kind of a [Marker], the name the page uses for it.
type MarkerKind string

// The marker kinds.
const (
	MarkerCallFailed MarkerKind = "call-failed"       // events.KindCallFailed
	MarkerRetry      MarkerKind = "retry"             // events.KindRetryScheduled
	MarkerRateLimit  MarkerKind = "rate-limit-window" // events.KindRateLimitWindow
	MarkerStream     MarkerKind = "stream"            // events.KindStreamDisabled, KindStreamEnabled, KindStreamDeclined
)

// Marker is one event drawn as a point (or, for a rate-limit window, a span)
// on its lane.
type Marker struct {
	Kind  MarkerKind
	Time  time.Time
	Until time.Time // end of a rate-limit window; Time otherwise
	Event events.Event
}

// CatalogPoint is the tool catalog's size from Time on.
type CatalogPoint struct {
	Time  time.Time
	Tools int
}

var markerKinds = map[events.Kind]MarkerKind{
	events.KindCallFailed:      MarkerCallFailed,
	events.KindRetryScheduled:  MarkerRetry,
	events.KindRateLimitWindow: MarkerRateLimit,
	events.KindStreamDisabled:  MarkerStream,
	events.KindStreamEnabled:   MarkerStream,
	events.KindStreamDeclined:  MarkerStream,
}

// Build computes the model of evs, in the order given, by the rules of
// [Model]. It keeps references to the events' slices (in Marker.Event).
func Build(evs []events.Event) Model {
	var m Model
	lane := map[string]int{}
	var last []time.Time // each lane's latest time
	var prev time.Time
	if i := slices.IndexFunc(evs, func(e events.Event) bool { return !e.Time.IsZero() }); i >= 0 {
		prev = evs[i].Time
	}
	for _, e := range evs {
		i, ok := lane[e.Server]
		if !ok {
			i = len(m.Lanes)
			lane[e.Server] = i
			m.Lanes = append(m.Lanes, Lane{Server: e.Server})
			last = append(last, time.Time{})
		}
		t := e.Time
		if t.IsZero() {
			t = prev
		}
		prev = t
		if t.Before(last[i]) {
			t = last[i]
		}
		last[i] = t
		m.extend(t)

		l := &m.Lanes[i]
		l.Events++
		switch mk := markerKinds[e.Kind]; {
		case e.Kind == events.KindTransition:
			if e.From == e.To {
				break
			}
			if n := len(l.Bands); n > 0 {
				l.Bands[n-1].End = t
			}
			l.Bands = append(l.Bands, Band{State: string(e.To), Start: t, Seq: e.Seq, From: string(e.From), Trigger: string(e.Trigger)})
		case e.Kind == events.KindSessionOpened || e.Kind == events.KindSessionEnded:
			l.Boundaries = append(l.Boundaries, Boundary{Time: t, Opened: e.Kind == events.KindSessionOpened,
				Generation: e.Generation, SessionID: e.SessionID})
		case e.Kind == events.KindCatalogChanged:
			l.Catalog = append(l.Catalog, CatalogPoint{Time: t, Tools: e.Tools})
		case mk != "":
			marker := Marker{Kind: mk, Time: t, Until: t, Event: e}
			if mk == MarkerRateLimit && e.Delay > 0 {
				marker.Until = t.Add(e.Delay)
				m.extend(marker.Until)
			}
			l.Markers = append(l.Markers, marker)
		}
	}
	if m.End.Sub(m.Start) < time.Millisecond {
		m.End = m.Start.Add(time.Millisecond)
	}
	for i := range m.Lanes {
		if n := len(m.Lanes[i].Bands); n > 0 {
			m.Lanes[i].Bands[n-1].End = m.End
		}
	}
	return m
}

func (m *Model) extend(t time.Time) {
	if t.IsZero() {
		return
	}
	if m.Start.IsZero() || t.Before(m.Start) {
		m.Start = t
	}
	if t.After(m.End) {
		m.End = t
	}
}
