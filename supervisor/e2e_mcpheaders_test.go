package supervisor_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/supervisor"
)

// addRawTool adds a tool whose inputSchema is schema (JSON) to srv.
func addRawTool(srv *mcp.Server, name, schema string) {
	srv.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(schema)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name}}}, nil
	})
}

// catalogNames returns the names of the tools in sup's catalog, sorted.
func catalogNames(sup *supervisor.Supervisor) []string {
	var names []string
	for _, tl := range sup.Catalog().Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	return names
}

// streamable-http.mdx, Schema Extension: an x-mcp-header "MUST only be
// applied to properties that are statically reachable from the schema
// root ... The chain MUST NOT pass through items (or any other array
// keyword), composition keywords (oneOf, anyOf, allOf, not) ...", and
// clients "MUST exclude the invalid tool from the result of tools/list".
// go-sdk v1.8.0 checks only the chain of properties, so the tools with an
// annotation under items or anyOf stayed in the catalog. Served by a go-sdk
// 2026-07-28 server.
func TestE2EUnreachableHeaderAnnotationExcludesTheTool(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "h", Version: "1"}, nil)
	addRawTool(srv, "ok", `{"type":"object","properties":{"q":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}}}`)
	addRawTool(srv, "plain", `{"type":"object","properties":{"a":{"type":"string"}}}`)
	addRawTool(srv, "in-items", `{"type":"object","properties":{"l":{"type":"array","items":{"type":"string","x-mcp-header":"Item"}}}}`)
	addRawTool(srv, "in-anyof", `{"type":"object","properties":{"u":{"anyOf":[{"type":"string","x-mcp-header":"U"}]}}}`)
	addRawTool(srv, "at-root", `{"type":"object","x-mcp-header":"Root","properties":{}}`)
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(ts.Close)

	sup, ctx := readyOn(t, ts, mcp.ClientOptions{})
	require.Equal(t, "2026-07-28", sup.ResumeState().ProtocolVersion)
	require.Equal(t, []string{"ok", "plain"}, catalogNames(sup))
	_, err := sup.CallTool(ctx, &mcp.CallToolParams{Name: "in-items"})
	require.ErrorIs(t, err, supervisor.ErrUnknownTool, "an excluded tool is not called")
}

// streamable-http.mdx, Schema Extension: "An x-mcp-header annotation
// anywhere else makes the annotation — and thus the tool definition —
// invalid ... the client MUST exclude the invalid tool from the result of
// tools/list". A sub-schema under $defs, definitions or patternProperties
// named default, enum or const is a schema, not data: its tool stayed in
// the catalog. Served by a go-sdk 2026-07-28 server.
func TestE2EHeaderAnnotationInANamedSubschemaExcludesTheTool(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "h", Version: "1"}, nil)
	addRawTool(srv, "plain", `{"type":"object","properties":{"a":{"type":"string"}}}`)
	addRawTool(srv, "prop-named-default", `{"type":"object","properties":{"default":{"type":"string","x-mcp-header":"D"}}}`)
	addRawTool(srv, "defs-default", `{"type":"object","$defs":{"default":{"type":"string","x-mcp-header":"H1"}}}`)
	addRawTool(srv, "definitions-enum", `{"type":"object","definitions":{"enum":{"type":"string","x-mcp-header":"H2"}}}`)
	addRawTool(srv, "patternproperties-const", `{"type":"object","patternProperties":{"const":{"type":"string","x-mcp-header":"H3"}}}`)
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(ts.Close)

	sup, ctx := readyOn(t, ts, mcp.ClientOptions{})
	require.Equal(t, "2026-07-28", sup.ResumeState().ProtocolVersion)
	require.Equal(t, []string{"plain", "prop-named-default"}, catalogNames(sup))
	_, err := sup.CallTool(ctx, &mcp.CallToolParams{Name: "defs-default"})
	require.ErrorIs(t, err, supervisor.ErrUnknownTool, "an excluded tool is not called")
}

