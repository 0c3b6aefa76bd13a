package htmltimeline

import (
	"fmt"
	"html"
	"image"
	"image/png"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
)

// TestBrowserDemo loads the page of the demo's recording in headless
// Chromium and holds the DOM to the Go model: one lane per server in order,
// one band per state-changing transition in order, one marker per failed
// call. It saves a screenshot (timeline.png) as an artifact.
func TestBrowserDemo(t *testing.T) {
	bin := chromium(t)
	evs := demoEvents(t)
	m := Build(evs)
	page := writePageFile(t, t.TempDir(), evs)
	dom := dumpDOM(t, bin, page)
	requireBody(t, dom, true, "data-rendered", "true")
	sum := summary(t, dom)
	require.True(t, strings.HasPrefix(sum, fmt.Sprintf("%d events, %d servers, from ", len(evs), len(m.Lanes))), sum)
	require.NotContains(t, sum, "unreadable", "every line was read")

	lanes := elements(dom, "lane", "data-server")
	require.Len(t, lanes, len(m.Lanes))
	for i, l := range lanes {
		require.Equal(t, m.Lanes[i].Server, l.attrs["data-server"])
		require.Equal(t, i, l.int(t, "data-lane"))
	}

	require.Empty(t, elements(dom, "band agg", "data-count"), "a small recording draws every band")
	bands := byLane(t, elements(dom, "band", "data-state"))
	failed := byLane(t, elements(dom, "marker call-failed", "data-seq"))
	require.Empty(t, elements(dom, "marker agg call-failed", "data-count"))
	for i, l := range m.Lanes {
		var want, got []string
		for _, b := range l.Bands {
			want = append(want, fmt.Sprintf("%s#%d", b.State, b.Seq))
		}
		for _, b := range bands[i] {
			got = append(got, fmt.Sprintf("%s#%s", b.attrs["data-state"], b.attrs["data-seq"]))
		}
		require.Equal(t, want, got, "bands of %s", l.Server)

		want, got = nil, nil
		for _, mk := range l.Markers {
			if mk.Kind == MarkerCallFailed {
				want = append(want, fmt.Sprint(mk.Event.Seq))
			}
		}
		for _, mk := range failed[i] {
			got = append(got, mk.attrs["data-seq"])
		}
		require.Equal(t, want, got, "failed calls of %s", l.Server)
	}
	require.Len(t, failed[1], 4, "lane 1 is s4-call-errors: 429, 500, 403, 404")

	shot := screenshot(t, bin, page, "timeline.png")
	requireDrawn(t, shot)
}

// requireDrawn checks the PNG is the window's size and not blank: bands
// cover well over a tenth of it.
func requireDrawn(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	require.Equal(t, image.Rect(0, 0, 1400, 900), img.Bounds())
	drawn := 0
	for y := 0; y < 900; y += 4 {
		for x := 0; x < 1400; x += 4 {
			r, g, b, _ := img.At(x, y).RGBA()
			if min(r, g, b) < 0xdf00 { // darker than the grid's light grey
				drawn++
			}
		}
	}
	require.Greater(t, drawn, 1400*900/16/10, "at least a tenth of the screenshot is drawn")
}

// TestBrowserHostileText loads events whose every text is markup that would
// run script: the page shows it as text and runs nothing.
func TestBrowserHostileText(t *testing.T) {
	bin := chromium(t)
	page := writePageFile(t, t.TempDir(), hostileEvents())
	dom := dumpDOM(t, bin, page)
	requireBody(t, dom, true, "data-rendered", "true")
	requireBody(t, dom, false, "data-pwned", "")
	require.False(t, strings.Contains(dom, "<img"), "no event text became an element")
	requireIn(t, dom, "&lt;/script&gt;&lt;img src=x onerror=") // the hostile server name, shown as text
	require.True(t, strings.HasPrefix(summary(t, dom), "5 events, 3 servers, from "), summary(t, dom))
	lanes := elements(dom, "lane", "data-server")
	require.Len(t, lanes, 3)
	require.Equal(t, hostile, lanes[0].attrs["data-server"])
	require.Equal(t, "constructor", lanes[2].attrs["data-server"])
	bands := elements(dom, "band", "data-state")
	require.Len(t, bands, 3)
	require.Equal(t, hostile, bands[1].attrs["data-state"])
	require.Equal(t, "__proto__x", bands[2].attrs["data-state"])
	require.Len(t, elements(dom, "marker call-failed", "data-seq"), 1)
}

