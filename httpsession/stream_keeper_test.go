package httpsession_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/httpsession"
	"github.com/mcpsup/mcpsup/session"
)

// TestPrimingThenCloseBacksOff: a server that answers every standalone GET
// with a priming event (SEP-1699: an id, empty data and a retry field) and
// ends it is re-dialed on the backoff schedule, at least the retry field's
// delay apart (bounded by MaxBackoff), not at once; the priming event
// carries no message, so the hostility rule fires while POSTs succeed, and
// the session lives (DESIGN.md failure story S5).
func TestPrimingThenCloseBacksOff(t *testing.T) {
	sec := func(s ...int) []time.Duration {
		out := make([]time.Duration, len(s))
		for i, v := range s {
			out[i] = time.Duration(v) * time.Second
		}
		return out
	}
	cases := []struct {
		retry string
		gaps  []time.Duration // between the GETs the server sees
	}{
		{"1000", sec(1, 2, 4, 8, 8, 8)},
		{"5000", sec(5, 5, 5, 8, 8)},
		{"60000", sec(8, 8, 8)},
	}
	for _, c := range cases {
		t.Run("retry "+c.retry, func(t *testing.T) {
			g, url := newServer(t, nil)
			clock := clockwork.NewFakeClock()
			var mu sync.Mutex
			var at []time.Time
			faultGETs(g, func(w http.ResponseWriter, r *http.Request, n int) bool {
				mu.Lock()
				at = append(at, clock.Now())
				mu.Unlock()
				writeFault(w, 200, "text/event-stream", "id: 1\ndata: \nretry: "+c.retry+"\n\n", nil)
				return true
			})
			rec := newRecorder(httpsession.HostilityRule{Threshold: 3})
			opts := httpsession.Options{Era: httpsession.Era2025, Wire: httpsession.Config{Clock: clock, Stream: httpsession.StreamConfig{
				InitialBackoff: time.Second, MaxBackoff: 8 * time.Second}}}
			rec.config(&opts.Wire)
			s := open(t, url, opts)

			// Step the fake clock a second at a time, each time once the
			// keeper waits on it: the GETs land exactly on the schedule. A
			// call after the first attempt arms the hostility rule.
			var total time.Duration
			for _, d := range c.gaps {
				total += d
			}
			waitForKeeper := func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				err := clock.BlockUntilContext(ctx, 1)
				mu.Lock()
				n := len(at)
				mu.Unlock()
				require.NoError(t, err, "the keeper never waited before re-dialing (%d GETs)", n)
			}
			for elapsed := time.Duration(0); elapsed < total; elapsed += time.Second {
				waitForKeeper()
				if elapsed == 0 {
					callEcho(t, s.ClientSession())
				}
				clock.Advance(time.Second)
			}
			waitForKeeper()

			mu.Lock()
			got := make([]time.Duration, 0, len(at))
			for i := 1; i < len(at); i++ {
				got = append(got, at[i].Sub(at[i-1]))
			}
			mu.Unlock()
			assert.Equal(t, c.gaps, got, "the delays between the GETs the server saw")

			within(t, rec.hostile, "the hostility rule")
			attempts, hostile := rec.snapshot()
			require.True(t, hostile)
			require.NotEmpty(t, attempts)
			for _, a := range attempts {
				assert.Equal(t, httpsession.EndEOF, a.End)
				assert.Equal(t, 1, a.Events, "the priming event")
				assert.Zero(t, a.Messages, "no message")
				assert.True(t, a.FailedAtOnce(2*time.Second))
				assert.Equal(t, c.retry, strconv.FormatInt(a.Retry.Milliseconds(), 10), "the retry field, as sent")
			}
			callEcho(t, s.ClientSession())
			assert.Equal(t, 1, g.count("POST", "initialize"), "the session survived")
		})
	}
}

