package probes

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"testing"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// catalogSize is what a test server offers.
type catalogSize struct{ tools, resources, templates, prompts int }

// realServer is a go-sdk MCP server over streamable HTTP on 127.0.0.1 that
// counts the requests reaching it by method.
type realServer struct {
	url    string
	mu     sync.Mutex
	counts map[string]int
}

func (s *realServer) count(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[method]
}

// startServer starts a server offering size, pageSize items per page.
// missing lists answer JSON-RPC -32601 (Method not found), as a server that
// does not implement them. wrap, if set, sits in front of the handler.
func startServer(t *testing.T, size catalogSize, pageSize int, missing []string, wrap func(http.Handler) http.Handler) *realServer {
	t.Helper()
	rs := &realServer{counts: map[string]int{}}
	srv := mcp.NewServer(&mcp.Implementation{Name: "probes-test", Version: "1"}, &mcp.ServerOptions{PageSize: pageSize})
	for i := range size.tools {
		mcp.AddTool(srv, &mcp.Tool{Name: fmt.Sprintf("tool-%02d", i)}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{}, nil, nil
		})
	}
	read := func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{}, nil
	}
	for i := range size.resources {
		srv.AddResource(&mcp.Resource{Name: fmt.Sprintf("r%d", i), URI: fmt.Sprintf("file:///r%02d", i)}, read)
	}
	for i := range size.templates {
		srv.AddResourceTemplate(&mcp.ResourceTemplate{Name: fmt.Sprintf("t%d", i), URITemplate: fmt.Sprintf("file:///t%02d/{x}", i)}, read)
	}
	for i := range size.prompts {
		srv.AddPrompt(&mcp.Prompt{Name: fmt.Sprintf("prompt-%02d", i)}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{}, nil
		})
	}
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			rs.mu.Lock()
			rs.counts[method]++
			rs.mu.Unlock()
			for _, m := range missing {
				if m == method {
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found"}
				}
			}
			return next(ctx, method, req)
		}
	})
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	if wrap != nil {
		h = wrap(h)
	}
	ts := httptest.NewServer(h) // 127.0.0.1
	t.Cleanup(ts.Close)
	rs.url = ts.URL
	return rs
}

func connect(t *testing.T, url string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "probes-test-client", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func toolNames(ts []*mcp.Tool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	sort.Strings(out)
	return out
}

func TestRealServerFullCatalogPaginated(t *testing.T) {
	size := catalogSize{tools: 5, resources: 3, templates: 2, prompts: 4}
	srv := startServer(t, size, 2, nil, nil)
	cs := connect(t, srv.url)
	caps := cs.InitializeResult().Capabilities
	require.NotNil(t, caps.Tools)
	require.NotNil(t, caps.Resources)
	require.NotNil(t, caps.Prompts)

	for _, mode := range []Mode{Declared, Blind} {
		t.Run(mode.String(), func(t *testing.T) {
			before := map[string]int{}
			for _, l := range Lists() {
				before[l.Method()] = srv.count(l.Method())
			}
			var cat Catalog
			var err error
			if mode == Declared {
				cat, err = ListDeclared(t.Context(), SessionLister(cs), caps, Options{})
			} else {
				cat, err = ProbeBlind(t.Context(), SessionLister(cs), Options{})
			}
			require.NoError(t, err)

			assert.Equal(t, []string{"tool-00", "tool-01", "tool-02", "tool-03", "tool-04"}, toolNames(cat.Tools))
			assert.Len(t, cat.Resources, 3)
			assert.Len(t, cat.ResourceTemplates, 2)
			assert.Len(t, cat.Prompts, 4)
			// Pages of 2: ceil(n/2) requests per list reached the server.
			wantPages := map[List]int{Tools: 3, Resources: 2, ResourceTemplates: 1, Prompts: 2}
			for l, n := range wantPages {
				assert.Equal(t, n, srv.count(l.Method())-before[l.Method()], l)
				assert.Equal(t, n, cat.Report.Get(l).Pages, l)
				assert.Equal(t, Present, cat.Report.Get(l).Status, l)
			}
		})
	}
}

// A go-sdk server declares only what it has, and ListDeclared sends nothing
// else. Probed blind, go-sdk v1.8.0 answers an undeclared list with an empty
// page rather than -32601.
func TestRealServerToolsOnly(t *testing.T) {
	srv := startServer(t, catalogSize{tools: 2}, 0, nil, nil)
	cs := connect(t, srv.url)
	caps := cs.InitializeResult().Capabilities
	require.NotNil(t, caps.Tools)
	require.Nil(t, caps.Prompts)
	require.Nil(t, caps.Resources)

	cat, err := ListDeclared(t.Context(), SessionLister(cs), caps, Options{})
	require.NoError(t, err)
	assert.Len(t, cat.Tools, 2)
	for _, l := range []List{Resources, Prompts, ResourceTemplates} {
		assert.Equal(t, NotDeclared, cat.Report.Get(l).Reason, l)
		assert.Zero(t, srv.count(l.Method()), "%s reached the server", l)
	}
	assert.Equal(t, 1, srv.count("tools/list"))

	cat, err = ProbeBlind(t.Context(), SessionLister(cs), Options{})
	require.NoError(t, err)
	assert.Len(t, cat.Tools, 2)
	for _, l := range []List{Resources, Prompts, ResourceTemplates} {
		r := cat.Report.Get(l)
		assert.Equal(t, Present, r.Status, "go-sdk answers undeclared %s with a page", l)
		assert.Zero(t, r.Items, l)
		assert.Equal(t, 1, srv.count(l.Method()), l)
	}
}

// A server that does not implement prompts and templates answers -32601 in a
// 200 response; go-sdk returns it as *jsonrpc.Error and the session lives.
func TestRealServerMethodNotFound(t *testing.T) {
	srv := startServer(t, catalogSize{tools: 3, resources: 1}, 0, []string{"prompts/list", "resources/templates/list"}, nil)
	cs := connect(t, srv.url)

	var seen []error
	var mu sync.Mutex
	record := func(_ context.Context, _ List, err error) error {
		mu.Lock()
		seen = append(seen, err)
		mu.Unlock()
		return err
	}
	cat, err := ProbeBlind(t.Context(), annotated{SessionLister(cs), record}, Options{})
	require.NoError(t, err)

	assert.Len(t, cat.Tools, 3)
	assert.Len(t, cat.Resources, 1)
	for _, l := range []List{Prompts, ResourceTemplates} {
		r := cat.Report.Get(l)
		assert.Equal(t, Absent, r.Status, l)
		assert.Equal(t, classify.MethodNotFound, r.Verdict.Class, l)
		assert.Equal(t, 1, srv.count(l.Method()), l)
	}
	require.Len(t, seen, 2)
	for _, e := range seen {
		var je *jsonrpc.Error
		require.ErrorAs(t, e, &je)
		assert.EqualValues(t, jsonrpc.CodeMethodNotFound, je.Code)
	}

	// Declared: the server claims prompts but answers -32601: a warning.
	caps := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}, Prompts: &mcp.PromptCapabilities{}}
	cat, err = ListDeclared(t.Context(), SessionLister(cs), caps, Options{})
	require.NoError(t, err)
	assert.Len(t, cat.Tools, 3)
	assert.NotEmpty(t, cat.Report.Get(Prompts).Warning)

	_, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "tool-00"})
	assert.NoError(t, err, "the session survived")
}

