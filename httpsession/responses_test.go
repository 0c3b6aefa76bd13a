package httpsession_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/httpsession"
	"github.com/mcpsup/mcpsup/session"
)

// pingServer is a go-sdk server behind a gateway on 127.0.0.1 whose one
// session the test pings from the server's side.
type pingServer struct {
	g      *gateway
	srv    *mcp.Server
	url    string
	stream chan struct{} // closed once the standalone stream is connected
}

func newPingServer(t *testing.T) *pingServer {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "ping-server", Version: "v1"}, nil)
	p := &pingServer{srv: srv, stream: make(chan struct{})}
	p.g = &gateway{next: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)}
	var once sync.Once
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			w = &flushSignal{ResponseWriter: w, flushed: func() { once.Do(func() { close(p.stream) }) }}
		}
		p.g.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		hs.Close()
		// A session a test detached from stays open on the server until closed.
		for ss := range srv.Sessions() {
			_ = ss.Close()
		}
	})
	p.url = hs.URL
	return p
}

// flushSignal tells of the first Flush of a standalone GET's answer: go-sdk's
// server flushes the stream's headers while it holds the stream's lock,
// which it releases once the stream takes messages.
type flushSignal struct {
	http.ResponseWriter
	flushed func()
}

func (f *flushSignal) Flush() {
	if fl, ok := f.ResponseWriter.(http.Flusher); ok {
		fl.Flush()
	}
	f.flushed()
}

// session returns the server's one session once its standalone stream is
// connected.
func (p *pingServer) session(t *testing.T) *mcp.ServerSession {
	t.Helper()
	within(t, p.stream, "the standalone stream")
	for ss := range p.srv.Sessions() {
		return ss
	}
	t.Fatal("the server has no session")
	return nil
}

// pingOK pings the client from the server and requires the answer: the
// server's requests reach the client on its standalone stream, and its
// responses reach the server.
func pingOK(t *testing.T, ss *mcp.ServerSession) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, ss.Ping(ctx, nil))
}

// holdResponses makes the gateway hold every POST of a response (no
// JSON-RPC method) until its request's context ends; held receives each
// held request's context once it arrives. Cleanup runs before the server
// closes (t.Cleanup is last in, first out), so no handler outlives it.
func holdResponses(t *testing.T, g *gateway) (held <-chan context.Context) {
	ch := make(chan context.Context, 1024)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	g.setFault(func(w http.ResponseWriter, r *http.Request, method string, n int) bool {
		if r.Method != http.MethodPost || method != "" {
			return false
		}
		ch <- r.Context()
		select {
		case <-r.Context().Done():
		case <-release:
		}
		return true
	})
	return ch
}

// A server that sends requests and never answers the POSTs of their
// responses holds at most MaxResponsesInFlight of them: the rest are
// dropped, each reported with a typed error, the session lives, and Close
// or Detach returns and cuts those held.
func TestResponsesInFlightAreBounded(t *testing.T) {
	for name, end := range map[string]func(*httpsession.Session) error{"Close": (*httpsession.Session).Close, "Detach": (*httpsession.Session).Detach} {
		t.Run(name, func(t *testing.T) { testResponsesInFlightAreBounded(t, name, end) })
	}
}

