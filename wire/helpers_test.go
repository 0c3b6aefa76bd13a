package wire_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// logged is one request the gateway saw.
type logged struct {
	Verb, Method, SessionID, ProtocolVersion string
}

// faultFunc may answer a request in the server's place; it reports whether
// it did. n counts earlier requests with the same verb and method.
type faultFunc func(w http.ResponseWriter, r *http.Request, method string, n int) bool

// gateway is a small fault-injecting http.Handler in front of a real go-sdk
// server. It logs every request.
type gateway struct {
	next  http.Handler
	mu    sync.Mutex
	log   []logged
	seen  map[string]int
	fault faultFunc
}

func (g *gateway) setFault(f faultFunc) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.fault = f
}

func (g *gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var method string
	if r.Method == http.MethodPost {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var m struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(body, &m)
		method = m.Method
	}
	g.mu.Lock()
	g.log = append(g.log, logged{r.Method, method, r.Header.Get("Mcp-Session-Id"), r.Header.Get("Mcp-Protocol-Version")})
	if g.seen == nil {
		g.seen = map[string]int{}
	}
	key := r.Method + " " + method
	n := g.seen[key]
	g.seen[key]++
	f := g.fault
	g.mu.Unlock()
	if f != nil && f(w, r, method, n) {
		return
	}
	g.next.ServeHTTP(w, r)
}

// requests returns a copy of the log.
func (g *gateway) requests() []logged {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]logged(nil), g.log...)
}

// count returns how many requests had this verb and JSON-RPC method.
func (g *gateway) count(verb, method string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.seen[verb+" "+method]
}

type echoIn struct {
	Text string `json:"text"`
}

// newServer starts a real go-sdk MCP server (a tool "echo" and a prompt
// "greet") behind a gateway on 127.0.0.1.
func newServer(t testing.TB, opts *mcp.StreamableHTTPOptions) (*gateway, string) {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "test-server", Version: "v1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "echoes"}, func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	srv.AddPrompt(&mcp.Prompt{Name: "greet"}, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}}, nil
	})
	g := &gateway{next: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, opts)}
	hs := httptest.NewServer(g)
	t.Cleanup(func() {
		hs.Close()
		// Sessions a test detached from stay open on the server until closed.
		for ss := range srv.Sessions() {
			_ = ss.Close()
		}
	})
	return g, hs.URL
}

// callEcho calls the echo tool and requires success.
func callEcho(t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
	require.NoError(t, err)
	require.False(t, res.IsError)
}

// writeFault writes a canned answer.
func writeFault(w http.ResponseWriter, status int, contentType, body string, header map[string]string) {
	for k, v := range header {
		w.Header().Set(k, v)
	}
	if contentType != "" {
		w.Header().Set("Content-Type", contentType)
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}
