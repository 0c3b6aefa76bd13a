package mcptest

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// testTimeout bounds every wait in these tests; it is never reached when
// they pass.
const testTimeout = 20 * time.Second

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

func startServer(t *testing.T, opts Options) *Server {
	t.Helper()
	s, err := NewServer(opts)
	require.NoError(t, err)
	t.Cleanup(s.Close)
	return s
}

// connect opens a go-sdk client session; version "" lets go-sdk choose.
func connect(t *testing.T, s *Server, version string, copts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1.0.0"}, copts)
	transport := &mcp.StreamableClientTransport{Endpoint: s.URL(), HTTPClient: s.HTTPClient()}
	cs, err := c.Connect(testContext(t), transport, &mcp.ClientSessionOptions{ProtocolVersion: version})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// post sends one raw JSON-RPC POST and returns the response with its body.
func post(t *testing.T, s *Server, sessionID, body string) (*http.Response, []byte) {
	t.Helper()
	req, err := postRequest(testContext(t), s, sessionID, body)
	require.NoError(t, err)
	resp, err := s.HTTPClient().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, b
}

// postRequest builds a raw JSON-RPC POST; with a sessionID it carries the
// session's headers.
func postRequest(ctx context.Context, s *Server, sessionID, body string) (*http.Request, error) {
	req, err := rawRequest(ctx, s, http.MethodPost, sessionID, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	return req, nil
}

// get opens a raw standalone GET stream.
func get(ctx context.Context, s *Server, sessionID string) (*http.Response, error) {
	req, err := rawRequest(ctx, s, http.MethodGet, sessionID, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	return s.HTTPClient().Do(req)
}

func rawRequest(ctx context.Context, s *Server, verb, sessionID string, body io.Reader) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, verb, s.URL(), body)
	if err != nil {
		return nil, err
	}
	if sessionID != "" {
		req.Header.Set(headerSessionID, sessionID)
		req.Header.Set(headerProtocolVersion, "2025-11-25")
	}
	return req, nil
}

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// rawSession opens a session with raw requests (no standalone stream) and
// returns its id.
func rawSession(t *testing.T, s *Server) string {
	t.Helper()
	resp, _ := post(t, s, "", initializeBody)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	id := resp.Header.Get(headerSessionID)
	require.NotEmpty(t, id)
	resp, _ = post(t, s, id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	require.Equal(t, http.StatusAccepted, resp.StatusCode)
	return id
}

// lastDone waits until the newest log entry is done and returns it.
func lastDone(t *testing.T, l *Log) Entry {
	t.Helper()
	seq := lastEntry(t, l).Seq
	require.NoError(t, l.WaitFunc(testContext(t), 1, func(e Entry) bool { return e.Seq == seq && e.Done }))
	return lastEntry(t, l)
}

// lastEntry returns the newest log entry.
func lastEntry(t *testing.T, l *Log) Entry {
	t.Helper()
	es := l.Entries()
	require.NotEmpty(t, es)
	return es[len(es)-1]
}
