package bench

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/mcptest"
)

// PlainServer is a stateful go-sdk MCP server (streamable HTTP, default
// options) with one tool, mcptest.RecordTool, and no gateway, on
// 127.0.0.1: the lightest server for the per-call and per-connection
// figures, so mcpsup's cost is not hidden behind the fixture's. Its methods
// are safe for concurrent use.
type PlainServer struct {
	ts *httptest.Server
}

// NewPlainServer starts a PlainServer on a free port of 127.0.0.1; it
// returns the listener's error. Call Close when done.
func NewPlainServer() (*PlainServer, error) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "plain", Version: "0"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: mcptest.RecordTool, Description: "echoes its id"},
		func(_ context.Context, _ *mcp.CallToolRequest, in mcptest.IDArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.ID}}}, nil, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	ts := &httptest.Server{Listener: l, Config: &http.Server{Handler: h}}
	ts.Start()
	return &PlainServer{ts: ts}, nil
}

// URL is the MCP endpoint.
func (p *PlainServer) URL() string { return p.ts.URL }

// HTTPClient is a client for the server.
func (p *PlainServer) HTTPClient() *http.Client { return p.ts.Client() }

// Close drops every connection and stops the server.
func (p *PlainServer) Close() {
	p.ts.CloseClientConnections()
	p.ts.Close()
}
