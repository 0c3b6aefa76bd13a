package supervisor_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/supervisor"
)

// streamMeter counts the bytes read from the bodies of standalone stream
// GETs and records each GET's Last-Event-ID.
type streamMeter struct {
	base    http.RoundTripper
	mu      sync.Mutex
	read    int64
	lastIDs []string
}

func (m *streamMeter) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet {
		return m.base.RoundTrip(req)
	}
	m.mu.Lock()
	m.lastIDs = append(m.lastIDs, req.Header.Get("Last-Event-ID"))
	m.mu.Unlock()
	resp, err := m.base.RoundTrip(req)
	if err == nil {
		resp.Body = &meteredBody{ReadCloser: resp.Body, m: m}
	}
	return resp, err
}

func (m *streamMeter) snapshot() (int64, []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.read, append([]string(nil), m.lastIDs...)
}

type meteredBody struct {
	io.ReadCloser
	m *streamMeter
}

func (b *meteredBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.m.mu.Lock()
	b.m.read += int64(n)
	b.m.mu.Unlock()
	return n, err
}

// TestE2EHostileStandaloneStreamKeepsTheSession: nothing a server or gateway
// sends on the standalone stream ends the session (DESIGN.md failure story
// S5): go-sdk gets only valid messages, every dropped event becomes an event
// of ours naming what was wrong, and the bytes read are bounded.
func TestE2EHostileStandaloneStreamKeepsTheSession(t *testing.T) {
	const maxEvent = 1 << 20 // StreamConfig.MaxEventBytes' default
	garbage := make([]byte, 4<<20)
	for i := range garbage {
		garbage[i] = byte(i)
	}
	cases := []struct {
		name    string
		rules   []mcptest.Rule
		reason  string // the dropped event's Why (session.DropReason)
		maxRead int64  // bytes read from the hostile stream at most
		lastIDs []string
	}{
		{name: "a line without a colon", reason: "malformed-line", maxRead: 1 << 10,
			rules: []mcptest.Rule{mcptest.HostileSSE([]byte("data: {}\nno colon here\n\n"), 30*time.Second)}},
		{name: "data that is not JSON-RPC", reason: "not-jsonrpc", maxRead: 1 << 10,
			rules: []mcptest.Rule{mcptest.HostileSSE([]byte("data: <html>oops</html>\n\ndata: {\"a\":1}\n\n"), 30*time.Second)}},
		{name: "a 10 MB event", reason: "oversized", maxRead: maxEvent + 64<<10,
			rules: []mcptest.Rule{mcptest.HostileSSE([]byte("data: \""+strings.Repeat("x", 10<<20)+"\"\n\n"), 30*time.Second)}},
		{name: "garbage", reason: "oversized", maxRead: maxEvent + 64<<10,
			rules: []mcptest.Rule{mcptest.HostileSSE(garbage, 30*time.Second)}},
		{name: "a refused resumption", lastIDs: []string{"", "1", ""}, maxRead: 1 << 10,
			rules: []mcptest.Rule{
				mcptest.HostileSSE([]byte("id: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"x\"}}\n\n"), 0),
				{Name: "replay refused", Match: mcptest.Match{Verb: http.MethodGet, Occurrence: mcptest.Nth(2)},
					Action: mcptest.PlainText(http.StatusBadRequest, "failed to replay events")},
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv, err := mcptest.NewServer(mcptest.Options{Tools: 1})
			require.NoError(t, err)
			t.Cleanup(srv.Close)
			for _, r := range c.rules {
				srv.Gateway().Add(r)
			}
			meter := &streamMeter{base: srv.HTTPClient().Transport}
			rec := &events.Recorder{}
			cfg := fastStream(supervisor.Config{Endpoint: srv.URL(), Name: t.Name(), HTTP: supervisor.HTTPConfig{HTTPClient: &http.Client{Transport: meter}}, Observe: supervisor.ObserveConfig{Events: rec}})
			cfg.Stream.Keeper.MaxEventBytes = 0 // the default bound
			sup := mustNew(t, cfg)
			ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
			defer cancel()
			sup.Start()
			require.NoError(t, sup.WaitForState(ctx, supervisor.Ready))

			if c.reason != "" {
				require.Eventually(t, func() bool { return len(eventsOf(rec, events.KindStreamEventDropped)) > 0 },
					e2eTimeout, 5*time.Millisecond, "the dropped event is reported")
				dropped := eventsOf(rec, events.KindStreamEventDropped)
				require.Equal(t, c.reason, dropped[0].Why)
				require.Empty(t, dropped[0].Detail, "no text of the server's in the event")
				require.Equal(t, uint64(1), dropped[0].Generation)
			}
			if c.lastIDs != nil {
				require.NoError(t, srv.Log().WaitVerb(ctx, http.MethodGet, len(c.lastIDs)))
			}
			read, lastIDs := meter.snapshot()
			if c.lastIDs != nil {
				require.Equal(t, c.lastIDs, lastIDs, "the refused Last-Event-ID is dropped once")
			}
			require.LessOrEqual(t, read, c.maxRead, "bytes read from the stream")

			_, err = sup.CallTool(ctx, callRecord("after"))
			require.NoError(t, err)
			require.Equal(t, supervisor.Ready, sup.State())
			require.Equal(t, 1, sup.SessionsOpened())
			require.Equal(t, 1, srv.Log().Count("initialize"), "sessions opened at the server")
			require.Zero(t, srv.Log().CountVerb(http.MethodDelete))
			supervisor.FlushEvents(sup)
			require.Empty(t, eventsOf(rec, events.KindStreamDisabled))
		})
	}
}

// A stream that alternates a dropped event with a good one is never
// refused for drops in a row, and could flood the sink with an event per
// drop: the first 16 drops of a session each have one, then every 1024th,
// each naming the count.
func TestStreamEventDropsAreThrottled(t *testing.T) {
	const pairs = 5000
	var flood strings.Builder
	for range pairs {
		flood.WriteString("data: <html>oops</html>\n\n")
		flood.WriteString(`data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}` + "\n\n")
	}
	srv, err := mcptest.NewServer(mcptest.Options{Tools: 1})
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	srv.Gateway().Add(mcptest.HostileSSE([]byte(flood.String()), 30*time.Second))
	rec := &events.Recorder{}
	sup := mustNew(t, fastStream(supervisor.Config{Endpoint: srv.URL(), Name: t.Name(), HTTP: supervisor.HTTPConfig{HTTPClient: srv.HTTPClient()}, Observe: supervisor.ObserveConfig{Events: rec}}))
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	sup.Start()
	require.NoError(t, sup.WaitForState(ctx, supervisor.Ready))
	_, err = rec.WaitFor(ctx, func(es []events.Event) bool {
		for _, e := range es {
			if e.Kind == events.KindStreamEventDropped && e.Count == 4096 {
				return true
			}
		}
		return false
	})
	require.NoError(t, err, "the 4096th drop is reported")
	supervisor.FlushEvents(sup)
	require.Len(t, eventsOf(rec, events.KindStreamEventDropped), 16+4, "events for the first 4096 drops and more")
}
