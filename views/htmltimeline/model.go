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
	"time"

	"github.com/mcpsup/mcpsup/events"
)

// Model is what the page draws, built by [Build] by the page's rules: a lane
// per server in order of first appearance; an event without a Time takes the
// one before it, and a lane's time never goes backwards; Start and End span
// every time and window end, End at least 1ms after Start; a state change
// opens a band (the last ends at End); session-opened and -ended are
// boundaries; [markerKind]'s kinds are markers, a rate-limit window spanning
// Delay; catalog-changed gives catalog points. Other events are only counted.
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

// Band is a span of time the server spent in one state.
type Band struct {
	State      string
	Start, End time.Time
	// Seq, From and Trigger are those of the transition that opened it.
	Seq     uint64
	From    string
	Trigger string
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

// markerKind returns the marker kind of an event kind, or "".
func markerKind(kind string) MarkerKind {
	switch kind {
	case string(events.KindCallFailed):
		return MarkerCallFailed
	case string(events.KindRetryScheduled):
		return MarkerRetry
	case string(events.KindRateLimitWindow):
		return MarkerRateLimit
	case string(events.KindStreamDisabled), string(events.KindStreamEnabled), string(events.KindStreamDeclined):
		return MarkerStream
	}
	return ""
}

// Build computes the model of evs, in the order given, by the rules of
// [Model]. It keeps references to the events' slices (in Marker.Event).
func Build(evs []events.Event) Model {
	var m Model
	byServer := map[string]int{}
	lastTime := map[int]time.Time{}
	var prev time.Time
	for _, e := range evs {
		if !e.Time.IsZero() {
			prev = e.Time
			break
		}
	}
	for _, e := range evs {
		server := string(e.Server)
		i, ok := byServer[server]
		if !ok {
			i = len(m.Lanes)
			byServer[server] = i
			m.Lanes = append(m.Lanes, Lane{Server: server})
		}
		t := e.Time
		if t.IsZero() {
			t = prev
		}
		prev = t
		if last, ok := lastTime[i]; ok && t.Before(last) {
			t = last
		}
		lastTime[i] = t
		m.extend(t)

		l := &m.Lanes[i]
		l.Events++
		switch kind := string(e.Kind); {
		case kind == string(events.KindTransition):
			if e.From == e.To {
				break
			}
			if n := len(l.Bands); n > 0 {
				l.Bands[n-1].End = t
			}
			l.Bands = append(l.Bands, Band{State: string(e.To), Start: t, Seq: e.Seq, From: string(e.From), Trigger: string(e.Trigger)})
		case kind == string(events.KindSessionOpened) || kind == string(events.KindSessionEnded):
			l.Boundaries = append(l.Boundaries, Boundary{Time: t, Opened: kind == string(events.KindSessionOpened),
				Generation: e.Generation, SessionID: string(e.SessionID)})
		case kind == string(events.KindCatalogChanged):
			l.Catalog = append(l.Catalog, CatalogPoint{Time: t, Tools: e.Tools})
		case markerKind(kind) != "":
			mk := Marker{Kind: markerKind(kind), Time: t, Until: t, Event: e}
			if mk.Kind == MarkerRateLimit && e.Delay > 0 {
				mk.Until = t.Add(e.Delay)
				m.extend(mk.Until)
			}
			l.Markers = append(l.Markers, mk)
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
