package httpsession_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/http/httptest"
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

// passGETs passes the standalone GETs fault does not answer on to the
// server, and hands the test, for each the server answered 200, a function
// that cuts it as a proxy does. It logs every GET's Last-Event-ID.
type passGETs struct {
	opened chan func()
	mu     sync.Mutex
	ids    []string
}

func newPassGETs(g *gateway, fault func(w http.ResponseWriter, r *http.Request, n int) bool) *passGETs {
	p := &passGETs{opened: make(chan func(), 64)}
	faultGETs(g, func(w http.ResponseWriter, r *http.Request, n int) bool {
		p.mu.Lock()
		p.ids = append(p.ids, r.Header.Get("Last-Event-ID"))
		p.mu.Unlock()
		if fault != nil && fault(w, r, n) {
			return true
		}
		ctx, cut := context.WithCancel(r.Context())
		defer cut()
		g.next.ServeHTTP(&okWriter{ResponseWriter: w, ok: func() { p.opened <- cut }}, r.WithContext(ctx))
		return true
	})
	return p
}

// okWriter calls ok once the server answers 200.
type okWriter struct {
	http.ResponseWriter
	once sync.Once
	ok   func()
}

func (w *okWriter) WriteHeader(code int) {
	if code == http.StatusOK {
		w.once.Do(w.ok)
	}
	w.once.Do(func() {}) // another status: never ok
	w.ResponseWriter.WriteHeader(code)
}

func (w *okWriter) Write(b []byte) (int, error) {
	w.once.Do(w.ok)
	return w.ResponseWriter.Write(b)
}

func (w *okWriter) Flush() { _ = http.NewResponseController(w.ResponseWriter).Flush() }

func (w *okWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// next waits for the next GET the server answered 200.
func (p *passGETs) next(t *testing.T) func() {
	t.Helper()
	select {
	case cut := <-p.opened:
		return cut
	case <-time.After(10 * time.Second):
		t.Fatal("timed out waiting for a standalone GET at the server")
		return nil
	}
}

func (p *passGETs) lastEventIDs() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.ids...)
}

// counter counts calls of a hook and the GETs the gateway had seen at each.
type counter struct {
	mu   sync.Mutex
	at   []int
	g    *gateway
	call chan struct{}
}

func newCounter(g *gateway) *counter { return &counter{g: g, call: make(chan struct{}, 16)} }

// restored counts the session.StreamRestored facts.
func (c *counter) restored(f session.Fact) {
	if _, ok := f.(session.StreamRestored); !ok {
		return
	}
	c.mu.Lock()
	c.at = append(c.at, c.g.count("GET", ""))
	c.mu.Unlock()
	c.call <- struct{}{}
}

func (c *counter) calls() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]int(nil), c.at...)
}

// TestFirstGETPlainNotFoundDeclines: a server or gateway without a GET route
// answers the first standalone GET with a plain 404; go-sdk takes that as
// "no stream here" (mcp/streamable.go connectStandaloneSSE), and so does the
// keeper: the attempt is declined, not a gone session, and the session
// lives, after a handshake and after a resume alike (a resumed session the
// server forgot is found by the next POST). A 404 carrying the null-id
// -32000 error still ends the session (DESIGN.md failure story S5, section
// 3).
func TestFirstGETPlainNotFoundDeclines(t *testing.T) {
	cases := []struct {
		name              string
		status            int
		contentType, body string
		resume, gone      bool
	}{
		{"plain 404 after open", 404, "text/plain", "404 page not found", false, false},
		{"plain 404 after resume", 404, "text/plain", "404 page not found", true, false},
		{"null-id -32000 404", 404, "application/json", `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Session not found"}}`, false, true},
		{"null-id -32000 400", 400, "application/json", `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}`, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, url := newServer(t, nil)
			var st httpsession.ResumeState
			if c.resume {
				st = blindState(t, url)
			}
			faultGETs(g, func(w http.ResponseWriter, r *http.Request, n int) bool {
				writeFault(w, c.status, c.contentType, c.body, nil)
				return true
			})
			clock := clockwork.NewFakeClock()
			rec := newRecorder(httpsession.HostilityRule{})
			var goneSeen atomic.Int32
			opts := httpsession.Options{Endpoint: url, Era: httpsession.Era2025, Wire: httpsession.Config{Clock: clock}}
			rec.config(&opts.Wire)
			observe := opts.Wire.OnExchange
			opts.Wire.OnExchange = func(x httpsession.Exchange) {
				observe(x)
				if x.SessionGone {
					goneSeen.Add(1)
				}
			}
			var s *httpsession.Session
			var err error
			if c.resume {
				s, err = httpsession.Resume(context.Background(), opts, st)
			} else {
				s, err = httpsession.Open(context.Background(), opts)
			}
			require.NoError(t, err)
			t.Cleanup(func() { _ = s.Close() })
			require.Eventually(t, func() bool { a, _ := rec.snapshot(); return len(a) >= 1 }, 10*time.Second, 5*time.Millisecond)
			attempts, _ := rec.snapshot()
			a := attempts[0]
			assert.Equal(t, c.status, a.Status)
			assert.Equal(t, c.gone, a.SessionGone)
			assert.Equal(t, !c.gone, a.Declined)

			if c.gone {
				waitEnded(t, s)
				return
			}
			clock.Advance(24 * time.Hour)
			callEcho(t, s.ClientSession())
			assert.Zero(t, goneSeen.Load(), "no exchange said the session is gone")
			assert.Equal(t, 1, g.count("GET", ""), "declined: no re-dial")
			attempts, _ = rec.snapshot()
			assert.Len(t, attempts, 1)
			assert.Equal(t, 1, g.count("POST", "initialize"), "the session lives (a resume sends none)")
		})
	}
}

