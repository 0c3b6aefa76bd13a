package htmltimeline

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
)

// sse reads server-sent events: each message's id and data.
type sse struct {
	body io.Closer
	sc   *bufio.Scanner
}

func openStream(t *testing.T, url, lastID string) *sse {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	require.NoError(t, err)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	return &sse{body: resp.Body, sc: bufio.NewScanner(resp.Body)}
}

// next returns the next message's id and event; ok false at the end of the
// stream.
func (s *sse) next(t *testing.T) (id uint64, e events.Event, ok bool) {
	t.Helper()
	var data string
	for s.sc.Scan() {
		line := s.sc.Text()
		switch {
		case line == "":
			if data == "" {
				continue
			}
			require.NoError(t, e.UnmarshalJSON([]byte(data)))
			return id, e, true
		case strings.HasPrefix(line, "id: "):
			n, err := strconv.ParseUint(strings.TrimPrefix(line, "id: "), 10, 64)
			require.NoError(t, err)
			id = n
		case strings.HasPrefix(line, "data: "):
			data = strings.TrimPrefix(line, "data: ")
		default:
			t.Fatalf("unexpected line %q", line)
		}
	}
	return 0, events.Event{}, false
}

func numbered(n int) []events.Event {
	var out []events.Event
	for i := 1; i <= n; i++ {
		out = append(out, tr("live", uint64(i), i, "idle", fmt.Sprint("state-", i), "t"))
	}
	return out
}

func TestLiveStreamsKeptThenNewEventsUntilClose(t *testing.T) {
	live := NewLive(0)
	srv := httptest.NewServer(live)
	defer srv.Close()
	evs := numbered(5)
	for _, e := range evs[:3] {
		live.Emit(e)
	}
	s := openStream(t, srv.URL+"/events", "")
	for i := range 3 {
		id, e, ok := s.next(t)
		require.True(t, ok)
		require.Equal(t, uint64(i+1), id)
		require.Equal(t, evs[i], e)
	}
	live.Emit(evs[3])
	live.Emit(evs[4])
	for i := 3; i < 5; i++ {
		id, e, ok := s.next(t)
		require.True(t, ok)
		require.Equal(t, uint64(i+1), id)
		require.Equal(t, evs[i], e)
	}
	live.Close()
	_, _, ok := s.next(t)
	require.False(t, ok, "Close ends the stream")

	live.Emit(evs[0])
	require.Equal(t, uint64(1), live.Skipped(), "an event after Close is not kept")
	s = openStream(t, srv.URL+"/events", "4")
	id, _, ok := s.next(t)
	require.True(t, ok)
	require.Equal(t, uint64(5), id, "after Close a stream still serves what was kept, then ends")
	_, _, ok = s.next(t)
	require.False(t, ok)
}

func TestLiveResumesAfterLastEventIDAndKeepsTheLastEvents(t *testing.T) {
	live := NewLive(3)
	srv := httptest.NewServer(live)
	defer srv.Close()
	defer live.Close()
	for _, e := range numbered(6) {
		live.Emit(e)
	}
	for _, c := range []struct {
		lastID string
		first  uint64
		query  string
	}{{"", 4, ""}, {"1", 4, ""}, {"4", 5, ""}, {"garbage", 4, ""}, {"", 6, "?after=5"}, {"4", 5, "?after=5"}, {"99", 4, ""}} {
		s := openStream(t, srv.URL+"/events"+c.query, c.lastID)
		id, e, ok := s.next(t)
		require.True(t, ok)
		require.Equal(t, c.first, id, "Last-Event-ID %q", c.lastID)
		require.Equal(t, c.first, e.Seq)
	}
}

func TestLiveSkipsWhatCannotBeMarshalled(t *testing.T) {
	live := NewLive(0)
	defer live.Close()
	live.Emit(events.Event{Kind: events.KindCallFailed, Verdict: classify.Verdict{Class: classify.Class(200)}})
	require.Equal(t, uint64(1), live.Skipped())
}

func TestLiveServesThePage(t *testing.T) {
	live := NewLive(0)
	srv := httptest.NewServer(live)
	defer srv.Close()
	defer live.Close()
	live.Emit(tr("s", 1, 0, "idle", "connecting", "started"))

	for _, path := range []string{"/", "/timeline"} {
		resp, err := http.Get(srv.URL + path)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"))
		require.Contains(t, string(body), `<body data-live="events?after=1">`, "the stream resumes after the events the page holds")
		back, err := events.ReadJSONLines(strings.NewReader(embedded(t, string(body))))
		require.NoError(t, err)
		require.Equal(t, []events.Event{tr("s", 1, 0, "idle", "connecting", "started")}, back)
	}

	resp, err := http.Post(srv.URL+"/events", "text/plain", strings.NewReader("x"))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)

	req, err := http.NewRequestWithContext(context.Background(), http.MethodHead, srv.URL+"/events", nil)
	require.NoError(t, err)
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
}

// TestBrowserLive loads a live page in headless Chromium: the page holds
// the events kept when it was served, and draws the ones the stream sends
// after. Here the page is served empty, so all it draws comes as
// server-sent events; the dump is taken once the page drew every event.
func TestBrowserLive(t *testing.T) {
	bin := chromium(t)
	live := NewLive(0)
	defer live.Close()
	evs := demoEvents(t)
	for _, e := range evs {
		live.Emit(e)
	}
	m := Build(evs)
	var page strings.Builder
	require.NoError(t, writePage(&page, nil, "events"))
	dom := dumpWhenDone(t, bin, page.String(), fmt.Sprintf(`<script>
new MutationObserver(function (_, obs) {
  if (document.getElementById('summary').textContent.indexOf('%d events,') === 0) { obs.disconnect(); fetch('done'); }
}).observe(document.getElementById('summary'), { childList: true });
</script>
`, len(evs)), live)
	lanes := elements(dom, "lane", "data-server")
	require.Len(t, lanes, len(m.Lanes), "the page drew what the stream sent")
	require.Len(t, elements(dom, "band", "data-state"), countBands(m))
	require.True(t, strings.HasPrefix(summary(t, dom), fmt.Sprintf("%d events, %d servers", len(evs), len(m.Lanes))), summary(t, dom))
}

func countBands(m Model) int {
	n := 0
	for _, l := range m.Lanes {
		n += len(l.Bands)
	}
	return n
}