// synthetic returns n events of five servers cycling through connects,
// failed calls, rate-limit windows, retries and catalog changes; "flappy"
// changes state far more often than the others.
func synthetic(n int) []events.Event {
	servers := []string{"gateway-a", "gateway-b", "search", "files", "flappy"}
	seq := map[string]uint64{}
	state := map[string]string{}
	var out []events.Event
	t := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	// emit sends e as server s's next event; the name goes through the
	// JSON form, which is a string whatever Go type the field has.
	emit := func(s string, e events.Event) {
		seq[s]++
		e.Server = fromJSON(map[string]any{"kind": "x", "server": s}).Server
		e.Seq, e.Time = seq[s], t
		out = append(out, e)
	}
	move := func(s, to, trigger string) {
		from := state[s]
		if from == "" {
			from = "idle"
		}
		state[s] = to
		e := fromJSON(map[string]any{"kind": "transition", "server": s, "from": from, "to": to, "trigger": trigger})
		e.Generation = seq[s]/8 + 1
		emit(s, e)
	}
	rl := classify.Verdict{Class: classify.RateLimited, HTTPStatus: 429, RetryAfter: 2 * time.Second, Method: "tools/call"}
	se := classify.Verdict{Class: classify.ServerError, HTTPStatus: 500, Method: "tools/call"}
	for i := 0; len(out) < n; i++ {
		t = t.Add(time.Duration(50+i%7*30) * time.Millisecond)
		s := servers[i%len(servers)]
		if s == "flappy" {
			move(s, "connecting", "session-died")
			move(s, "ready", "discovery-succeeded")
			continue
		}
		switch (i / len(servers)) % 10 {
		case 0:
			move(s, "connecting", "started")
			emit(s, events.Event{Kind: events.KindSessionOpened, Generation: seq[s]/8 + 1, SessionID: "sid:0000"})
		case 1:
			move(s, "ready", "discovery-succeeded")
			emit(s, events.Event{Kind: events.KindCatalogChanged, Tools: 3 + i%5})
		case 2, 3, 5:
			emit(s, events.Event{Kind: events.KindCallFailed, Op: "tools/call", Name: "search", Delivery: events.DeliveryAnswered, Verdict: se})
			move(s, "ready", "call-failed")
		case 4:
			emit(s, events.Event{Kind: events.KindRateLimitWindow, Delay: 2 * time.Second, Verdict: rl})
			emit(s, events.Event{Kind: events.KindCallFailed, Op: "tools/call", Delivery: events.DeliveryAnswered, Verdict: rl})
		case 6:
			emit(s, events.Event{Kind: events.KindStreamDisabled, Detail: "GET-hostile"})
		case 7:
			move(s, "failed", "session-died")
			emit(s, events.Event{Kind: events.KindRetryScheduled, Attempt: 1, Delay: time.Second})
		case 8:
			emit(s, events.Event{Kind: events.KindSessionEnded, Generation: seq[s]/8 + 1, SessionID: "sid:0000"})
		case 9:
			move(s, "connecting", "retry-due")
		}
	}
	return out[:n]
}

// TestBrowserTenThousandEvents loads 10,000 events: lanes with more marks
// (or bands) in view than the page draws one by one aggregate them, and the
// aggregates account for every one, in order.
func TestBrowserTenThousandEvents(t *testing.T) {
	bin := chromium(t)
	evs := synthetic(10000)
	m := Build(evs)
	dom := dumpDOM(t, bin, writePageFile(t, t.TempDir(), evs))
	requireBody(t, dom, true, "data-rendered", "true")
	require.Len(t, elements(dom, "lane", "data-server"), len(m.Lanes))

	aggMarks := 0
	for _, kind := range []MarkerKind{MarkerCallFailed, MarkerRetry, MarkerRateLimit, MarkerStream} {
		for lane, es := range byLane(t, elements(dom, "marker agg "+string(kind), "data-count")) {
			for _, e := range es {
				aggMarks += e.int(t, "data-count")
				require.Less(t, e.int(t, "data-first"), len(m.Lanes[lane].Markers))
			}
		}
	}
	single := len(elements(dom, "marker call-failed", "data-seq")) + len(elements(dom, "marker retry", "data-seq")) +
		len(elements(dom, "marker rate-limit-window", "data-seq")) + len(elements(dom, "marker stream", "data-seq"))
	total := 0
	for _, l := range m.Lanes {
		total += len(l.Markers)
	}
	require.Positive(t, aggMarks, "10,000 events are too many marks to draw one by one")
	require.Equal(t, total, aggMarks+single, "every mark is drawn, alone or in an aggregate")

	// Every lane's bands are drawn in order without a gap, alone or in an
	// aggregate; flappy has more than the page draws one by one, so its
	// sub-pixel runs are aggregated.
	flappy := len(m.Lanes) - 1
	require.Equal(t, "flappy", m.Lanes[flappy].Server)
	require.Greater(t, len(m.Lanes[flappy].Bands), 1500)
	got := map[int][]drawnBands{}
	for _, e := range elements(dom, "band", "data-band") {
		got[e.int(t, "data-lane")] = append(got[e.int(t, "data-lane")], drawnBands{e.int(t, "data-band"), 1})
	}
	for _, e := range elements(dom, "band agg", "data-count") {
		got[e.int(t, "data-lane")] = append(got[e.int(t, "data-lane")], drawnBands{e.int(t, "data-first"), e.int(t, "data-count")})
	}
	require.Less(t, len(got[flappy]), len(m.Lanes[flappy].Bands), "some of flappy's bands are aggregated")
	for i, l := range m.Lanes {
		slices.SortFunc(got[i], func(a, b drawnBands) int { return a.first - b.first })
		next := 0
		for _, d := range got[i] {
			require.Equal(t, next, d.first, "%s: bands drawn in order without a gap", l.Server)
			next += d.count
		}
		require.Equal(t, len(l.Bands), next, l.Server)
	}
}