// TestStreamOutageAnswersKeepRedialing: while the server behind a gateway
// restarts, the gateway answers the stream's re-dials 503. Those attempts
// are an outage, not GET-hostility, and never turn the stream off: the
// keeper re-dials on, the stream is back as soon as the server is, and a StreamRestored fact says so, once (DESIGN.md failure
// story S5).
func TestStreamOutageAnswersKeepRedialing(t *testing.T) {
	const outage = 8
	g, url := newServer(t, nil)
	var down atomic.Bool
	p := newPassGETs(g, func(w http.ResponseWriter, r *http.Request, n int) bool {
		if !down.Load() {
			return false
		}
		writeFault(w, http.StatusServiceUnavailable, "text/html", "<h1>503 Service Unavailable</h1>", nil)
		return true
	})
	clock := clockwork.NewFakeClock()
	rec := newRecorder(httpsession.HostilityRule{Threshold: 2})
	rec.auto = true
	restored := newCounter(g)
	opts := httpsession.Options{Era: httpsession.Era2025, Wire: httpsession.Config{Clock: clock}, Observe: restored.restored}
	rec.config(&opts.Wire)
	observe := opts.Wire.OnStreamAttempt
	var unavailable atomic.Int32
	opts.Wire.OnStreamAttempt = func(a httpsession.StreamAttempt) {
		observe(a)
		if a.Status == http.StatusServiceUnavailable && unavailable.Add(1) == outage {
			down.Store(false) // the server is back before the next attempt
		}
	}
	s := open(t, url, opts)
	cut := p.next(t)
	callEcho(t, s.ClientSession()) // POSTs work before the outage

	down.Store(true)
	stopAdvancing := advance(t, clock)
	cut()
	p.next(t) // the stream is back
	stopAdvancing()
	within(t, restored.call, "StreamRestored")

	attempts, hostile := rec.snapshot()
	assert.False(t, hostile, "an outage a gateway answers is not GET-hostility")
	require.Len(t, attempts, 1+outage, "the cut stream, then the outage's attempts, more than the threshold")
	assert.False(t, rec.sw.Decision().Off, "the stream was never turned off")
	assert.Equal(t, httpsession.EndEOF, attempts[0].End)
	for _, a := range attempts[1:] {
		assert.Equal(t, http.StatusServiceUnavailable, a.Status)
		assert.True(t, a.Outage())
		assert.False(t, a.SessionGone)
	}
	assert.Equal(t, []int{2 + outage}, restored.calls(), "called once, for the GET after the outage")
	callEcho(t, s.ClientSession())
	assert.Equal(t, 1, g.count("POST", "initialize"), "the session survived the outage")
}

// forgetfulStore is go-sdk's MemoryEventStore that, once told to, can no
// longer replay after an event id (its events expired), as a store that
// drops old events must refuse: go-sdk's server then answers the GET 400
// "failed to replay events".
type forgetfulStore struct {
	*mcp.MemoryEventStore
	forget atomic.Bool
}

