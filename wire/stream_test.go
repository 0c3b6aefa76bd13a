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
		fired := r.tracker.ObserveExchange(x)
		r.mu.Unlock()
		r.fired(fired)
	}
	c.OnStreamAttempt = func(a wire.StreamAttempt) {
		r.mu.Lock()
		r.attempts = append(r.attempts, a)
		fired := r.tracker.ObserveAttempt(a)
		r.mu.Unlock()
		r.fired(fired)
	}
}

// fired acts once on the rule firing, from an exchange or an attempt.
func (r *recorder) fired(fired bool) {
	if !fired {
		return
	}
	if r.onHost != nil {
		r.onHost()
	}
	close(r.hostile)
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
	clock := clockwork.NewFakeClock()
	rec := newRecorder(wire.HostilityRule{Threshold: 4})
	var s *wire.Session
	holdReady := make(chan struct{})
	rec.onHost = func() {
		<-holdReady
		s.Transport().HoldStream(true)
	}
	// The rule wants a POST after the streak's first attempt: the second
	// GET waits for one.
	posted := make(chan struct{})
	g.setFault(func(w http.ResponseWriter, r *http.Request, method string, n int) bool {
		if r.Method != http.MethodGet {
			return false
		}
		if n == 1 {
			select {
			case <-posted:
			case <-r.Context().Done():
				return true
			}
		}
		writeFault(w, 200, "text/event-stream", "", nil)
		return true
	})
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
	require.Eventually(t, func() bool { a, _ := rec.snapshot(); return len(a) >= 1 }, 10*time.Second, 5*time.Millisecond)
	callEcho(t, s.ClientSession())
	close(posted)
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

// hangUp closes the connection of a request without an answer, as a server
// that is down (or a reset) leaves the client with no HTTP status.
func hangUp(w http.ResponseWriter) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		_ = conn.Close()
	}
}

