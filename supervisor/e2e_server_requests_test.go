//lint:file-ignore SA1019 sampling/createMessage is deprecated from protocol 2026-07-28 on (SEP-2577), and still sent by 2025-era servers, whose requests are what this file tests

package supervisor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/supervisor"
)

// samplingServer is an MCP server (2025-11-25, one tool) that sends a
// notifications/message when notify is set, then n sampling/createMessage
// requests and a ping on the standalone stream, then holds it, and counts
// the JSON-RPC errors of the responses it is sent, by code.
type samplingServer struct {
	n      int
	notify bool
	mu     sync.Mutex
	errors map[int]int // JSON-RPC error code -> responses with it
	ok     int         // responses with a result
}

func (s *samplingServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		if s.notify {
			fmt.Fprint(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"hi\"}}\n\n")
		}
		for i := 1; i <= s.n; i++ {
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"sampling/createMessage\",\"params\":{\"messages\":[{\"role\":\"user\",\"content\":{\"type\":\"text\",\"text\":\"hi\"}}],\"maxTokens\":10}}\n\n", i)
		}
		fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":\"ping-1\",\"method\":\"ping\"}\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		return
	case http.MethodDelete:
		w.WriteHeader(http.StatusNoContent)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Error  *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(body, &m)
	if m.Method == "" { // a response, or a notification's 202
		s.mu.Lock()
		if m.Error != nil {
			s.errors[m.Error.Code]++
		} else if len(m.ID) > 0 {
			s.ok++
		}
		s.mu.Unlock()
	}
	if len(m.ID) == 0 || m.Method == "" {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	result := `{}`
	switch m.Method {
	case "initialize":
		w.Header().Set("Mcp-Session-Id", "a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6")
		result = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"sampling","version":"1"}}`
	case "tools/list":
		result = `{"tools":[{"name":"search","inputSchema":{"type":"object"}}]}`
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, m.ID, result)
}

func (s *samplingServer) counts() (ok int, errs map[int]int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ok, maps.Clone(s.errors)
}

// startSampling starts a supervisor on a samplingServer of n requests
// whose CreateMessageHandler tells started of each call and then waits for
// its context or release, and returns once the supervisor is ready.
func startSampling(t *testing.T, n, maxInFlight int, started chan<- struct{}, release <-chan struct{}) (*supervisor.Supervisor, *samplingServer, *events.Recorder) {
	t.Helper()
	return startSamplingOn(t, &samplingServer{n: n, errors: map[int]int{}}, maxInFlight, started, release, nil)
}

// startSamplingOn is startSampling on srv, with the host's logging handler.
func startSamplingOn(t *testing.T, srv *samplingServer, maxInFlight int, started chan<- struct{}, release <-chan struct{},
	logging func(context.Context, *mcp.LoggingMessageRequest)) (*supervisor.Supervisor, *samplingServer, *events.Recorder) {
	t.Helper()
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	rec := &events.Recorder{}
	sup, err := supervisor.New(supervisor.Config{
		Endpoint: ts.URL + "/mcp",
		Era:      supervisor.Era2025,
		Stream:   supervisor.StreamConfig{Policy: supervisor.StreamOn},
		Limits:   supervisor.LimitsConfig{MaxResponsesInFlight: maxInFlight},
		Observe:  supervisor.ObserveConfig{Events: rec},
		Client: supervisor.ClientConfig{ClientOptions: mcp.ClientOptions{LoggingMessageHandler: logging, CreateMessageHandler: func(ctx context.Context, _ *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			started <- struct{}{}
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-release:
				return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "ok"}}, nil
			}
		}}},
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sup.Close() })
	sup.Start()
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	t.Cleanup(cancel)
	require.NoError(t, sup.WaitForState(ctx, supervisor.Ready))
	return sup, srv, rec
}

// A host's sampling handler that waits on its context (an LLM call, a
// user's answer) no longer holds Close: go-sdk's Close waits for the
// server's requests' handlers, and the session's end now ends their
// context.
func TestCloseEndsTheServerRequestsHandlers(t *testing.T) {
	started := make(chan struct{}, 1)
	sup, _, _ := startSampling(t, 1, 0, started, nil)
	<-started
	requireCloseReturns(t, sup, "the sampling handler")
}

// requireCloseReturns closes sup and fails the test if Close is still
// waiting (for what) after e2eTimeout.
func requireCloseReturns(t *testing.T, sup *supervisor.Supervisor, what string) {
	t.Helper()
	closed := make(chan error, 1)
	go func() { closed <- sup.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	select {
	case err := <-closed:
		require.NoError(t, err)
	case <-ctx.Done():
		t.Fatalf("Close still waits for %s (state %v)", what, sup.State())
	}
}

// A host's logging handler that waits on its context does not hold Close
// either: a notification's handler ends with the session as a request's
// does.
func TestCloseEndsTheServerNotificationsHandlers(t *testing.T) {
	logged := make(chan struct{}, 1)
	sup, _, _ := startSamplingOn(t, &samplingServer{notify: true, errors: map[int]int{}}, 0, nil, nil,
		func(ctx context.Context, _ *mcp.LoggingMessageRequest) {
			logged <- struct{}{}
			<-ctx.Done()
		})
	<-logged
	requireCloseReturns(t, sup, "the logging handler")
}

// A server that sends requests faster than the host's handlers end them
// gets at most MaxResponsesInFlight handled at once: the rest are answered
// -32603 (internal error) without reaching a handler, each reported (the
// first 16 of a session each an event, counting them), and the session
// stays ready; a ping among them is answered by go-sdk, never refused.
// Every response, a result or a refusal, reaches the server or is reported
// dropped (their POSTs are held to the same bound, so a refusal's answer
// still on its way can take the place a handled request's answer needs).
func TestServerRequestsPastTheBoundAreRefused(t *testing.T) {
	const bound, refused = 4, 11
	const n = bound + refused // and a ping: 16 responses, each drop an event
	started := make(chan struct{}, n)
	release := make(chan struct{})
	sup, srv, rec := startSampling(t, n, bound, started, release)
	count := func(kind events.Kind) int {
		k := 0
		for _, e := range rec.Events() {
			if e.Kind == kind {
				k++
			}
		}
		return k
	}
	require.Eventually(t, func() bool { return count(events.KindServerRequestRefused) == refused }, e2eTimeout, time.Millisecond, "every request past the bound refused")
	for range bound { // refused: bound admitted, each reaching the handler
		<-started
	}
	close(release)
	require.Eventually(t, func() bool {
		ok, errs := srv.counts()
		return ok+errs[-32603]+count(events.KindResponseDropped) == n+1
	}, e2eTimeout, time.Millisecond, "every response reached the server or was reported dropped")
	_, errs := srv.counts()
	for code := range errs {
		require.Equal(t, -32603, code, "the refusals' code")
	}
	var got []events.Event
	for _, e := range rec.Events() {
		if e.Kind == events.KindServerRequestRefused {
			got = append(got, events.Event{Op: e.Op, Bound: e.Bound, Count: e.Count})
		}
	}
	require.Len(t, got, refused, "the ping was not refused")
	// go-sdk takes each request on a goroutine of its own: the refusals
	// are counted in one order and may be reported in another.
	want := make([]events.Event, refused)
	for i := range want {
		want[i] = events.Event{Op: "sampling/createMessage", Bound: 4, Count: i + 1}
	}
	require.ElementsMatch(t, want, got)
	require.Equal(t, supervisor.Ready, sup.State())
}
