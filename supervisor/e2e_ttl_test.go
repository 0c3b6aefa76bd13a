package supervisor_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/supervisor"
)

// ttlServer is a 2026-07-28 go-sdk server whose list results carry ttlMs
// ttl; it counts the tools/list requests it sees.
func ttlServer(t *testing.T, ttl time.Duration) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	return cacheableServer(t, msOf(int64(ttl/time.Millisecond)), nil)
}

// msOf returns a ttlMs for cacheableServer, fixed at v until stored anew.
func msOf(v int64) *atomic.Int64 {
	var ms atomic.Int64
	ms.Store(v)
	return &ms
}

// cacheableServer is a sessionless go-sdk server with one tool whose list
// results carry ttlMs ms, read at each result; rewrite, if set, wraps each
// response writer. It counts the tools/list requests it sees.
func cacheableServer(t *testing.T, ms *atomic.Int64, rewrite func(http.ResponseWriter) http.ResponseWriter) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "ttl", Version: "1"}, &mcp.ServerOptions{
		SetCacheable: func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) { c.TTLMs = int(ms.Load()) },
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "a"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	})
	var lists atomic.Int64
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if bytes.Contains(body, []byte(`"method":"tools/list"`)) {
			lists.Add(1)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if rewrite != nil {
			w = rewrite(w)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts, &lists
}

// A list whose ttlMs runs out is re-fetched once per expiry, on the
// supervisor's clock; each result arms the next expiry, and nothing lists
// before it.
func TestE2ETTLExpiryRelistsOnce(t *testing.T) {
	const ttl = time.Minute
	ts, lists := ttlServer(t, ttl)
	sup, clock, ctx := readyOnFakeClock(t, ts)
	require.Equal(t, int64(1), lists.Load())
	require.Equal(t, "2026-07-28", sup.ResumeState().ProtocolVersion)

	for i := range 3 {
		// The ttl timer is armed; a minute less a millisecond lists nothing.
		require.NoError(t, clock.BlockUntilContext(ctx, 1), "the ttl timer")
		clock.Advance(ttl - time.Millisecond)
		require.Equal(t, int64(1+i), lists.Load(), "not before the ttl ran out")
		clock.Advance(time.Millisecond)
		require.Eventually(t, func() bool { return lists.Load() == int64(2+i) }, e2eTimeout, time.Millisecond, "one re-list per expiry")
		// The re-list's result re-arms the timer: wait for it before the next round.
		require.Eventually(t, func() bool { return timerArmed(ctx, clock) }, e2eTimeout, time.Millisecond)
	}
	require.Equal(t, int64(4), lists.Load())
	clock.Advance(time.Millisecond) // past RelistMinGap since the last re-list, far from the next expiry
	require.NoError(t, sup.RefreshCatalog(ctx))
	require.Equal(t, int64(5), lists.Load(), "a forced re-list bypasses go-sdk's cache")
}

// readyOnFakeClock starts a supervisor on ts with a fake clock, re-lists
// allowed at once and no catalog poll (only a ttl times a re-list), and
// waits until it is ready; ctx ends with the test.
func readyOnFakeClock(t *testing.T, ts *httptest.Server) (*supervisor.Supervisor, *clockwork.FakeClock, context.Context) {
	t.Helper()
	return readyOnFakeClockWith(t, ts, 0, nil)
}

// readyOnFakeClockWith is readyOnFakeClock whose ttl jitter draws are
// always jitter (in [0, 1)), with edit, if set, applied to the config.
func readyOnFakeClockWith(t *testing.T, ts *httptest.Server, jitter float64, edit func(*supervisor.Config)) (*supervisor.Supervisor, *clockwork.FakeClock, context.Context) {
	t.Helper()
	clock := clockwork.NewFakeClock()
	cfg := supervisor.Config{
		Endpoint: ts.URL,
		HTTP:     supervisor.HTTPConfig{HTTPClient: ts.Client()},
		Observe:  supervisor.ObserveConfig{Clock: clock},
		Limits: supervisor.LimitsConfig{
			RelistMinGap:        time.Nanosecond,
			CatalogPollInterval: -1,
		},
	}
	if edit != nil {
		edit(&cfg)
	}
	sup := mustNew(t, cfg)
	supervisor.SetJitter(sup, func() float64 { return jitter })
	sup.Start()
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	t.Cleanup(cancel)
	require.NoError(t, sup.WaitForState(ctx, supervisor.Ready))
	return sup, clock, ctx
}

// timerArmed reports whether a timer waits on clock, waiting a little.
func timerArmed(ctx context.Context, clock *clockwork.FakeClock) bool {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	return clock.BlockUntilContext(ctx, 1) == nil
}

// A list result without a ttl stops the timer an earlier result of the
// session armed: the list is not re-fetched for the old hint.
func TestE2EResultWithoutTTLStopsTheTimer(t *testing.T) {
	ms := msOf(int64(time.Minute / time.Millisecond))
	ts, _ := cacheableServer(t, ms, nil)
	sup, clock, ctx := readyOnFakeClock(t, ts)
	require.NoError(t, clock.BlockUntilContext(ctx, 1), "the first result armed the ttl timer")

	ms.Store(0)
	clock.Advance(time.Millisecond) // past RelistMinGap
	require.NoError(t, sup.RefreshCatalog(ctx))
	// The hint reached the loop before the re-list's result did.
	require.False(t, timerArmed(ctx, clock), "a result without a ttl stops the timer")
}

// The caching page (server/utilities/caching.mdx, Freshness Calculation):
// "Implementations that do choose to poll MUST apply jitter and backoff."
// A ttl re-list waits the ttl plus up to a fifth of it at random: with a
// draw of one half, a minute's ttl re-lists at 66 s, not at 60 s.
func TestE2ETTLRelistIsJittered(t *testing.T) {
	const ttl = time.Minute
	ts, lists := ttlServer(t, ttl)
	_, clock, ctx := readyOnFakeClockWith(t, ts, 0.5, nil)
	for i := range 2 {
		require.NoError(t, clock.BlockUntilContext(ctx, 1), "the ttl timer")
		clock.Advance(ttl)
		notFired(t, clock, lists, int64(1+i), "not at the bare ttl")
		clock.Advance(ttl/10 - time.Millisecond)
		notFired(t, clock, lists, int64(1+i), "not before the jitter ran out")
		clock.Advance(time.Millisecond)
		require.Eventually(t, func() bool { return lists.Load() == int64(2+i) }, e2eTimeout, time.Millisecond, "at ttl * 1.1")
		require.Eventually(t, func() bool { return timerArmed(ctx, clock) }, e2eTimeout, time.Millisecond)
	}
}

// notFired asserts that the one timer on clock has not fired and nothing
// was listed past n, reading without waiting: an Advance expires a timer
// before it returns, and its re-list, counted by the server, comes before
// its re-arming, so the timer is read first.
func notFired(t *testing.T, clock *clockwork.FakeClock, lists *atomic.Int64, n int64, msg string) {
	t.Helper()
	done, cancel := context.WithCancel(context.Background())
	cancel()
	require.NoError(t, clock.BlockUntilContext(done, 1), "%s: the timer is armed", msg)
	require.Equal(t, n, lists.Load(), msg)
}

// A ttl re-list the server answers 503 is tried again on a backoff that
// doubles from max(ttlMs, MinListTTL) (caching.mdx: "jitter and backoff"),
// and meanwhile the last list is served ("Clients MAY serve stale responses
// if errors occur during re-fetching"); once answered, the list is back on
// its ttl. Counted at the server over ten fake minutes of failures.
func TestE2ETTLFailedRelistRetriesOnBackoff(t *testing.T) {
	var failing atomic.Bool
	ts, lists := cacheableServer(t, msOf(1000), func(w http.ResponseWriter) http.ResponseWriter {
		if failing.Load() {
			return unavailableWriter{w, new(bool)}
		}
		return w
	})
	sup, clock, ctx := readyOnFakeClockWith(t, ts, 0, nil) // MinListTTL 10 s: every ttl wait is 10 s
	require.NoError(t, clock.BlockUntilContext(ctx, 1), "the ttl timer")
	failing.Store(true)

	// The expiry at 10 s fails; retries wait 10, 20, 40, 80, 160 s, then
	// 300 s (the cap): tools/list at 10, 20, 40, 80, 160, 320 and 620 s.
	start := clock.Now()
	for i, at := range []time.Duration{10, 20, 40, 80, 160, 320, 620} {
		clock.Advance(start.Add(at*time.Second - time.Millisecond).Sub(clock.Now()))
		notFired(t, clock, lists, int64(1+i), fmt.Sprintf("nothing before %v", at*time.Second))
		clock.Advance(time.Millisecond)
		require.Eventually(t, func() bool { return lists.Load() == int64(2+i) }, e2eTimeout, time.Millisecond, "a tools/list at %v", at*time.Second)
		require.Eventually(t, func() bool { return timerArmed(ctx, clock) }, e2eTimeout, time.Millisecond, "the retry is armed")
		require.Len(t, sup.Catalog().Tools, 1, "the stale list is served")
	}
	require.Equal(t, supervisor.Ready, sup.State())

	failing.Store(false)
	n := lists.Load()
	clock.Advance(5 * time.Minute) // the next retry, answered
	require.Eventually(t, func() bool { return lists.Load() == n+1 }, e2eTimeout, time.Millisecond)
	require.Eventually(t, func() bool { return timerArmed(ctx, clock) }, e2eTimeout, time.Millisecond)
	clock.Advance(10 * time.Second) // back on the ttl: MinListTTL after the answer
	require.Eventually(t, func() bool { return lists.Load() == n+2 }, e2eTimeout, time.Millisecond)
}

// unavailableWriter answers 503 with no body, whatever the handler writes.
type unavailableWriter struct {
	http.ResponseWriter
	wrote *bool
}

func (w unavailableWriter) WriteHeader(int) {
	if !*w.wrote {
		*w.wrote = true
		w.ResponseWriter.WriteHeader(http.StatusServiceUnavailable)
	}
}
func (w unavailableWriter) Write(b []byte) (int, error) { w.WriteHeader(0); return len(b), nil }