func testResponsesInFlightAreBounded(t *testing.T, name string, end func(*httpsession.Session) error) {
	const bound, pings = 4, 40
	p := newPingServer(t)
	var mu sync.Mutex
	var drops []session.ResponseDropped
	dropped := make(chan struct{}, pings)
	answered := make(chan struct{}, pings) // a response's exchange ended: its place is free
	s, err := httpsession.Open(context.Background(), httpsession.Options{Endpoint: p.url, Era: httpsession.Era2025, Stream: httpsession.StreamOn,
		Wire: httpsession.Config{MaxResponsesInFlight: bound, OnExchange: func(x httpsession.Exchange) {
			if x.Verb == http.MethodPost && x.Method == "" && !x.Local {
				answered <- struct{}{}
			}
		}}, Observe: func(f session.Fact) {
			if e, ok := f.(session.ResponseDropped); ok {
				mu.Lock()
				drops = append(drops, e)
				mu.Unlock()
				dropped <- struct{}{}
			}
		}})
	require.NoError(t, err)
	closed := false
	t.Cleanup(func() {
		if !closed {
			_ = s.Close()
		}
	})
	ss := p.session(t)
	pingOK(t, ss) // the standalone stream carries the server's requests
	within(t, answered, "the ping's response gave its place back")

	held := holdResponses(t, p.g)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for range pings {
		go func() { _ = ss.Ping(ctx, nil) }()
	}
	var heldCtx []context.Context
	for n := 0; n < pings; n++ {
		select {
		case c := <-held:
			heldCtx = append(heldCtx, c)
		case <-dropped:
		case <-time.After(10 * time.Second):
			t.Fatalf("after %d of %d responses, no more were held or dropped", n, pings)
		}
	}
	assert.Equal(t, bound, len(heldCtx), "responses that reached the server")
	mu.Lock()
	require.Len(t, drops, pings-bound)
	// Reported from the senders' goroutines, in any order.
	slices.SortFunc(drops, func(a, b session.ResponseDropped) int { return a.Count - b.Count })
	for i, e := range drops {
		assert.Equal(t, bound, e.Bound)
		assert.Equal(t, i+1, e.Count)
	}
	mu.Unlock()

	// The session lives: a request of the client's goes through while the
	// responses are held.
	pctx, pcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer pcancel()
	require.NoError(t, s.ClientSession().Ping(pctx, nil))

	// The server's pings end first: go-sdk's server holds a DELETE until
	// its requests in flight end.
	cancel()
	closed = true
	done := make(chan struct{})
	go func() { _ = end(s); close(done) }()
	within(t, done, name+" with responses held")
	for _, c := range heldCtx {
		within(t, c.Done(), "the held response's request to end")
	}
}

// A POST of a response the server holds is cut after ResponseTimeout,
// which gives its place back: with a bound of one, a later response is
// sent and answered.
func TestResponseTimeoutFreesItsPlace(t *testing.T) {
	p := newPingServer(t)
	dropped := make(chan struct{}, 16)
	open(t, p.url, httpsession.Options{Stream: httpsession.StreamOn, Wire: httpsession.Config{
		MaxResponsesInFlight: 1, ResponseTimeout: 50 * time.Millisecond,
	}, Observe: func(f session.Fact) {
		if _, ok := f.(session.ResponseDropped); ok {
			dropped <- struct{}{}
		}
	}})
	ss := p.session(t)
	held := holdResponses(t, p.g)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = ss.Ping(ctx, nil) }()
	var c context.Context
	select {
	case c = <-held:
	case <-time.After(10 * time.Second):
		t.Fatal("the response was not sent")
	}
	within(t, c.Done(), "the held response to be cut")
	p.g.setFault(nil)

	// The cut POST gives its place back once its RoundTrip returns, a
	// moment after the server saw it end: a ping whose response came
	// first is dropped (reported), and the next is tried.
	for try := 0; ; try++ {
		require.Less(t, try, 100, "no response was sent after the cut")
		ctx, cancel := context.WithCancel(context.Background())
		answered := make(chan error, 1)
		go func() { answered <- ss.Ping(ctx, nil) }()
		select {
		case err := <-answered:
			cancel()
			require.NoError(t, err)
			return
		case <-dropped:
			cancel()
		case <-time.After(10 * time.Second):
			cancel()
			t.Fatal("the ping got no answer and its response was not dropped")
		}
	}
}

// The POST of a response is recorded as no call: no request id (the id is
// the server's), its 202 passed as it came, nothing rewritten.
func TestResponsePostIsRecordedAsNoCall(t *testing.T) {
	p := newPingServer(t)
	posts := make(chan httpsession.Exchange, 16)
	open(t, p.url, httpsession.Options{Stream: httpsession.StreamOn, Wire: httpsession.Config{OnExchange: func(x httpsession.Exchange) {
		if x.Verb == http.MethodPost && x.Method == "" {
			posts <- x
		}
	}}})
	pingOK(t, p.session(t))
	var x httpsession.Exchange
	select {
	case x = <-posts:
	case <-time.After(10 * time.Second):
		t.Fatal("no response was recorded")
	}
	assert.Equal(t, "", x.RequestID)
	assert.Equal(t, http.StatusAccepted, x.Status)
	assert.False(t, x.Rewritten, "rewritten")
	assert.False(t, x.Malformed, "malformed: %s", x.Problem)
	assert.False(t, x.Local, "answered locally")
}
