package e2etest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MRTRState is the requestState the "mrtr" server's first round hands out
// and its second round must get back unchanged (MCP 2026-07-28,
// basic/patterns/mrtr.mdx: the client "MUST echo back the exact value").
const MRTRState = "opaque+state/1=="

// MRTRShedState is the requestState of the "mrtr" server's tool "shed":
// its first round asks for nothing (an input_required result with this
// state alone), a round that carries it is served.
const MRTRShedState = "shed/1"

// MRTR is a 2026-07-28 go-sdk server (stateless streamable HTTP) whose tool
// "ask", prompt "greet" and resource "mrtr://doc" ask for the caller's name by multi round-trip:
// the first round answers input_required with an elicitation/create keyed
// "name" and the requestState MRTRState; a round that carries MRTRState and
// an accepted answer is answered "hello <name>"; any other round is
// answered input_required again. Its tool "shed" sheds load once (see
// MRTRShedState).
type MRTR struct {
	URL string

	mu     sync.Mutex
	rounds []MRTRRound
}

// MRTRRound is one request the "mrtr" server got.
type MRTRRound struct {
	Method       string
	RequestState string
	Name         string // the "name" input response's accepted content, "" when none
}

// Rounds returns the requests the server got, in order.
func (m *MRTR) Rounds() []MRTRRound {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]MRTRRound(nil), m.rounds...)
}

func newMRTR(t *testing.T) *MRTR {
	t.Helper()
	m := &MRTR{}
	srv := mcp.NewServer(&mcp.Implementation{Name: "mrtr", Version: "1"}, nil)
	ask := &mcp.ElicitParams{
		Message:         "your name?",
		RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}},
	}
	srv.AddTool(&mcp.Tool{Name: "ask", InputSchema: map[string]any{"type": "object"}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if name, ok := m.round("tools/call", req.Params.RequestState, req.Params.InputResponses); ok {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello " + name}}}, nil
			}
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"name": ask}, RequestState: MRTRState}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "shed", InputSchema: map[string]any{"type": "object"}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			m.round("tools/call", req.Params.RequestState, nil)
			if req.Params.RequestState != MRTRShedState {
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{}, RequestState: MRTRShedState}, nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "served"}}}, nil
		})
	srv.AddPrompt(&mcp.Prompt{Name: "greet"},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			if name, ok := m.round("prompts/get", req.Params.RequestState, req.Params.InputResponses); ok {
				return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hello " + name}}}}, nil
			}
			return &mcp.GetPromptResult{InputRequests: mcp.InputRequestMap{"name": ask}, RequestState: MRTRState}, nil
		})
	srv.AddResource(&mcp.Resource{Name: "doc", URI: "mrtr://doc"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			if name, ok := m.round("resources/read", req.Params.RequestState, req.Params.InputResponses); ok {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "hello " + name}}}, nil
			}
			return &mcp.ReadResourceResult{InputRequests: mcp.InputRequestMap{"name": ask}, RequestState: MRTRState}, nil
		})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(ts.Close)
	m.URL = ts.URL
	return m
}

// round records a request and says whether it completes: it carries
// MRTRState and an accepted "name".
func (m *MRTR) round(method, state string, responses mcp.InputResponseMap) (string, bool) {
	name := ""
	if r, ok := responses["name"].(*mcp.ElicitResult); ok && r.Action == "accept" {
		name, _ = r.Content["name"].(string)
	}
	m.mu.Lock()
	m.rounds = append(m.rounds, MRTRRound{Method: method, RequestState: state, Name: name})
	m.mu.Unlock()
	return name, state == MRTRState && name != ""
}
