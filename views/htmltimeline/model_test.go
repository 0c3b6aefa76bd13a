package htmltimeline

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
)

var t0 = time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

// tr is a transition event, made from its JSON form (which stays as it is
// whatever Go types the fields have).
func tr(server string, seq uint64, ms int, from, to, trigger string) events.Event {
	return fromJSON(map[string]any{"kind": "transition", "server": server, "seq": seq,
		"time": at(ms).Format(time.RFC3339Nano), "from": from, "to": to, "trigger": trigger})
}

// fromJSON makes an event from the fields of its JSON form ("v" added).
func fromJSON(fields map[string]any) events.Event {
	fields["v"] = events.Version
	b, err := json.Marshal(fields)
	if err != nil {
		panic(err)
	}
	var e events.Event
	if err := e.UnmarshalJSON(b); err != nil {
		panic(fmt.Sprintf("%s: %v", b, err))
	}
	return e
}

func states(bs []Band) []string {
	var out []string
	for _, b := range bs {
		out = append(out, b.State)
	}
	return out
}

func TestBandsFromTransitions(t *testing.T) {
	m := Build([]events.Event{
		tr("a", 1, 0, "idle", "connecting", "started"),
		tr("a", 2, 10, "connecting", "ready", "discovery-succeeded"),
		tr("a", 3, 20, "ready", "ready", "call-failed"), // internal: no band
		tr("b", 1, 5, "idle", "resuming-blind", "started"),
		tr("a", 4, 30, "ready", "connecting", "session-died"),
		tr("a", 5, 40, "connecting", "ready", "discovery-succeeded"),
	})
	require.Equal(t, at(0), m.Start)
	require.Equal(t, at(40), m.End)
	require.Len(t, m.Lanes, 2)
	a, b := m.Lanes[0], m.Lanes[1]
	require.Equal(t, "a", a.Server)
	require.Equal(t, 5, a.Events)
	require.Equal(t, []string{"connecting", "ready", "connecting", "ready"}, states(a.Bands))
	require.Equal(t, []Band{
		{State: "connecting", Start: at(0), End: at(10), Seq: 1, From: "idle", Trigger: "started"},
		{State: "ready", Start: at(10), End: at(30), Seq: 2, From: "connecting", Trigger: "discovery-succeeded"},
		{State: "connecting", Start: at(30), End: at(40), Seq: 4, From: "ready", Trigger: "session-died"},
		{State: "ready", Start: at(40), End: at(40), Seq: 5, From: "connecting", Trigger: "discovery-succeeded"},
	}, a.Bands)
	require.Equal(t, []Band{{State: "resuming-blind", Start: at(5), End: at(40), Seq: 1, From: "idle", Trigger: "started"}}, b.Bands)
}

func TestMarkersBoundariesCatalog(t *testing.T) {
	rl := classify.Verdict{Class: classify.RateLimited, HTTPStatus: 429, RetryAfter: time.Second}
	evs := []events.Event{
		tr("s", 1, 0, "idle", "connecting", "started"),
		{Kind: events.KindSessionOpened, Server: "s", Seq: 2, Time: at(1), Generation: 1, SessionID: "sid:1"},
		{Kind: events.KindProbeReport, Server: "s", Seq: 3, Time: at(2)}, // counted, not drawn
		{Kind: events.KindCatalogChanged, Server: "s", Seq: 4, Time: at(3), Tools: 3, Added: []string{"a", "b", "c"}},
		{Kind: events.KindRateLimitWindow, Server: "s", Seq: 5, Time: at(4), Delay: time.Second, Verdict: rl},
		{Kind: events.KindCallFailed, Server: "s", Seq: 6, Time: at(5), Op: "tools/call", Delivery: events.DeliveryAnswered, Verdict: rl},
		{Kind: events.KindRetryScheduled, Server: "s", Seq: 7, Time: at(6), Attempt: 1, Delay: 200 * time.Millisecond},
		{Kind: events.KindStreamDisabled, Server: "s", Seq: 8, Time: at(7)},
		{Kind: events.KindStreamEnabled, Server: "s", Seq: 9, Time: at(8)},
		{Kind: events.KindSessionEnded, Server: "s", Seq: 10, Time: at(9), Generation: 1, SessionID: "sid:1"},
		{Kind: events.KindCatalogChanged, Server: "s", Seq: 11, Time: at(10), Tools: 1},
		{Kind: "kind-from-the-future", Server: "s", Seq: 12, Time: at(11)},
		{Kind: events.KindStreamDeclined, Server: "s", Seq: 13, Time: at(12)},
	}
	m := Build(evs)
	require.Equal(t, at(1004), m.End, "the rate-limit window's end extends the recording")
	l := m.Lanes[0]
	require.Equal(t, 13, l.Events)
	require.Equal(t, []Boundary{{Time: at(1), Opened: true, Generation: 1, SessionID: "sid:1"},
		{Time: at(9), Generation: 1, SessionID: "sid:1"}}, l.Boundaries)
	require.Equal(t, []CatalogPoint{{Time: at(3), Tools: 3}, {Time: at(10), Tools: 1}}, l.Catalog)
	var kinds []MarkerKind
	for _, mk := range l.Markers {
		kinds = append(kinds, mk.Kind)
	}
	require.Equal(t, []MarkerKind{MarkerRateLimit, MarkerCallFailed, MarkerRetry, MarkerStream, MarkerStream, MarkerStream}, kinds)
	require.Equal(t, at(1004), l.Markers[0].Until)
	require.Equal(t, at(5), l.Markers[1].Until, "a point marker ends where it starts")
	require.Equal(t, evs[5], l.Markers[1].Event)
}

