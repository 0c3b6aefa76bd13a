// Package htmltimeline draws a recording of mcpsup events as one
// self-contained HTML page: a lane per server with its states as coloured
// bands across time, session boundaries with their generation, markers for
// failed calls, retries, rate-limit windows and standalone-stream decisions
// (hover one to see the event), the tool catalog's size over time, zoom and
// pan on the time axis, and a legend. [Write] makes the page from a recording;
// [Live] serves the same page and feeds it events as they happen, as
// server-sent events.
//
// The page reads nothing but the events' JSON form, the lines
// [events.JSONLines] writes: [Write] embeds those lines in the page, [Live]
// sends one per server-sent event. A host can thus draw its own recordings;
// fields the page does not know (a newer writer's, a host's own such as
// server tags) are shown as they are when an event is hovered.
// The page loads nothing from the network and treats every event text as
// data: text is set as text, never parsed as markup.
//
// A lane with more than 300 marks (or 1500 bands) in view draws them
// aggregated, one per 8-pixel column with its count; zooming in draws each.
// Chromium draws the page of 10,000 events in about 0.1 s
// (docs/benchmarks.md, figure 7).
//
// [Build] computes the page's data model in Go, by the same rules the page's
// script applies (see [Model]); the tests hold the page to it.
//
// Package htmltimeline imports events; only commands and examples import it.
package htmltimeline

import (
	"time"

	"github.com/mcpsup/mcpsup/events"
)

// Model is what the page draws, built from a recording by [Build].
//
// Rules (the page's script applies the same ones):
//   - Lanes are the servers, in order of first appearance ([events.Event.Server];
//     the empty name is a lane of its own).
//   - An event's time is its Time; an event without one takes the time of
//     the event before it in the recording (the recording's first time if
//     none came before). Within a lane time never goes backwards: an event
//     earlier than the lane's previous one is drawn at the previous one's time.
//   - Start is the earliest time, End the latest, rate-limit window ends
//     included; End is at least 1ms after Start.
//   - A transition that changes state (From != To) ends the lane's open band
//     and opens a band of state To; the last band ends at End. An internal
//     transition (From == To) draws no band.
//   - session-opened and session-ended events are boundaries.
//   - call-failed, retry-scheduled, rate-limit-window, stream-disabled,
//     stream-enabled and stream-declined events are markers; a rate-limit
//     window spans Delay.
//   - catalog-changed events are points of the catalog's size (Tools).
//
// Events of other kinds (probe reports, kinds added later) are counted in the
// lane but not drawn.
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

// markerKind returns the marker kind of an event kind, or "". Kinds are
// compared as strings, their JSON form.
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
