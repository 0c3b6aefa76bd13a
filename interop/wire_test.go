package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// rawProtocolVersion is the protocol version of the raw requests.
const rawProtocolVersion = "2025-11-25"

// exchange is one HTTP request the go-sdk client sent, as the test saw it.
type exchange struct {
	Verb    string
	Method  string // JSON-RPC method, "" for GET and DELETE
	Session bool   // the request carried Mcp-Session-Id
	Status  int    // 0 when there was no answer
}

// recorder is an http.RoundTripper that records every exchange, in the
// order the answers (or transport errors) came back.
type recorder struct {
	base http.RoundTripper
	log  watchedLog[exchange]
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	ex := exchange{Verb: req.Method, Session: req.Header.Get("Mcp-Session-Id") != ""}
	if req.Body != nil && req.Method == http.MethodPost {
		body, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(body, &msg) // a batch or a response has no method
		ex.Method = msg.Method
	}
	resp, err := r.base.RoundTrip(req)
	if resp != nil {
		ex.Status = resp.StatusCode
	}
	r.log.add(ex)
	return resp, err
}

// waitFor blocks until done holds for the exchanges so far, or ctx ends; it
// returns the exchanges it last saw and ctx's error.
func (r *recorder) waitFor(ctx context.Context, done func([]exchange) bool) ([]exchange, error) {
	return r.log.waitFor(ctx, done)
}

// exchanges returns a copy of the log so far.
func (r *recorder) exchanges() []exchange { return r.log.snapshot() }

// watchedLog is an append-only list that wakes waiters on every append. Its
// zero value is ready to use; it is safe for concurrent use.
type watchedLog[T any] struct {
	mu      sync.Mutex
	items   []T
	changed chan struct{} // closed and replaced on every append; nil until waited on
}

func (l *watchedLog[T]) add(x T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.items = append(l.items, x)
	if l.changed != nil {
		close(l.changed)
		l.changed = nil
	}
}

// snapshot returns a copy of the items so far.
func (l *watchedLog[T]) snapshot() []T {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]T(nil), l.items...)
}

// waitFor blocks until done holds for the items so far, or ctx ends; it
// returns the items it last saw and ctx's error.
func (l *watchedLog[T]) waitFor(ctx context.Context, done func([]T) bool) ([]T, error) {
	for {
		l.mu.Lock()
		items := append([]T(nil), l.items...)
		if l.changed == nil {
			l.changed = make(chan struct{})
		}
		ch := l.changed
		l.mu.Unlock()
		if done(items) {
			return items, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return items, ctx.Err()
		}
	}
}

// newHTTPClient returns a client with its own connection pool, closed when
// the test ends so that no connection goroutine outlives it.
func newHTTPClient(t testing.TB) (*http.Client, *recorder) {
	base := &http.Transport{}
	rec := &recorder{base: base}
	t.Cleanup(base.CloseIdleConnections)
	return &http.Client{Transport: rec}, rec
}

// sdkOptions are the go-sdk knobs the tests turn; the zero value is what a
// host gets by default.
type sdkOptions struct {
	// ProtocolVersion is ClientSessionOptions.ProtocolVersion ("" for go-sdk's
	// latest, which makes it try server/discover first).
	ProtocolVersion string
	// NoStandaloneStream sets DisableStandaloneSSE.
	NoStandaloneStream bool
}

// connectSDK opens a go-sdk client session to url, as a host would, and
// closes it when the test ends.
func connectSDK(t testing.TB, url string, hc *http.Client, o sdkOptions) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpsup-interop", Version: "0"}, nil)
	transport := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, DisableStandaloneSSE: o.NoStandaloneStream}
	cs, err := client.Connect(context.Background(), transport, &mcp.ClientSessionOptions{ProtocolVersion: o.ProtocolVersion})
	require.NoError(t, err, "go-sdk connect")
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// rawResponse is one answer to a raw request, body read in full (JSON) or,
// for text/event-stream, the data of its first message event.
type rawResponse struct {
	Status      int
	ContentType string
	SessionID   string
	Body        []byte
}

// postRaw sends one JSON-RPC message as a POST, with sessionID unless it is
// "", and returns the answer.
func postRaw(t testing.TB, hc *http.Client, url, sessionID, message string) rawResponse {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(message))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", rawProtocolVersion)
	if sessionID != "" {
		req.Header.Set("Mcp-Session-Id", sessionID)
	}
	resp, err := hc.Do(req)
	require.NoError(t, err, "POST %s", message)
	defer resp.Body.Close()
	out := rawResponse{
		Status:      resp.StatusCode,
		ContentType: mediaType(resp.Header.Get("Content-Type")),
		SessionID:   resp.Header.Get("Mcp-Session-Id"),
	}
	if out.ContentType == "text/event-stream" {
		out.Body = firstEventData(t, resp.Body)
		return out
	}
	out.Body, err = io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	require.NoError(t, err)
	return out
}

// initializeRaw opens a session by hand (initialize, then
// notifications/initialized) and returns its id.
func initializeRaw(t testing.TB, hc *http.Client, url string) string {
	t.Helper()
	init := postRaw(t, hc, url, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{`+
		`"protocolVersion":"`+rawProtocolVersion+`","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	require.Equal(t, http.StatusOK, init.Status, "initialize: %s", init.Body)
	require.NotEmpty(t, init.SessionID, "initialize issued no Mcp-Session-Id")
	ack := postRaw(t, hc, url, init.SessionID, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	require.Equal(t, http.StatusAccepted, ack.Status, "notifications/initialized: %s", ack.Body)
	return init.SessionID
}

// firstEventData returns the data of the first SSE event that has any
// (server-everything opens a POST's stream with a data-less priming event).
func firstEventData(t testing.TB, body io.Reader) []byte {
	t.Helper()
	_, data := firstEvent(t, body)
	return data
}

// firstEvent returns the id and the data of the first SSE event that has
// data; comments and data-less events are skipped.
func firstEvent(t testing.TB, body io.Reader) (id string, data []byte) {
	t.Helper()
	sc := bufio.NewScanner(io.LimitReader(body, 1<<20))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " ")...)
		case strings.HasPrefix(line, "id:"):
			id = strings.TrimPrefix(strings.TrimPrefix(line, "id:"), " ")
		case line == "" && len(data) > 0:
			return id, data
		case line == "":
			id = ""
		}
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, data, "event stream ended without data")
	return id, data
}

// mediaType drops the parameters of a Content-Type value.
func mediaType(v string) string {
	mt, _, _ := strings.Cut(v, ";")
	return strings.TrimSpace(strings.ToLower(mt))
}

// decodeObject decodes a JSON object keeping every member raw, so a test can
// tell an absent id from a null one.
func decodeObject(t testing.TB, body []byte) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(body, &m), "body %q", body)
	return m
}
