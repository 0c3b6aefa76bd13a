package httpsession_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/httpsession"
)

// A session's first call (a listing aside) waits until the standalone
// stream's first GET is answered. A server may send a request unrelated to any call (the
// conformance suite's elicitation scenario sends elicitation/create so)
// on the GET's stream alone, and drops it while no stream is open
// (streamable-http.mdx, "Listening for Messages from the Server"): a call
// sent before the stream is up could then wait forever for an
// elicitation it never gets. The server here holds the GET's answer until
// a tools/call arrives or 100 ms pass: the order at the server is the
// GET answered, then tools/call.
func TestFirstCallWaitsForTheStandaloneStream(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "test-server", Version: "v1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo"}, func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	inner := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	var (
		mu     sync.Mutex
		order  []string
		listed = make(chan struct{})
		once   sync.Once
	)
	note := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			select { // the server's own bound: a client that waits gets its answer
			case <-listed:
			case <-time.After(100 * time.Millisecond):
			}
			note("GET answered")
		case http.MethodPost:
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if strings.Contains(string(body), `"tools/call"`) {
				note("tools/call")
				once.Do(func() { close(listed) })
			}
		}
		inner.ServeHTTP(w, r)
	}))
	defer hs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := httpsession.Open(ctx, httpsession.Options{Endpoint: hs.URL, Era: httpsession.Era2025, Stream: httpsession.StreamOn})
	require.NoError(t, err)
	defer s.Close()
	_, err = s.ClientSession().CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
	require.NoError(t, err)
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []string{"GET answered", "tools/call"}, order)
}
