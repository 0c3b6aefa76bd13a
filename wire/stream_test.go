package wire_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/wire"
)

// advance moves the fake clock whenever something waits on it, until ctx is
// done: the keeper's backoff then never takes real time.
func advance(ctx context.Context, clock *clockwork.FakeClock) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for clock.BlockUntilContext(ctx, 1) == nil {
			clock.Advance(time.Minute)
		}
	}()
	return done
}

// recorder collects the stream attempts and feeds the hostility rule.
type recorder struct {
	mu       sync.Mutex
	attempts []wire.StreamAttempt
	tracker  *wire.HostilityTracker
	hostile  chan struct{}
	onHost   func()
}

func newRecorder(rule wire.HostilityRule) *recorder {
	return &recorder{tracker: wire.NewHostilityTracker(rule), hostile: make(chan struct{})}
}

func (r *recorder) config(c *wire.Config) {
	c.OnExchange = func(x wire.Exchange) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.tracker.ObserveExchange(x)
	}
	c.OnStreamAttempt = func(a wire.StreamAttempt) {
		r.mu.Lock()
		r.attempts = append(r.attempts, a)
		fired := r.tracker.ObserveAttempt(a)
		r.mu.Unlock()
		if fired {
			if r.onHost != nil {
				r.onHost()
			}
			close(r.hostile)
		}
	}
}

func (r *recorder) snapshot() ([]wire.StreamAttempt, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	h, _ := r.tracker.Hostile()
	return append([]wire.StreamAttempt(nil), r.attempts...), h
}