// TestStreamOutageKeepsRedialing: attempts that get no HTTP answer (the
// server is down) are re-dialed for as long as the session lives, far past
// MaxFailedRedials, so the stream is back as soon as the server is.
func TestStreamOutageKeepsRedialing(t *testing.T) {
	const maxFailed, outage = 2, 10
	g, url := newServer(t, nil)
	var mu sync.Mutex
	down, noAnswer := true, 0
	through := make(chan struct{}, 1)
	g.setFault(func(w http.ResponseWriter, r *http.Request, method string, n int) bool {
		if r.Method != http.MethodGet {
			return false
		}
		mu.Lock()
		d := down
		mu.Unlock()
		if !d {
			select {
			case through <- struct{}{}:
			default:
			}
			return false
		}
		hangUp(w)
		return true
	})
	clock := clockwork.NewFakeClock()
	rec := newRecorder(wire.HostilityRule{})
	opts := wire.Options{Era: wire.Era2025, Wire: wire.Config{Clock: clock,
		Stream: wire.StreamConfig{MaxFailedRedials: maxFailed}}}
	rec.config(&opts.Wire)
	observe := opts.Wire.OnStreamAttempt
	opts.Wire.OnStreamAttempt = func(a wire.StreamAttempt) {
		observe(a)
		mu.Lock()
		defer mu.Unlock()
		if a.End == wire.EndNoAnswer {
			if noAnswer++; noAnswer == outage {
				down = false // the server is back before the next attempt
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	advancing := advance(ctx, clock)
	defer func() { cancel(); <-advancing }()
	s := open(t, url, opts)

	within(t, through, "a standalone GET after the outage")
	attempts, hostile := rec.snapshot()
	assert.False(t, hostile, "an outage is not GET-hostility")
	require.Len(t, attempts, outage, "the attempts of the outage, more than MaxFailedRedials")
	for _, a := range attempts {
		assert.Equal(t, wire.EndNoAnswer, a.End)
		assert.Error(t, a.Err)
	}
	callEcho(t, s.ClientSession())
	assert.Equal(t, 1, g.count("POST", "initialize"), "the session survived the outage")
}

// TestStreamAnsweredFailuresHold: attempts the server answers and ends at
// once (here an empty event stream) stop after MaxFailedRedials; an outage
// answer (503) before them is retried and not counted; HoldStream(false)
// restarts the stream at once.
func TestStreamAnsweredFailuresHold(t *testing.T) {
	const maxFailed = 3
	g, url := newServer(t, nil)
	g.setFault(func(w http.ResponseWriter, r *http.Request, method string, n int) bool {
		if r.Method != http.MethodGet {
			return false
		}
		if n == 0 {
			writeFault(w, 503, "text/plain", "busy", nil)
		} else {
			writeFault(w, 200, "text/event-stream", "", nil)
		}
		return true
	})
	clock := clockwork.NewFakeClock()
	rec := newRecorder(wire.HostilityRule{Threshold: 100})
	fourth := make(chan struct{})
	opts := wire.Options{Era: wire.Era2025, Wire: wire.Config{Clock: clock,
		Stream: wire.StreamConfig{MaxFailedRedials: maxFailed}}}
	rec.config(&opts.Wire)
	observe := opts.Wire.OnStreamAttempt
	opts.Wire.OnStreamAttempt = func(a wire.StreamAttempt) {
		observe(a)
		if a.Seq == maxFailed+2 {
			close(fourth)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	advancing := advance(ctx, clock)
	s := open(t, url, opts)
	require.Eventually(t, func() bool { a, _ := rec.snapshot(); return len(a) >= 1+maxFailed }, 10*time.Second, 5*time.Millisecond)
	cancel()
	<-advancing

	callEcho(t, s.ClientSession())
	attempts, _ := rec.snapshot()
	require.Len(t, attempts, 1+maxFailed, "held after MaxFailedRedials answered failures, the 503 not counted")
	assert.Equal(t, 503, attempts[0].Status)
	assert.True(t, attempts[0].Outage())
	assert.False(t, attempts[0].Declined, "a 503 is retried, not taken as no stream")
	for _, a := range attempts[1:] {
		assert.Equal(t, 200, a.Status)
		assert.Equal(t, wire.EndEOF, a.End)
		assert.False(t, a.Outage())
	}
	// Held, the keeper waits on the hold alone: releasing it re-dials with
	// no backoff, so no clock advance is needed.
	s.Transport().HoldStream(false)
	within(t, fourth, "the re-dial after HoldStream(false)")
	assert.Equal(t, 1, g.count("POST", "initialize"))
}

// TestStreamDeclinedHoldsSilently: a server that answers the first GET 405
// offers no standalone stream (MCP spec, transports); the keeper records it
// and dials no more, whatever the time, as go-sdk itself gives up.
func TestStreamDeclinedHoldsSilently(t *testing.T) {
	g, url := newServer(t, nil)
	g.setFault(func(w http.ResponseWriter, r *http.Request, method string, n int) bool {
		if r.Method != http.MethodGet {
			return false
		}
		writeFault(w, 405, "text/plain", "no stream", nil)
		return true
	})
	clock := clockwork.NewFakeClock()
	rec := newRecorder(wire.HostilityRule{})
	opts := wire.Options{Era: wire.Era2025, Wire: wire.Config{Clock: clock}}
	rec.config(&opts.Wire)
	s := open(t, url, opts)
	require.Eventually(t, func() bool { a, _ := rec.snapshot(); return len(a) == 1 }, 10*time.Second, 5*time.Millisecond)
	attempts, hostile := rec.snapshot()
	assert.True(t, attempts[0].Declined)
	assert.Equal(t, 405, attempts[0].Status)
	assert.False(t, hostile)

	clock.Advance(24 * time.Hour)
	s.Transport().HoldStream(true)
	s.Transport().HoldStream(false)
	callEcho(t, s.ClientSession())
	assert.Equal(t, 1, g.count("GET", ""), "no re-dial")
	attempts, _ = rec.snapshot()
	assert.Len(t, attempts, 1)
	assert.Equal(t, 1, g.count("POST", "initialize"))
}

// TestConnectDoesNotWaitForStandaloneGET: go-sdk's Client.Connect waits for
// the standalone GET's response headers; the keeper answers that GET at
// once, so Open and Resume return while a gateway still holds the server's
// GET, and calls work meanwhile.
func TestConnectDoesNotWaitForStandaloneGET(t *testing.T) {
	for _, resume := range []bool{false, true} {
		name := "open"
		if resume {
			name = "blind resume"
		}
		t.Run(name, func(t *testing.T) {
			g, url := newServer(t, nil)
			var st wire.ResumeState
			if resume {
				first := open(t, url, wire.Options{Stream: wire.StreamOff})
				st = first.ResumeState()
				st.InitializeResult = nil
				require.NoError(t, first.Detach())
			}
			arrived, passed := make(chan struct{}, 1), make(chan struct{}, 1)
			release := make(chan struct{})
			var once sync.Once
			unblock := func() { once.Do(func() { close(release) }) }
			t.Cleanup(unblock)
			g.setFault(func(w http.ResponseWriter, r *http.Request, method string, n int) bool {
				if r.Method != http.MethodGet {
					return false
				}
				select {
				case arrived <- struct{}{}:
				default:
				}
				select {
				case <-release:
					passed <- struct{}{}
					return false // on to the server
				case <-r.Context().Done():
					return true
				}
			})
			type result struct {
				s   *wire.Session
				err error
			}
			done := make(chan result, 1)
			go func() {
				opts := wire.Options{Endpoint: url, Era: wire.Era2025}
				var r result
				if resume {
					r.s, r.err = wire.Resume(context.Background(), opts, st)
				} else {
					r.s, r.err = wire.Open(context.Background(), opts)
				}
				done <- r
			}()
			var r result
			select {
			case r = <-done:
			case <-time.After(10 * time.Second):
				unblock()
				r = <-done
				if r.err == nil {
					_ = r.s.Close()
				}
				t.Fatal("connecting waited for the standalone GET's answer")
			}
			require.NoError(t, r.err)
			t.Cleanup(func() { _ = r.s.Close() })

			within(t, arrived, "the standalone GET at the gateway")
			callEcho(t, r.s.ClientSession())
			unblock()
			within(t, passed, "the held GET passed on to the server")
			assert.Equal(t, 1, g.count("GET", ""), "one standalone GET, dialed behind the local answer")
		})
	}
}