// drawnBands is a band or an aggregate of bands as drawn: the index of its
// first band and how many it stands for.
type drawnBands struct{ first, count int }

// requireIn checks dom holds s without printing the whole DOM.
func requireIn(t *testing.T, dom, s string) {
	t.Helper()
	require.True(t, strings.Contains(dom, s), "the page shows %q", s)
}

// requireBody checks the body element has (or, with want false, lacks) the
// attribute, with the value when want.
func requireBody(t *testing.T, dom string, want bool, attr, value string) {
	t.Helper()
	var body *element
	for _, m := range startTag.FindAllStringSubmatch(dom, -1) {
		if m[1] == "body" {
			e := element{tag: "body", attrs: map[string]string{}}
			for _, a := range attrRe.FindAllStringSubmatch(m[2], -1) {
				e.attrs[a[1]] = html.UnescapeString(a[2])
			}
			body = &e
			break
		}
	}
	require.NotNil(t, body, "the DOM has a body")
	got, ok := body.attrs[attr]
	if !want {
		require.False(t, ok, "body has no %s attribute", attr)
		return
	}
	require.True(t, ok, "body has a %s attribute", attr)
	require.Equal(t, value, got)
}

// summary returns the text of the page's summary line.
func summary(t *testing.T, dom string) string {
	t.Helper()
	m := regexp.MustCompile(`<p id="summary">([^<]*)</p>`).FindStringSubmatch(dom)
	require.NotNil(t, m, "the page has a summary line")
	return html.UnescapeString(m[1])
}

// hoverScript moves the mouse onto the first element matching each selector
// in turn and records the tooltip's text in body[data-tip-i].
func hoverScript(selectors ...string) string {
	var b strings.Builder
	b.WriteString("<script>\n")
	for i, sel := range selectors {
		fmt.Fprintf(&b, `(function () {
  var n = document.querySelector(%q), r = n.getBoundingClientRect();
  n.dispatchEvent(new MouseEvent('mousemove', { bubbles: true, clientX: r.left + 1, clientY: r.top + 1 }));
  document.body.setAttribute('data-tip-%d', document.getElementById('tip').hidden ? 'hidden' : document.getElementById('tip').textContent);
})();
`, sel, i)
	}
	b.WriteString("</script>\n")
	return b.String()
}

