package msgcheck_test

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/msgcheck"
)

// Response applies each rule in turn to one decoded response: a ttlMs
// go-sdk cannot decode (SEP-2549, Cacheable), a tool whose x-mcp-header is
// not statically reachable (2026-07-28 streamable-http.mdx, Schema
// Extension: "Clients MUST reject tool definitions where any x-mcp-header
// value violates these constraints"), an input_required result on a method
// that takes none (mrtr.mdx: "Servers MUST NOT send InputRequiredResult
// responses on any other client requests").
func TestCheckerResponse(t *testing.T) {
	var c msgcheck.Checker // the zero value checks, logging nothing
	list := msgcheck.Request{Method: "tools/list", ProtocolVersion: "2026-07-28"}
	r := &jsonrpc.Response{Result: []byte(`{"tools":[{"name":"ok","inputSchema":{"type":"object"}},` +
		`{"name":"bad","inputSchema":{"type":"object","items":{"x-mcp-header":"X"}}}],"ttlMs":1.5}`)}
	problem, changed := c.Response(list, r)
	require.Empty(t, problem)
	require.True(t, changed)
	require.JSONEq(t, `{"tools":[{"name":"ok","inputSchema":{"type":"object"}}],"ttlMs":1}`, string(r.Result))

	old := msgcheck.Request{Method: "tools/list", ProtocolVersion: "2025-11-25"}
	r = &jsonrpc.Response{Result: []byte(`{"tools":[{"name":"bad","inputSchema":{"type":"object","items":{"x-mcp-header":"X"}}}]}`)}
	problem, changed = c.Response(old, r)
	require.Empty(t, problem)
	require.False(t, changed, "a 2025-era request has no x-mcp-header rules")

	r = &jsonrpc.Response{Result: []byte(`{"tools":[],"resultType":"input_required","requestState":"s"}`)}
	problem, changed = c.Response(list, r)
	require.Equal(t, `resultType "input_required" answers tools/list, which takes no input_required result`, problem)
	require.False(t, changed)

	r = &jsonrpc.Response{Error: &jsonrpc.Error{Code: -32603, Message: "x"}}
	problem, changed = c.Response(list, r)
	require.Empty(t, problem)
	require.False(t, changed)
}
