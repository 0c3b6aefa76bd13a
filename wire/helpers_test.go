package wire_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/wire"
)

// logged is one request the gateway saw.
type logged struct {
	Verb, Method, SessionID, ProtocolVersion string
}

// faultFunc may answer a request in the server's place; it reports whether
// it did. n counts earlier requests with the same verb and method.
type faultFunc func(w http.ResponseWriter, r *http.Request, method string, n int) bool

// gateway is a small fault-injecting http.Handler in front of a real go-sdk
// server. It logs every request.
type gateway struct {
	next  http.Handler
	mu    sync.Mutex
	log   []logged
	seen  map[string]int
	fault faultFunc
}

func (g *gateway) setFault(f faultFunc) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.fault = f
}

// faultGETs sets a fault that sees the GETs only: f may answer one in the
// server's place (n counts the earlier GETs) and reports whether it did.
func faultGETs(g *gateway, f func(w http.ResponseWriter, r *http.Request, n int) bool) {
	g.setFault(func(w http.ResponseWriter, r *http.Request, method string, n int) bool {
		return r.Method == http.MethodGet && f(w, r, n)
	})
}

func (g *gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var method string
	if r.Method == http.MethodPost {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var m struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(body, &m)
		method = m.Method
	}
	g.mu.Lock()
	g.log = append(g.log, logged{r.Method, method, r.Header.Get("Mcp-Session-Id"), r.Header.Get("Mcp-Protocol-Version")})
	if g.seen == nil {
		g.seen = map[string]int{}
	}
	key := r.Method + " " + method
	n := g.seen[key]
	g.seen[key]++
	f := g.fault
	g.mu.Unlock()
	if f != nil && f(w, r, method, n) {
		return
	}
	g.next.ServeHTTP(w, r)
}

// requests returns a copy of the log.
func (g *gateway) requests() []logged {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]logged(nil), g.log...)
}

// count returns how many requests had this verb and JSON-RPC method.
func (g *gateway) count(verb, method string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.seen[verb+" "+method]
}

type echoIn struct {
	Text string `json:"text"`
}

// newServer starts a real go-sdk MCP server (a tool "echo" and a prompt
// "greet") behind a gateway on 127.0.0.1.
func newServer(t testing.TB, opts *mcp.StreamableHTTPOptions) (*gateway, string) {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "test-server", Version: "v1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "echoes"}, func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	srv.AddPrompt(&mcp.Prompt{Name: "greet"}, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}}, nil
	})
	g := &gateway{next: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, opts)}
	hs := httptest.NewServer(g)
	t.Cleanup(func() {
		hs.Close()
		// Sessions a test detached from stay open on the server until closed.
		for ss := range srv.Sessions() {
			_ = ss.Close()
		}
	})
	return g, hs.URL
}

// callEcho calls the echo tool and requires success.
func callEcho(t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
	require.NoError(t, err)
	require.False(t, res.IsError)
}

// writeFault writes a canned answer.
func writeFault(w http.ResponseWriter, status int, contentType, body string, header map[string]string) {
	for k, v := range header {
		w.Header().Set(k, v)
	}
	if contentType != "" {
		w.Header().Set("Content-Type", contentType)
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// open opens a session on url (era 2025 unless opts name one), closed when
// the test ends.
func open(t testing.TB, url string, opts wire.Options) *wire.Session {
	t.Helper()
	opts.Endpoint = url
	if opts.Era == wire.EraAuto {
		opts.Era = wire.Era2025
	}
	s, err := wire.Open(context.Background(), opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// blindState opens a session without a stream, detaches from it and returns
// its resume state without the InitializeResult: what a blind Resume starts
// from.
func blindState(t testing.TB, url string) wire.ResumeState {
	t.Helper()
	first := open(t, url, wire.Options{Stream: wire.StreamOff})
	st := first.ResumeState()
	st.InitializeResult = nil
	require.NoError(t, first.Detach())
	return st
}

// waitEnded waits for the go-sdk session to end by itself.
func waitEnded(t *testing.T, s *wire.Session) {
	t.Helper()
	ended := make(chan error, 1)
	go func() { ended <- s.Wait() }()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the go-sdk session did not end")
	}
}

// advance moves the fake clock a minute whenever something waits on it, so
// the keeper's backoff never takes real time, until the returned stop is
// called or the test ends.
func advance(t *testing.T, clock *clockwork.FakeClock) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for clock.BlockUntilContext(ctx, 1) == nil {
			clock.Advance(time.Minute)
		}
	}()
	stop = func() { cancel(); <-done }
	t.Cleanup(stop)
	return stop
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
