package mcptest_test

import (
	"context"
	"net/url"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/mcptest"
)

// A Port down refuses connections and ends those through it; up again, the
// same URL reaches the same server, whose session lived on.
func TestPortDownAndUp(t *testing.T) {
	ctx := context.Background()
	srv, err := mcptest.NewServer(mcptest.Options{})
	require.NoError(t, err)
	defer srv.Close()
	u, err := url.Parse(srv.URL())
	require.NoError(t, err)
	p, err := mcptest.NewPort(u.Host)
	require.NoError(t, err)
	defer p.Down()

	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: p.URL(srv.URL()), DisableStandaloneSSE: true},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	defer cs.Close()
	id := cs.ID()
	require.Positive(t, p.Dials())

	p.Down()
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: mcptest.RecordTool, Arguments: map[string]any{"id": "down"}})
	require.Error(t, err)
	require.Equal(t, 0, srv.Invocations(mcptest.RecordTool, "down"))

	require.NoError(t, p.Up())
	dials := p.Dials()
	cs2, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: p.URL(srv.URL()), DisableStandaloneSSE: true},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	defer cs2.Close()
	require.Greater(t, p.Dials(), dials)
	require.True(t, srv.KnownSession(id), "the server's sessions live on")
}
