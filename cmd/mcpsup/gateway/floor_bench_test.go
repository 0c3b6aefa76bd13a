package gateway_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/hub"
)

// BenchmarkCallTwoHops is the floor of any gateway built on go-sdk: a go-sdk
// streamable server whose tool forwards each call through one go-sdk client
// session to the same upstream (no supervisor, no hub).
func BenchmarkCallTwoHops(b *testing.B) {
	upstream := connect(b, echoServer(b))
	s := mcp.NewServer(&mcp.Implementation{Name: "proxy", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return upstream.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: req.Params.Arguments})
		})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	b.Cleanup(srv.Close)
	benchCalls(b, connect(b, srv.URL), "echo")
}

// BenchmarkCallHub: the hub's routed call (hub, supervisor, mcpsup's HTTP
// session) to the same server, without the gateway's downstream hop.
func BenchmarkCallHub(b *testing.B) {
	up := echoServer(b)
	h := hub.New(hub.Config{})
	b.Cleanup(func() { _ = h.Close() })
	ctx := context.Background()
	require.NoError(b, h.Add(ctx, hub.ServerConfig{Name: "e", URL: up}))
	require.NoError(b, h.WaitReady(ctx, hub.All))
	benchFunc(b, func() error {
		_, err := h.CallTool(ctx, &mcp.CallToolParams{Name: "e__echo", Arguments: map[string]any{"text": "hello"}})
		return err
	})
}