func (f *forgetfulStore) After(ctx context.Context, sessionID, streamID string, index int) iter.Seq2[[]byte, error] {
	if index >= 0 && f.forget.Load() {
		return func(yield func([]byte, error) bool) { yield(nil, errors.New("events expired")) }
	}
	return f.MemoryEventStore.After(ctx, sessionID, streamID, index)
}

// TestStreamReplayRefusedRedialsWithoutLastEventID: the keeper's re-dial
// carries the stream's last event id. A server that replays after it gives
// the stream back, and nothing was missed: no StreamRestored is reported.
// A server that cannot replay answers 400; the keeper drops the id and
// re-dials at once (no clock advance) without it, the refused attempt
// does not count toward the hostility rule, and
// a StreamRestored is reported: messages may have been missed (DESIGN.md
// failure story S5).
func TestStreamReplayRefusedRedialsWithoutLastEventID(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "store-server", Version: "v1"}, nil)
	addEcho := func(name string) {
		mcp.AddTool(srv, &mcp.Tool{Name: name}, func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	}
	addEcho("echo")
	store := &forgetfulStore{MemoryEventStore: mcp.NewMemoryEventStore(nil)}
	g := &gateway{next: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{EventStore: store})}
	hs := httptest.NewServer(g)
	t.Cleanup(hs.Close)
	p := newPassGETs(g, nil)

	listChanged := make(chan struct{}, 16)
	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "v0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { listChanged <- struct{}{} },
	})
	clock := clockwork.NewFakeClock()
	rec := newRecorder(httpsession.HostilityRule{Threshold: 1})
	restored := newCounter(g)
	rec.auto = true
	opts := httpsession.Options{Era: httpsession.Era2025, Client: client, Wire: httpsession.Config{Clock: clock}, Observe: restored.restored}
	rec.config(&opts.Wire)
	s := open(t, hs.URL, opts)

	cut := p.next(t)
	addEcho("second") // a list_changed with an event id on the standalone stream
	within(t, listChanged, "the list_changed on the standalone stream")

	// The stream lived a while, so each re-dial follows at once: no clock
	// advance is needed, and none is made.
	clock.Advance(time.Minute)
	cut()
	cut = p.next(t) // replayed after the id
	callEcho(t, s.ClientSession())
	store.forget.Store(true)
	clock.Advance(time.Minute)
	cut()
	p.next(t) // the re-dial without the id
	within(t, restored.call, "StreamRestored")

	ids := p.lastEventIDs()
	require.Len(t, ids, 4)
	assert.Empty(t, ids[0], "the first GET")
	assert.NotEmpty(t, ids[1], "the re-dial after the first cut carried the last event id")
	assert.Equal(t, ids[1], ids[2], "no event since: the same id")
	assert.Empty(t, ids[3], "the re-dial after the refused replay")

	attempts, hostile := rec.snapshot()
	rec.mu.Lock()
	streak := rec.tracker.Streak()
	rec.mu.Unlock()
	require.Len(t, attempts, 3, "two cut streams, the refused replay")
	assert.Equal(t, httpsession.EndEOF, attempts[1].End)
	r := attempts[2]
	assert.Equal(t, http.StatusBadRequest, r.Status)
	assert.Equal(t, ids[2], r.LastEventID)
	assert.True(t, r.ReplayRefused)
	assert.False(t, r.SessionGone)
	assert.Zero(t, streak, "a refused replay does not count toward the hostility rule")
	assert.False(t, hostile)
	assert.Equal(t, []int{4}, restored.calls(), "not for the first GET nor the honoured replay")
	callEcho(t, s.ClientSession())
	assert.Equal(t, 1, g.count("POST", "initialize"))
}

// TestStreamRestoredAfterCut: a stream cut by a proxy and re-dialed without
// Last-Event-ID (a go-sdk server without an EventStore sends no event ids)
// may have missed messages: a StreamRestored is reported for the re-dial and
// not for the session's first GET.
func TestStreamRestoredAfterCut(t *testing.T) {
	g, url := newServer(t, nil)
	p := newPassGETs(g, nil)
	clock := clockwork.NewFakeClock()
	restored := newCounter(g)
	opts := httpsession.Options{Era: httpsession.Era2025, Wire: httpsession.Config{Clock: clock}, Observe: restored.restored}
	s := open(t, url, opts)

	cut := p.next(t)
	clock.Advance(time.Minute)
	cut()
	p.next(t)
	within(t, restored.call, "StreamRestored")
	callEcho(t, s.ClientSession())
	assert.Equal(t, []int{2}, restored.calls(), "once, for the second GET: not for the first")
	assert.Equal(t, []string{"", ""}, p.lastEventIDs())
}

