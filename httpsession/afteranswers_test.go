package httpsession_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/httpsession"
)

// A call whose context ends once AfterAnswers releases it leaves its
// connection reusable: twenty calls in a row, each with a context canceled
// right after, share the connections of the handshake.
func TestAfterAnswersKeepsTheConnection(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "test-server", Version: "v1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo"}, func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	var conns atomic.Int32
	hs := httptest.NewUnstartedServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	hs.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	hs.Start()
	defer hs.Close()
	// One connection at most: net/http otherwise races a dial against a
	// connection coming back to the pool, and the raced connection (dialed
	// under load during the handshake) reaches the server when it will.
	tr := &http.Transport{MaxConnsPerHost: 1}
	defer tr.CloseIdleConnections()
	s, err := httpsession.Open(context.Background(), httpsession.Options{Endpoint: hs.URL, HTTPClient: &http.Client{Transport: tr}, Era: httpsession.Era2025, Stream: httpsession.StreamOff})
	require.NoError(t, err)
	defer s.Close()
	afterHandshake := conns.Load()

	for range 20 {
		ctx, cancel := context.WithCancel(context.Background())
		ctx = httpsession.WithExchange(ctx)
		released := make(chan struct{})
		_, err := s.ClientSession().CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
		require.NoError(t, err)
		httpsession.AfterAnswers(ctx, func() { cancel(); close(released) })
		<-released
	}
	require.Equal(t, int32(1), afterHandshake)
	require.Equal(t, afterHandshake, conns.Load(), "no call dialed a new connection")
}

// Without a slot, or with no stream open, AfterAnswers releases at once.
func TestAfterAnswersWithoutStreamReleasesAtOnce(t *testing.T) {
	for _, ctx := range []context.Context{context.Background(), httpsession.WithExchange(context.Background())} {
		var n int
		httpsession.AfterAnswers(ctx, func() { n++ })
		require.Equal(t, 1, n)
	}
}
