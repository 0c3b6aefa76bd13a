package httpsession_test

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

	"github.com/mcpsup/mcpsup/httpsession"
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
	// Bounded: a response go-sdk cannot match (an id not moved back) would
	// hold the call for good.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
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
func open(t testing.TB, url string, opts httpsession.Options) *httpsession.Session {
	t.Helper()
	opts.Endpoint = url
	if opts.Era == httpsession.EraAuto {
		opts.Era = httpsession.Era2025
	}
	s, err := httpsession.Open(context.Background(), opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// blindState opens a session without a stream, detaches from it and returns
// its resume state without the InitializeResult: what a blind Resume starts
// from.
func blindState(t testing.TB, url string) httpsession.ResumeState {
	t.Helper()
	first := open(t, url, httpsession.Options{Stream: httpsession.StreamOff})
	st := first.ResumeState()
	st.InitializeResult = nil
	require.NoError(t, first.Detach())
	return st
}

// waitEnded waits for the go-sdk session to end by itself.
func waitEnded(t *testing.T, s *httpsession.Session) {
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
// called, the test ends, or it advanced a day in all (a timer far out, such
// as a switch's testMemory, stays in the future).
func advance(t *testing.T, clock *clockwork.FakeClock) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 24*60 && clock.BlockUntilContext(ctx, 1) == nil; i++ {
			clock.Advance(time.Minute)
		}
	}()
	stop = func() { cancel(); <-done }
	t.Cleanup(stop)
	return stop
}

// testMemory is the GET-hostile memory of a recorder's switch: longer than
// any test advances its fake clock by itself.
const testMemory = 100 * 365 * 24 * time.Hour

// recorder collects the stream attempts and applies the hostility rule to
// the session's records as an observer. The session's switch is in
// StreamOn mode (the rule never holds the stream) unless auto is set before
// config, when it is a StreamAuto switch applying the same rule.
type recorder struct {
	auto     bool
	rule     httpsession.HostilityRule
	mu       sync.Mutex
	attempts []httpsession.StreamAttempt
	tracker  *httpsession.HostilityTracker
	hostile  chan struct{} // closed when the observer's rule fires
	sw       *httpsession.StreamSwitch
	switched chan httpsession.StreamDecision // the switch's reports
}

func newRecorder(rule httpsession.HostilityRule) *recorder {
	return &recorder{rule: rule, tracker: httpsession.NewHostilityTracker(rule, 0), hostile: make(chan struct{}),
		switched: make(chan httpsession.StreamDecision, 16)}
}

func (r *recorder) config(c *httpsession.Config) {
	mode := httpsession.StreamOn
	if r.auto {
		mode = httpsession.StreamAuto
	}
	r.sw = httpsession.NewStreamSwitch(httpsession.SwitchConfig{Mode: mode, Rule: r.rule, Memory: testMemory, Clock: c.Clock,
		OnStream: func(d httpsession.StreamDecision) { r.switched <- d }})
	c.Switch = r.sw
	c.OnExchange = func(x httpsession.Exchange) {
		r.mu.Lock()
		fired := r.tracker.ObserveExchange(x)
		r.mu.Unlock()
		r.fired(fired)
	}
	c.OnStreamAttempt = func(a httpsession.StreamAttempt) {
		r.mu.Lock()
		r.attempts = append(r.attempts, a)
		fired := r.tracker.ObserveAttempt(a)
		r.mu.Unlock()
		r.fired(fired)
	}
}

// fired acts once on the rule firing, from an exchange or an attempt.
func (r *recorder) fired(fired bool) {
	if fired {
		close(r.hostile)
	}
}

func (r *recorder) snapshot() ([]httpsession.StreamAttempt, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	h, _ := r.tracker.Hostile()
	return append([]httpsession.StreamAttempt(nil), r.attempts...), h
}

func within(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}