// TestBrowserHoverShowsTheEvent hovers a failed call's marker and a band:
// the tooltip shows the event's verdict, HTTP status, JSON-RPC code and
// delivery, as text.
func TestBrowserHoverShowsTheEvent(t *testing.T) {
	bin := chromium(t)
	evs := append(demoEvents(t), hostileEvents()...)
	var b strings.Builder
	require.NoError(t, Write(&b, evs))
	// A field this page does not know, as a newer writer or a host may add.
	page := strings.Replace(b.String(), `{"v":1,"kind":"call-failed","server":"s4-call-errors","seq":8,`,
		`{"v":1,"kind":"call-failed","server":"s4-call-errors","seq":8,"tags":{"team":"search"},`, 1)
	require.Contains(t, page, `"tags"`)
	page = strings.Replace(page, "</body>", hoverScript(
		`.marker.call-failed[data-seq="8"]`,        // S4's 429
		`.band[data-state="stale-recovering"]`,     // S2's null-id 400
		`.lane[data-lane="7"] .marker.call-failed`, // the hostile call
	)+"</body>", 1)
	path := t.TempDir() + "/hover.html"
	require.NoError(t, os.WriteFile(path, []byte(page), 0o600))
	dom := dumpDOM(t, bin, path)
	requireBody(t, dom, false, "data-pwned", "")

	tip := func(i int) string {
		m := regexp.MustCompile(fmt.Sprintf(`data-tip-%d="([^"]*)"`, i)).FindStringSubmatch(dom)
		require.NotNil(t, m, "tooltip %d recorded", i)
		return html.UnescapeString(m[1])
	}
	for _, want := range []string{"call-failed at +", "verdict: rate-limited", "HTTP status: 429", "Retry-After: 1 s", "delivery: answered", "op: tools/call",
		`tags: {"team":"search"}`} {
		require.Contains(t, tip(0), want)
	}
	for _, want := range []string{"stale-recovering", "transition: probing -> stale-recovering", "HTTP status: 400",
		`JSON-RPC: code -32000 "Bad Request: No valid session ID provided" (null id)`, "verdict: session-expired"} {
		require.Contains(t, tip(1), want)
	}
	for _, want := range []string{"server: " + hostile, "delivery: " + hostile, "JSON-RPC: code -32602", "detail: " + hostile} {
		require.Contains(t, tip(2), want, "hostile text is shown as it is, as text")
	}
	require.False(t, strings.Contains(dom, "<img"), "no event text became an element")
}

// TestBrowserZoomAndPan zooms into the start of the recording with the
// wheel and pans with a drag: the view narrows and moves, the axis and
// the bands are drawn for the new view, and bands out of view are culled.
func TestBrowserZoomAndPan(t *testing.T) {
	bin := chromium(t)
	var b strings.Builder
	require.NoError(t, Write(&b, demoEvents(t)))
	script := `<script>
(function () {
  var svg = document.getElementById('timeline'), r = svg.getBoundingClientRect();
  var at = r.left + 190 + 20; // near the start of the plot
  document.body.setAttribute('data-view-0', document.getElementById('view').textContent);
  for (var i = 0; i < 12; i++) svg.dispatchEvent(new WheelEvent('wheel', { deltaY: -100, clientX: at, clientY: r.top + 60, bubbles: true, cancelable: true }));
  requestAnimationFrame(function () {
    document.body.setAttribute('data-view-1', document.getElementById('view').textContent);
    document.body.setAttribute('data-bands-1', String(document.querySelectorAll('.band').length));
    svg.dispatchEvent(new MouseEvent('mousedown', { clientX: at + 200, clientY: r.top + 60, bubbles: true }));
    window.dispatchEvent(new MouseEvent('mousemove', { clientX: at, clientY: r.top + 60, bubbles: true }));
    window.dispatchEvent(new MouseEvent('mouseup', { bubbles: true }));
    requestAnimationFrame(function () {
      document.body.setAttribute('data-view-2', document.getElementById('view').textContent);
      fetch('done');
    });
  });
})();
</script>
`
	dom := dumpWhenDone(t, bin, b.String(), script, nil)
	attr := func(name string) string {
		m := regexp.MustCompile(name + `="([^"]*)"`).FindStringSubmatch(dom)
		require.NotNil(t, m, "%s recorded", name)
		return html.UnescapeString(m[1])
	}
	span := regexp.MustCompile(`\(([\d.]+) (ms|s)\)$`)
	ms := func(view string) float64 {
		m := span.FindStringSubmatch(view)
		require.NotNil(t, m, "view %q names its span", view)
		v, err := strconv.ParseFloat(m[1], 64)
		require.NoError(t, err)
		if m[2] == "s" {
			v *= 1000
		}
		return v
	}
	full, zoomed, panned := attr("data-view-0"), attr("data-view-1"), attr("data-view-2")
	require.Less(t, ms(zoomed), ms(full)/10, "12 wheel steps zoom in: %q -> %q", full, zoomed)
	require.InDelta(t, ms(zoomed), ms(panned), ms(zoomed)/100, "a pan keeps the span: %q -> %q", zoomed, panned)
	require.NotEqual(t, zoomed, panned, "a drag moves the view")
	bands, err := strconv.Atoi(attr("data-bands-1"))
	require.NoError(t, err)
	require.Less(t, bands, countBands(Build(demoEvents(t))), "bands out of view are not drawn")
}
