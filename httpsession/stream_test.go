package httpsession_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/httpsession"
	"github.com/mcpsup/mcpsup/internal/lockedbuf"
	"github.com/mcpsup/mcpsup/session"
)

// TestGETHostileGatewayKeepsSession: a gateway that ends every standalone GET
// at once does not end the session, however often (failure story S5); the
// switch's hostility rule fires and the stream is held: no more GETs, until
// the remembered period ends and the keeper of the same session dials again.
func TestGETHostileGatewayKeepsSession(t *testing.T) {
	g, url := newServer(t, nil)
	clock := clockwork.NewFakeClock()
	rec := newRecorder(httpsession.HostilityRule{Threshold: 4})
	rec.auto = true
	// The rule wants a POST after the streak's first attempt: the second
	// GET waits for one.
	posted := make(chan struct{})
	faultGETs(g, func(w http.ResponseWriter, r *http.Request, n int) bool {
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
	logs := &lockedbuf.Buffer{}
	opts := httpsession.Options{Endpoint: url, Era: httpsession.Era2025, Wire: httpsession.Config{Clock: clock,
		Logger: slog.New(slog.NewTextHandler(logs, nil))}}
	rec.config(&opts.Wire)
	stopAdvancing := advance(t, clock)

	s, err := httpsession.Open(context.Background(), opts)
	require.NoError(t, err)
	defer s.Close()
	require.Eventually(t, func() bool { a, _ := rec.snapshot(); return len(a) >= 1 }, 10*time.Second, 5*time.Millisecond)
	callEcho(t, s.ClientSession())
	close(posted)
	off := <-rec.switched
	stopAdvancing()
	require.True(t, off.Off, "the switch turned the stream off")
	assert.Equal(t, session.StreamHostile, off.Why, "the fact is typed")
	assert.Contains(t, logs.String(), "4 consecutive standalone stream attempts", "the rule's account is logged")
	assert.Equal(t, off.Since.Add(testMemory), off.Until)

	attempts, _ := rec.snapshot()
	require.GreaterOrEqual(t, len(attempts), 4)
	for _, a := range attempts {
		assert.Equal(t, httpsession.EndEOF, a.End)
		assert.Zero(t, a.Events)
	}
	assert.Greater(t, g.count("GET", ""), 1+1, "more closes than go-sdk's MaxRetries")
	callEcho(t, s.ClientSession())
	assert.Equal(t, 1, g.count("POST", "initialize"), "the session survived")

	// Held: the keeper waits on nothing but the switch, so time passing
	// sends no GET. (A dial under way when the rule fired ends first.)
	require.Eventually(t, func() bool { a, _ := rec.snapshot(); return len(a) == g.count("GET", "") },
		10*time.Second, 5*time.Millisecond, "every GET's attempt ended")
	gets := g.count("GET", "")
	clock.Advance(time.Hour)
	callEcho(t, s.ClientSession())
	assert.Equal(t, gets, g.count("GET", ""))

	// The remembered period ends: the same session dials again at once.
	clock.Advance(testMemory)
	on := <-rec.switched
	assert.False(t, on.Off)
	require.Eventually(t, func() bool { return g.count("GET", "") > gets }, 10*time.Second, 5*time.Millisecond)
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
	faultGETs(g, func(w http.ResponseWriter, r *http.Request, n int) bool {
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
	rec := newRecorder(httpsession.HostilityRule{Threshold: 2})
	opts := httpsession.Options{Endpoint: url, Era: httpsession.Era2025, Wire: httpsession.Config{Clock: clock}}
	rec.config(&opts.Wire)
	s, err := httpsession.Open(context.Background(), opts)
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
		assert.Equal(t, httpsession.EndEOF, a.End)
		assert.GreaterOrEqual(t, a.Duration, time.Minute)
	}
	assert.Equal(t, cuts+1, g.count("GET", ""))
	callEcho(t, s.ClientSession())
	assert.Equal(t, 1, g.count("POST", "initialize"))
}

// TestStreamSessionGoneEndsSession: an answer to a re-dialed GET that says
// the session is gone (a 404 to a GET that carried the session id, a 4xx
// with the null-id -32000 error) ends the go-sdk session, as go-sdk ends
// it: go-sdk's own GET gets the recorded answer, and no DELETE reaches the
// server. A 401 only pauses the stream (TestStreamUnauthorizedPauses).
func TestStreamSessionGoneEndsSession(t *testing.T) {
	cases := []struct {
		name              string
		status            int
		contentType, body string
	}{
		{"404 with session id", 404, "text/plain", "session not found"},
		{"null-id -32000 400", 400, "application/json", `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, url := newServer(t, nil)
			faultGETs(g, func(w http.ResponseWriter, r *http.Request, n int) bool {
				if n == 0 {
					writeFault(w, 200, "text/event-stream", "", nil)
				} else {
					writeFault(w, c.status, c.contentType, c.body, nil)
				}
				return true
			})
			clock := clockwork.NewFakeClock()
			rec := newRecorder(httpsession.HostilityRule{})
			opts := httpsession.Options{Endpoint: url, Era: httpsession.Era2025, Wire: httpsession.Config{Clock: clock}}
			rec.config(&opts.Wire)
			advance(t, clock)
			s, err := httpsession.Open(context.Background(), opts)
			require.NoError(t, err)
			defer s.Close()

			waitEnded(t, s)
			_, err = s.ClientSession().CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
			require.Error(t, err)
			if c.status == 404 {
				assert.True(t, errors.Is(err, mcp.ErrSessionMissing) || errors.Is(err, mcp.ErrConnectionClosed), "%v", err)
			}
			attempts, hostile := rec.snapshot()
			assert.False(t, hostile)
			require.Len(t, attempts, 2)
			assert.True(t, attempts[1].SessionGone)
			assert.Equal(t, c.status, attempts[1].Status)
			assert.Equal(t, 2, g.count("GET", ""), "the session-gone answer is not asked for again")
			require.NoError(t, s.Close())
			assert.Zero(t, g.count("DELETE", ""))
		})
	}
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
// server is down) are re-dialed for as long as the session lives, and never
// turn the stream off, so the stream is back as soon as the server is.
func TestStreamOutageKeepsRedialing(t *testing.T) {
	const outage = 10
	g, url := newServer(t, nil)
	var mu sync.Mutex
	down, noAnswer := true, 0
	through := make(chan struct{}, 1)
	faultGETs(g, func(w http.ResponseWriter, r *http.Request, n int) bool {
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
	rec := newRecorder(httpsession.HostilityRule{Threshold: 2})
	rec.auto = true
	opts := httpsession.Options{Era: httpsession.Era2025, Wire: httpsession.Config{Clock: clock}}
	rec.config(&opts.Wire)
	observe := opts.Wire.OnStreamAttempt
	opts.Wire.OnStreamAttempt = func(a httpsession.StreamAttempt) {
		observe(a)
		mu.Lock()
		defer mu.Unlock()
		if a.End == httpsession.EndNoAnswer {
			if noAnswer++; noAnswer == outage {
				down = false // the server is back before the next attempt
			}
		}
	}
	advance(t, clock)
	s := open(t, url, opts)

	within(t, through, "a standalone GET after the outage")
	attempts, hostile := rec.snapshot()
	assert.False(t, hostile, "an outage is not GET-hostility")
	require.Len(t, attempts, outage, "the attempts of the outage, far more than the rule's threshold")
	assert.False(t, rec.sw.Decision().Off)
	for _, a := range attempts {
		assert.Equal(t, httpsession.EndNoAnswer, a.End)
		assert.Error(t, a.Err)
	}
	callEcho(t, s.ClientSession())
	assert.Equal(t, 1, g.count("POST", "initialize"), "the session survived the outage")
}

// TestStreamAnsweredFailuresBackOff: attempts the server answers and ends at
// once (here an empty event stream) are re-dialed on the backoff schedule
// for as long as the session lives, and an outage answer (503) before them is retried and not counted; in
// StreamOn mode the rule never turns the stream off.
func TestStreamAnsweredFailuresBackOff(t *testing.T) {
	const failed = 6
	g, url := newServer(t, nil)
	faultGETs(g, func(w http.ResponseWriter, r *http.Request, n int) bool {
		if n == 0 {
			writeFault(w, 503, "text/plain", "busy", nil)
		} else {
			writeFault(w, 200, "text/event-stream", "", nil)
		}
		return true
	})
	clock := clockwork.NewFakeClock()
	rec := newRecorder(httpsession.HostilityRule{Threshold: 2})
	opts := httpsession.Options{Era: httpsession.Era2025, Wire: httpsession.Config{Clock: clock}}
	rec.config(&opts.Wire)
	advance(t, clock)
	s := open(t, url, opts)
	require.Eventually(t, func() bool { a, _ := rec.snapshot(); return len(a) >= 2 }, 10*time.Second, 5*time.Millisecond)
	callEcho(t, s.ClientSession()) // POSTs work: the rule's evidence
	require.Eventually(t, func() bool { a, _ := rec.snapshot(); return len(a) >= 1+failed }, 10*time.Second, 5*time.Millisecond)
	callEcho(t, s.ClientSession())
	attempts, hostile := rec.snapshot()
	require.GreaterOrEqual(t, len(attempts), 1+failed)
	assert.Equal(t, 503, attempts[0].Status)
	assert.True(t, attempts[0].Outage())
	assert.False(t, attempts[0].Declined, "a 503 is retried, not taken as no stream")
	for _, a := range attempts[1:] {
		assert.Equal(t, 200, a.Status)
		assert.Equal(t, httpsession.EndEOF, a.End)
		assert.False(t, a.Outage())
	}
	assert.True(t, hostile, "the rule fires")
	assert.False(t, rec.sw.Decision().Off, "StreamOn: never turned off")
	assert.Equal(t, 1, g.count("POST", "initialize"))
}

// TestStreamDeclinedHoldsSilently: a server that answers the first GET 405
// offers no standalone stream (MCP spec, transports); the keeper records it
// and dials no more, whatever the time, as go-sdk itself gives up.
func TestStreamDeclinedHoldsSilently(t *testing.T) {
	g, url := newServer(t, nil)
	faultGETs(g, func(w http.ResponseWriter, r *http.Request, n int) bool {
		writeFault(w, 405, "text/plain", "no stream", nil)
		return true
	})
	clock := clockwork.NewFakeClock()
	rec := newRecorder(httpsession.HostilityRule{})
	opts := httpsession.Options{Era: httpsession.Era2025, Wire: httpsession.Config{Clock: clock}}
	rec.config(&opts.Wire)
	var declined atomic.Int32
	var declinedStatus atomic.Int32
	opts.Observe = func(f session.Fact) {
		if d, ok := f.(session.StreamDeclined); ok {
			declinedStatus.Store(int32(d.Status))
			declined.Add(1)
		}
	}
	s := open(t, url, opts)
	require.Eventually(t, func() bool { a, _ := rec.snapshot(); return len(a) == 1 && declined.Load() == 1 }, 10*time.Second, 5*time.Millisecond)
	attempts, hostile := rec.snapshot()
	assert.True(t, attempts[0].Declined)
	assert.Equal(t, 405, attempts[0].Status)
	assert.Equal(t, int32(405), declinedStatus.Load(), "the fact names the declining status")
	assert.False(t, hostile)

	clock.Advance(24 * time.Hour)
	callEcho(t, s.ClientSession())
	assert.Equal(t, 1, g.count("GET", ""), "no re-dial")
	attempts, _ = rec.snapshot()
	assert.Len(t, attempts, 1)
	assert.Equal(t, int32(1), declined.Load(), "told once")
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
			var st httpsession.ResumeState
			if resume {
				st = blindState(t, url)
			}
			arrived, passed := make(chan struct{}, 1), make(chan struct{}, 1)
			release := make(chan struct{})
			var once sync.Once
			unblock := func() { once.Do(func() { close(release) }) }
			t.Cleanup(unblock)
			faultGETs(g, func(w http.ResponseWriter, r *http.Request, n int) bool {
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
				s   *httpsession.Session
				err error
			}
			done := make(chan result, 1)
			go func() {
				opts := httpsession.Options{Endpoint: url, Era: httpsession.Era2025}
				var r result
				if resume {
					r.s, r.err = httpsession.Resume(context.Background(), opts, st)
				} else {
					r.s, r.err = httpsession.Open(context.Background(), opts)
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
