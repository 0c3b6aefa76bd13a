package supervisor_test

import (
	"bytes"
	"context"
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
	clock := clockwork.NewFakeClock()
	sup := mustNew(t, supervisor.Config{Endpoint: ts.URL, HTTPClient: ts.Client(), Clock: clock,
		RelistMinGap: time.Nanosecond, CatalogPollInterval: -1})
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