func TestTimesMissingOrBackwards(t *testing.T) {
	noTime := func(e events.Event) events.Event { e.Time = time.Time{}; return e }
	m := Build([]events.Event{
		noTime(tr("a", 1, 0, "idle", "connecting", "started")), // takes the first time: at(5)
		tr("b", 1, 5, "idle", "connecting", "started"),
		noTime(tr("a", 2, 0, "connecting", "ready", "discovery-succeeded")), // the previous event's: at(5)
		tr("b", 2, 20, "connecting", "ready", "discovery-succeeded"),
		tr("b", 3, 15, "ready", "connecting", "session-died"), // backwards in its lane: at(20)
	})
	require.Equal(t, at(5), m.Start)
	require.Equal(t, at(20), m.End)
	a, b := m.Lanes[0], m.Lanes[1]
	require.Equal(t, at(5), a.Bands[0].Start)
	require.Equal(t, at(5), a.Bands[1].Start)
	require.Equal(t, at(20), b.Bands[2].Start)
	require.Equal(t, at(20), b.Bands[1].End)
}

func TestEmptyAndTimeless(t *testing.T) {
	m := Build(nil)
	require.Empty(t, m.Lanes)
	require.Equal(t, time.Millisecond, m.End.Sub(m.Start))

	m = Build([]events.Event{{Kind: events.KindTransition, From: "idle", To: "connecting"}})
	require.Len(t, m.Lanes, 1)
	require.Equal(t, "", m.Lanes[0].Server, "the empty server name is a lane")
	require.Equal(t, []string{"connecting"}, states(m.Lanes[0].Bands))
	require.Equal(t, m.End, m.Lanes[0].Bands[0].End)
}

// demoEvents is the demo's recording: every failure story against real
// servers (go run ./examples/demo -events ...).
func demoEvents(t testing.TB) []events.Event {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "demo.jsonl"))
	require.NoError(t, err)
	defer f.Close()
	evs, err := events.ReadJSONLines(f)
	require.NoError(t, err)
	return evs
}

func TestDemoModel(t *testing.T) {
	evs := demoEvents(t)
	m := Build(evs)
	transitions, failed := map[string][]string{}, map[string]int{}
	for _, e := range evs {
		switch {
		case e.Kind == events.KindTransition && e.From != e.To:
			transitions[string(e.Server)] = append(transitions[string(e.Server)], string(e.To))
		case e.Kind == events.KindCallFailed:
			failed[string(e.Server)]++
		}
	}
	require.Len(t, m.Lanes, len(transitions))
	for _, l := range m.Lanes {
		require.Equal(t, transitions[l.Server], states(l.Bands), l.Server)
		n := 0
		for _, mk := range l.Markers {
			if mk.Kind == MarkerCallFailed {
				n++
			}
		}
		require.Equal(t, failed[l.Server], n, l.Server)
	}
	require.Equal(t, 4, failed["s4-call-errors"], "the S4 story fails four calls: 429, 500, 403, 404")
}