// TestStreamEventIDThatIsNoHeaderValueIsIgnored: an event id with a control
// byte cannot be sent back: net/http refuses the re-dial's Last-Event-ID before
// it is sent, so every re-dial failed locally and the stream never came back
// for the session's life. Such an id is ignored, as one with a NUL is
// (WHATWG HTML, server-sent events): the re-dial reaches the server,
// without Last-Event-ID.
func TestStreamEventIDThatIsNoHeaderValueIsIgnored(t *testing.T) {
	// A CR is no such byte: it ends the line (WHATWG HTML, server-sent
	// events), see TestEventReaderSpec.
	for _, id := range []string{"a\x01b", "a\x7fb", "a\x00b"} {
		t.Run(fmt.Sprintf("%q", id), func(t *testing.T) {
			g, url := newServer(t, nil)
			redialed := make(chan string, 1)
			faultGETs(g, func(w http.ResponseWriter, r *http.Request, n int) bool {
				switch n {
				case 0:
					writeFault(w, 200, "text/event-stream", "id: "+id+"\ndata:\n\n", nil)
					return true
				case 1:
					redialed <- r.Header.Get("Last-Event-ID")
				}
				return false
			})
			clock := clockwork.NewFakeClock()
			stop := advance(t, clock)
			defer stop()
			s := open(t, url, httpsession.Options{Era: httpsession.Era2025, Wire: httpsession.Config{Clock: clock}})
			select {
			case got := <-redialed:
				assert.Empty(t, got, "the id was not kept")
			case <-time.After(10 * time.Second):
				t.Fatal("no re-dial reached the server")
			}
			callEcho(t, s.ClientSession())
			assert.Equal(t, 1, g.count("POST", "initialize"))
		})
	}
}

// TestStreamRedialWaitsForRetryAfter: a re-dial answered 429 with
// Retry-After waits as long as the server asked, past MaxBackoff (at most
// classify.MaxRetryAfter), before the next; the stream comes back then.
func TestStreamRedialWaitsForRetryAfter(t *testing.T) {
	g, url := newServer(t, nil)
	var limited atomic.Bool
	p := newPassGETs(g, func(w http.ResponseWriter, r *http.Request, n int) bool {
		if !limited.CompareAndSwap(true, false) {
			return false
		}
		writeFault(w, http.StatusTooManyRequests, "text/plain", "slow down", map[string]string{"Retry-After": "120"})
		return true
	})
	clock := clockwork.NewFakeClock()
	rec := newRecorder(httpsession.HostilityRule{})
	opts := httpsession.Options{Era: httpsession.Era2025, Wire: httpsession.Config{Clock: clock,
		Stream: httpsession.StreamConfig{InitialBackoff: time.Second, MaxBackoff: 5 * time.Second}}}
	rec.config(&opts.Wire)
	attempts := make(chan httpsession.StreamAttempt, 16)
	observe := opts.Wire.OnStreamAttempt
	opts.Wire.OnStreamAttempt = func(a httpsession.StreamAttempt) { observe(a); attempts <- a }
	open(t, url, opts)
	cut := p.next(t)

	limited.Store(true)
	cut()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.Equal(t, httpsession.EndEOF, (<-attempts).End)
	require.NoError(t, clock.BlockUntilContext(ctx, 1)) // the backoff's wait
	clock.Advance(time.Second)
	a := <-attempts
	require.Equal(t, http.StatusTooManyRequests, a.Status)
	require.Equal(t, 120*time.Second, a.RetryAfter)

	require.NoError(t, clock.BlockUntilContext(ctx, 1))
	clock.Advance(119 * time.Second) // past MaxBackoff, short of Retry-After
	short, cancelShort := context.WithTimeout(ctx, time.Second)
	defer cancelShort()
	require.NoError(t, clock.BlockUntilContext(short, 1), "still waiting: the re-dial did not go out")
	clock.Advance(time.Second)
	p.next(t) // the stream is back
}