// streamable-http.mdx, Standard Request Headers: "If the Mcp-Name source
// value cannot be safely represented as a plain ASCII header value,
// clients MUST encode it using the Base64 sentinel format"; Value Encoding:
// a plain-ASCII value matching the sentinel is encoded too. go-sdk v1.8.0
// sent the name raw. The server here decodes the header before go-sdk's
// handler compares it with the body, as the spec requires of servers
// (go-sdk v1.8.0's compares the raw header).
func TestE2EMcpNameIsBase64WhenNotPlainASCII(t *testing.T) {
	names := []string{"café", " padded", "=?base64?x?=", "plain-name"}
	srv := mcp.NewServer(&mcp.Implementation{Name: "n", Version: "1"}, nil)
	for _, n := range names {
		addRawTool(srv, n, `{"type":"object"}`)
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	var mu sync.Mutex
	var sent []string // the Mcp-Name of each tools/call
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") == "tools/call" {
			v := r.Header.Get("Mcp-Name")
			mu.Lock()
			sent = append(sent, v)
			mu.Unlock()
			if s, ok := strings.CutPrefix(v, "=?base64?"); ok && strings.HasSuffix(s, "?=") {
				if b, err := base64.StdEncoding.DecodeString(strings.TrimSuffix(s, "?=")); err == nil {
					r.Header.Set("Mcp-Name", string(b))
				}
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)

	sup, ctx := readyOn(t, ts, mcp.ClientOptions{})
	for _, n := range names {
		res, err := sup.CallTool(ctx, &mcp.CallToolParams{Name: n})
		require.NoError(t, err, n)
		require.Equal(t, n, res.Content[0].(*mcp.TextContent).Text)
	}
	b64 := func(s string) string { return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?=" }
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []string{b64("café"), b64(" padded"), b64("=?base64?x?="), "plain-name"}, sent)
}

// streamable-http.mdx, Client Behavior: after a HeaderMismatch (400,
// -32020) "because required Mcp-Param-* headers are missing or do not match
// the body, the client SHOULD call tools/list to check for changes to the
// tool's inputSchema". The server here annotated its tool's parameter after
// the catalog was listed, without a notification: the first call lacks the
// header and is refused; the re-list it causes brings the annotation, and
// the next call carries the header. Before, no re-list followed and every
// call failed alike.
func TestE2EHeaderMismatchRelistsTheCatalog(t *testing.T) {
	const schema = `{"type":"object","properties":{"region":{"type":"string"%s}}}`
	before := mcp.NewServer(&mcp.Implementation{Name: "m", Version: "1"}, nil)
	addRawTool(before, "t", strings.Replace(schema, "%s", "", 1))
	after := mcp.NewServer(&mcp.Implementation{Name: "m", Version: "1"}, nil)
	addRawTool(after, "t", strings.Replace(schema, "%s", `,"x-mcp-header":"Region"`, 1))
	var annotated atomic.Bool
	var lists atomic.Int64
	var mu sync.Mutex
	var regions []string // the Mcp-Param-Region of each tools/call
	opts := &mcp.StreamableHTTPOptions{Stateless: true}
	hBefore := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return before }, opts)
	hAfter := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return after }, opts)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Header.Get("Mcp-Method") {
		case "tools/list":
			lists.Add(1)
		case "tools/call":
			mu.Lock()
			regions = append(regions, r.Header.Get("Mcp-Param-Region"))
			mu.Unlock()
		}
		if annotated.Load() {
			hAfter.ServeHTTP(w, r)
			return
		}
		hBefore.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)

	sup, ctx := readyOn(t, ts, mcp.ClientOptions{})
	require.Equal(t, int64(1), lists.Load())
	annotated.Store(true)
	args := map[string]any{"region": "us-west1"}
	_, err := sup.CallTool(ctx, &mcp.CallToolParams{Name: "t", Arguments: args})
	var ce *supervisor.CallError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, 400, ce.Verdict.HTTPStatus)
	require.Equal(t, int64(-32020), ce.Verdict.RPC.Code, "%v", err)
	require.Equal(t, classify.Application, ce.Verdict.Class)

	require.Eventually(t, func() bool {
		tools := sup.Catalog().Tools
		if len(tools) != 1 {
			return false
		}
		b, _ := json.Marshal(tools[0].InputSchema)
		return strings.Contains(string(b), "x-mcp-header")
	}, e2eTimeout, 5*time.Millisecond, "the re-listed catalog holds the annotation")
	require.Equal(t, int64(2), lists.Load(), "one re-list")
	res, err := sup.CallTool(ctx, &mcp.CallToolParams{Name: "t", Arguments: args})
	require.NoError(t, err)
	require.Equal(t, "t", res.Content[0].(*mcp.TextContent).Text)
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []string{"", "us-west1"}, regions)
}