func within(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// TestGETHostileGatewayKeepsSession: a gateway that ends every standalone GET
// at once does not end the session, however often (failure story S5), and
// the hostility rule fires; held, the stream sends no more GETs.
func TestGETHostileGatewayKeepsSession(t *testing.T) {
	g, url := newServer(t, nil)
	g.setFault(func(w http.ResponseWriter, r *http.Request, method string, n int) bool {
		if r.Method != http.MethodGet {
			return false
		}
		writeFault(w, 200, "text/event-stream", "", nil)
		return true
	})
	clock := clockwork.NewFakeClock()
	rec := newRecorder(wire.HostilityRule{Threshold: 4})
	var s *wire.Session
	holdReady := make(chan struct{})
	rec.onHost = func() {
		<-holdReady
		s.Transport().HoldStream(true)
	}
	opts := wire.Options{Endpoint: url, Era: wire.Era2025, MaxRetries: 1,
		Wire: wire.Config{Clock: clock, Stream: wire.StreamConfig{MaxFailedRedials: 50}}}
	rec.config(&opts.Wire)
	ctx, cancel := context.WithCancel(context.Background())
	advancing := advance(ctx, clock)
	defer func() { cancel(); <-advancing }()

	var err error
	s, err = wire.Open(context.Background(), opts)
	require.NoError(t, err)
	defer s.Close()
	close(holdReady)
	within(t, rec.hostile, "the hostility rule")

	attempts, hostile := rec.snapshot()
	require.True(t, hostile)
	require.GreaterOrEqual(t, len(attempts), 4)
	for _, a := range attempts {
		assert.Equal(t, wire.EndEOF, a.End)
		assert.Zero(t, a.Events)
	}
	assert.Greater(t, g.count("GET", ""), 1+1, "more closes than go-sdk's MaxRetries")
	callEcho(t, s.ClientSession())
	assert.Equal(t, 1, g.count("POST", "initialize"), "the session survived")

	// Held: the keeper waits on nothing but the hold, so time passing sends
	// no GET.
	cancel()
	<-advancing
	gets := g.count("GET", "")
	clock.Advance(time.Hour)
	callEcho(t, s.ClientSession())
	assert.Equal(t, gets, g.count("GET", ""))
	assert.Equal(t, 1, g.count("POST", "initialize"))
}

// TestIdleCuttingProxyKeepsSession: a proxy that cuts the stream after it
// lived a while, more often than go-sdk's MaxRetries, costs nothing and is
// not hostile.
func TestIdleCuttingProxyKeepsSession(t *testing.T) {
	const cuts = 4
	g, url := newServer(t, nil)
	opened := make(chan struct{})
	cut := make(chan struct{})
	g.setFault(func(w http.ResponseWriter, r *http.Request, method string, n int) bool {
		if r.Method != http.MethodGet {
			return false
		}
		ctx, stop := context.WithCancel(r.Context())
		defer stop()
		go func() {
			select {
			case opened <- struct{}{}:
			case <-ctx.Done():
				return
			}
			select {
			case <-cut:
				stop()
			case <-ctx.Done():
			}
		}()
		g.next.ServeHTTP(w, r.WithContext(ctx))
		return true
	})
	clock := clockwork.NewFakeClock()
	rec := newRecorder(wire.HostilityRule{Threshold: 2})
	opts := wire.Options{Endpoint: url, Era: wire.Era2025, MaxRetries: 1, Wire: wire.Config{Clock: clock}}
	rec.config(&opts.Wire)
	s, err := wire.Open(context.Background(), opts)
	require.NoError(t, err)
	defer s.Close()

	for i := range cuts {
		within(t, opened, "a standalone GET")
		clock.Advance(time.Minute) // the stream lived a while
		select {
		case cut <- struct{}{}:
		case <-time.After(10 * time.Second):
			t.Fatalf("cut %d not delivered", i)
		}
	}
	within(t, opened, "the GET after the last cut")
	require.Eventually(t, func() bool { a, _ := rec.snapshot(); return len(a) >= cuts }, 10*time.Second, 5*time.Millisecond)
	attempts, hostile := rec.snapshot()
	assert.False(t, hostile)
	for _, a := range attempts[:cuts] {
		assert.Equal(t, wire.EndEOF, a.End)
		assert.GreaterOrEqual(t, a.Duration, time.Minute)
	}
	assert.Equal(t, cuts+1, g.count("GET", ""))
	callEcho(t, s.ClientSession())
	assert.Equal(t, 1, g.count("POST", "initialize"))
}

// TestStreamSessionGoneEndsSession: a 404 to a re-dialed GET that carried
// the session id ends the go-sdk session, as go-sdk ends it: with
// mcp.ErrSessionMissing and no DELETE.
func TestStreamSessionGoneEndsSession(t *testing.T) {
	g, url := newServer(t, nil)
	g.setFault(func(w http.ResponseWriter, r *http.Request, method string, n int) bool {
		if r.Method != http.MethodGet {
			return false
		}
		if n == 0 {
			writeFault(w, 200, "text/event-stream", "", nil)
		} else {
			writeFault(w, 404, "text/plain", "session not found", nil)
		}
		return true
	})
	clock := clockwork.NewFakeClock()
	rec := newRecorder(wire.HostilityRule{})
	opts := wire.Options{Endpoint: url, Era: wire.Era2025, Wire: wire.Config{Clock: clock}}
	rec.config(&opts.Wire)
	ctx, cancel := context.WithCancel(context.Background())
	advancing := advance(ctx, clock)
	defer func() { cancel(); <-advancing }()
	s, err := wire.Open(context.Background(), opts)
	require.NoError(t, err)
	defer s.Close()

	waitErr := make(chan error, 1)
	go func() { waitErr <- s.Wait() }()
	select {
	case <-waitErr:
	case <-time.After(10 * time.Second):
		t.Fatal("the go-sdk session did not end")
	}
	_, err = s.ClientSession().CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
	require.Error(t, err)
	assert.True(t, errors.Is(err, mcp.ErrSessionMissing) || errors.Is(err, mcp.ErrConnectionClosed), "%v", err)
	attempts, hostile := rec.snapshot()
	assert.False(t, hostile)
	require.Len(t, attempts, 2)
	assert.True(t, attempts[1].SessionGone)
	assert.Equal(t, 2, g.count("GET", ""), "go-sdk's own GET got the recorded answer")
	require.NoError(t, s.Close())
	assert.Zero(t, g.count("DELETE", ""))
}