// TestHostileStreamEventsKeepSession: whatever a server sends on the
// standalone stream (a line without a colon, data that is not JSON-RPC, a
// response, an oversized event, garbage, a cut mid-event), go-sdk gets only
// the valid messages, the rest is dropped and named, the bytes read are
// bounded, and the session outlives more such streams than go-sdk's
// MaxRetries (DESIGN.md failure story S5).
func TestHostileStreamEventsKeepSession(t *testing.T) {
	const (
		streams     = 5
		maxEvent    = 1024
		listChanged = "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n"
	)
	huge := strings.Repeat("x", 1<<20)
	cases := []struct {
		name    string
		body    string
		reasons []session.DropReason
		good    int // messages handed on per stream
	}{
		{"line without a colon", "data: {}\nnot a field\n\n" + listChanged, []session.DropReason{session.DropMalformedLine}, 1},
		{"data not JSON-RPC", "data: hello\n\n" + listChanged, []session.DropReason{session.DropNotJSONRPC}, 1},
		{"a response", "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n" + listChanged, []session.DropReason{session.DropResponse}, 1},
		{"cut mid-event", listChanged + "data: {\"jsonrpc\":\"2.0\",\"meth", []session.DropReason{session.DropTruncated}, 1},
		{"oversized after a message", listChanged + "data: \"" + huge + "\"\n\n" + listChanged, []session.DropReason{session.DropOversized}, 1},
		{"garbage after a message", listChanged + strings.Repeat("\x00\xff", 1<<19), []session.DropReason{session.DropOversized}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, url := newServer(t, nil)
			faultGETs(g, func(w http.ResponseWriter, r *http.Request, n int) bool {
				if n < streams {
					writeFault(w, 200, "text/event-stream", c.body, nil)
					return true
				}
				return false // the server's own stream: lives
			})
			var notified atomic.Int32
			client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "v0"}, &mcp.ClientOptions{
				ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { notified.Add(1) },
			})
			clock := clockwork.NewFakeClock()
			rec := newRecorder(httpsession.HostilityRule{Threshold: 100})
			var mu sync.Mutex
			var drops []session.EventDropped
			var sdkGETs atomic.Int32
			opts := httpsession.Options{Era: httpsession.Era2025, Client: client, Wire: httpsession.Config{Clock: clock,
				Stream: httpsession.StreamConfig{MaxEventBytes: maxEvent}}}
			rec.config(&opts.Wire)
			opts.Observe = func(f session.Fact) {
				if e, ok := f.(session.EventDropped); ok {
					mu.Lock()
					drops = append(drops, e)
					mu.Unlock()
				}
			}
			observe := opts.Wire.OnExchange
			opts.Wire.OnExchange = func(x httpsession.Exchange) {
				observe(x)
				if x.Verb == http.MethodGet && x.Local {
					sdkGETs.Add(1)
				}
			}
			advance(t, clock)
			s := open(t, url, opts)

			require.Eventually(t, func() bool { return g.count("GET", "") == streams+1 },
				10*time.Second, 5*time.Millisecond, "the keeper's attempts: the hostile streams, then the server's")
			require.Eventually(t, func() bool { return notified.Load() == int32(c.good*streams) }, 10*time.Second, 5*time.Millisecond,
				"every valid list_changed reached the host's handler")
			attempts, _ := rec.snapshot()
			require.Len(t, attempts, streams, "the hostile streams ended; the server's lives")
			for _, a := range attempts[:streams] {
				assert.Equal(t, len(c.reasons), a.Dropped)
				assert.LessOrEqual(t, a.Bytes, int64(len(listChanged)+maxEvent+64<<10), "bytes read bounded by MaxEventBytes and one read")
			}
			mu.Lock()
			require.Len(t, drops, len(c.reasons)*streams)
			for i, d := range drops {
				assert.Equal(t, c.reasons[i%len(c.reasons)], d.Why)
				assert.Equal(t, i+1, d.Count)
			}
			mu.Unlock()
			callEcho(t, s.ClientSession())
			assert.Equal(t, int32(1), sdkGETs.Load(), "go-sdk never saw its stream end")
			assert.Equal(t, 1, g.count("POST", "initialize"), "the session survived")
			assert.Zero(t, g.count("DELETE", ""))
		})
	}
}

// TestStreamSessionGoneWithEventIDs: the keeper's re-dial carries the last
// event id, and its session-gone answer ends the session; nothing asks the
// server again.
func TestStreamSessionGoneWithEventIDs(t *testing.T) {
	g, url := newServer(t, nil)
	var mu sync.Mutex
	var lastIDs []string
	faultGETs(g, func(w http.ResponseWriter, r *http.Request, n int) bool {
		mu.Lock()
		lastIDs = append(lastIDs, r.Header.Get("Last-Event-ID"))
		mu.Unlock()
		if n == 0 {
			writeFault(w, 200, "text/event-stream", "id: 7\ndata: \n\n", nil)
		} else {
			writeFault(w, 404, "text/plain", "session not found", nil)
		}
		return true
	})
	clock := clockwork.NewFakeClock()
	opts := httpsession.Options{Era: httpsession.Era2025, Wire: httpsession.Config{Clock: clock}}
	advance(t, clock)
	s := open(t, url, opts)

	waitEnded(t, s)
	mu.Lock()
	assert.Equal(t, []string{"", "7"}, lastIDs, "the GETs the server saw and their Last-Event-ID")
	mu.Unlock()
	assert.Equal(t, 2, g.count("GET", ""))
	require.NoError(t, s.Close())
	assert.Zero(t, g.count("DELETE", ""))
}