// Failure story S1 on the wire: the server answers the templates probe with
// HTTP 400 and a JSON-RPC -32601 body carrying the request's id.
func TestRealServerS1Templates400(t *testing.T) {
	reject400 := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				body, _ := io.ReadAll(r.Body)
				r.Body = io.NopCloser(bytes.NewReader(body))
				var msg struct {
					ID     json.RawMessage `json:"id"`
					Method string          `json:"method"`
				}
				if json.Unmarshal(body, &msg) == nil && msg.Method == "resources/templates/list" {
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(http.StatusBadRequest)
					fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`, msg.ID)
					return
				}
			}
			next.ServeHTTP(w, r)
		})
	}
	srv := startServer(t, catalogSize{tools: 4, resources: 2, prompts: 1}, 0, nil, reject400)
	cs := connect(t, srv.url)

	var got error
	cat, err := ProbeBlind(t.Context(), annotated{SessionLister(cs), func(_ context.Context, _ List, err error) error {
		got = err // only templates fails
		return err
	}}, Options{})
	require.NoError(t, err)

	assert.Len(t, cat.Tools, 4)
	assert.Len(t, cat.Resources, 2)
	assert.Len(t, cat.Prompts, 1)
	r := cat.Report.Get(ResourceTemplates)
	assert.Equal(t, Absent, r.Status)
	assert.Equal(t, MethodNotFound, r.Reason)
	require.Error(t, got)
	var je *jsonrpc.Error
	require.ErrorAs(t, got, &je)
	assert.EqualValues(t, -32601, je.Code)
	t.Logf("go-sdk error: %v", got)

	again, err := ListDeclared(t.Context(), SessionLister(cs), &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}, Options{})
	require.NoError(t, err, "the session survived the 400")
	assert.Len(t, again.Tools, 4)
}

// TestFirstPageSendsNoParams pins what a list request carries: the first
// page none ("params" absent), a later page only its cursor.
func TestFirstPageSendsNoParams(t *testing.T) {
	var mu sync.Mutex
	params := map[string][]string{} // method -> raw params of each request, "" when absent
	record := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				body, _ := io.ReadAll(r.Body)
				r.Body = io.NopCloser(bytes.NewReader(body))
				var msg struct {
					Method string          `json:"method"`
					Params json.RawMessage `json:"params"`
				}
				if json.Unmarshal(body, &msg) == nil && msg.Method != "" {
					mu.Lock()
					params[msg.Method] = append(params[msg.Method], string(msg.Params))
					mu.Unlock()
				}
			}
			next.ServeHTTP(w, r)
		})
	}
	srv := startServer(t, catalogSize{tools: 3, resources: 1, templates: 1, prompts: 1}, 2, nil, record)
	cs := connect(t, srv.url)
	_, err := ProbeBlind(t.Context(), SessionLister(cs), Options{})
	require.NoError(t, err)

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, params["tools/list"], 2, "two pages of tools")
	assert.Empty(t, params["tools/list"][0], "first page")
	assert.JSONEq(t, `{"cursor":"`+cursorOf(t, params["tools/list"][1])+`"}`, params["tools/list"][1])
	for _, m := range []string{"resources/list", "resources/templates/list", "prompts/list"} {
		assert.Equal(t, []string{""}, params[m], m)
	}
}

func cursorOf(t *testing.T, raw string) string {
	t.Helper()
	var p struct{ Cursor string }
	require.NoError(t, json.Unmarshal([]byte(raw), &p))
	require.NotEmpty(t, p.Cursor)
	return p.Cursor
}
