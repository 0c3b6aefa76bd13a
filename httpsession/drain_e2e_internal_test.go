package httpsession

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A go-sdk server whose answer streams to tools/call stay open after the
// response (its handler returns, the connection does not): many calls at
// once on a go-sdk ClientSession over the Transport each get their result,
// each held stream is cut by the drain bound (its connection closed, which
// the server sees as its request's end), and the session closes with no
// drain left watched.
func TestDrainBoundCutsStreamsHeldByAGoSDKServer(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "held", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo"}, func(ctx context.Context, _ *mcp.CallToolRequest, in struct{ Text string }) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	var calls, released atomic.Int32
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
		if r.Method == http.MethodPost && bytes.Contains(body, []byte(`"tools/call"`)) {
			calls.Add(1)
			<-r.Context().Done() // held until the client drops the connection
			released.Add(1)
		}
	}))
	defer hs.Close()

	tr := wireConn(Config{}, hs.URL, nil)
	tr.drains.wait = time.Millisecond
	client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), connTransport{tr}, nil)
	require.NoError(t, err)

	const n = 16
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			ctx := WithExchange(context.Background())
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"Text": "hi"}})
			if assert.NoError(t, err, "call %d", i) {
				assert.Equal(t, "hi", res.Content[0].(*mcp.TextContent).Text)
			}
			done := make(chan struct{})
			AfterAnswers(ctx, func() { close(done) })
			<-done // the held stream was cut: its Close returned
		})
	}
	wg.Wait()
	require.NoError(t, cs.Close())
	assert.EqualValues(t, n, calls.Load(), "calls the server answered")
	hs.Close() // waits for every handler: each held stream was released
	assert.EqualValues(t, n, released.Load(), "held streams released by the cut")
	tr.drains.mu.Lock()
	defer tr.drains.mu.Unlock()
	assert.Empty(t, tr.drains.active)
}

// Closing the Session ends the drains under way and those still to come at
// once, whatever the bound: a server holding its answer streams open keeps
// neither go-sdk's stream readers nor its connections past Close (the drain
// bound here is an hour).
func TestSessionCloseEndsTheDrains(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "held", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo"}, func(ctx context.Context, _ *mcp.CallToolRequest, in struct{ Text string }) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	const n = 8
	released := make(chan struct{}, n)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
		if r.Method == http.MethodPost && bytes.Contains(body, []byte(`"tools/call"`)) {
			<-r.Context().Done() // held until the client drops the connection
			released <- struct{}{}
		}
	}))
	defer hs.Close()

	s, err := Open(context.Background(), Options{Endpoint: hs.URL, Stream: StreamOff})
	require.NoError(t, err)
	s.c.drains.mu.Lock()
	s.c.drains.wait = time.Hour // the handshake's answer may be draining
	s.c.drains.mu.Unlock()
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, err := s.ClientSession().CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"Text": "hi"}})
			assert.NoError(t, err, "call %d", i)
		})
	}
	wg.Wait()
	require.NoError(t, s.Close())
	for range n {
		<-released // hangs while a drain outlives Close
	}
	s.c.drains.mu.Lock()
	defer s.c.drains.mu.Unlock()
	assert.Empty(t, s.c.drains.active)
}
