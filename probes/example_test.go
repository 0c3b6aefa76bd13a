package probes_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/probes"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// staticLister answers tools/list with two tools and every other list with
// go-sdk's error for an HTTP 400 whose body is JSON-RPC -32601, as a server
// that implements only tools does (failure story S1).
type staticLister struct{}

func notFound(method string) error {
	return fmt.Errorf("calling %q: sending %q: %w: %w: Bad Request", method, method,
		&jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found"},
		&jsonrpc.Error{Code: -32005, Message: "rejected by transport"})
}

func (staticLister) ListTools(context.Context, string) ([]*mcp.Tool, string, error) {
	return []*mcp.Tool{{Name: "search"}, {Name: "fetch"}}, "", nil
}
func (staticLister) ListResources(context.Context, string) ([]*mcp.Resource, string, error) {
	return nil, "", notFound("resources/list")
}
func (staticLister) ListPrompts(context.Context, string) ([]*mcp.Prompt, string, error) {
	return nil, "", notFound("prompts/list")
}
func (staticLister) ListResourceTemplates(context.Context, string) ([]*mcp.ResourceTemplate, string, error) {
	return nil, "", notFound("resources/templates/list")
}

func ExampleProbeBlind() {
	// With a live session: probes.ProbeBlind(ctx, probes.SessionLister(cs), probes.Options{}).
	cat, err := probes.ProbeBlind(context.Background(), staticLister{}, probes.Options{})
	var le *probes.ListError
	if errors.As(err, &le) {
		// tools/list failed: le.Verdict.Class chooses stale recovery or failure.
		fmt.Println("discovery failed:", le.Verdict.Class == classify.Unauthorized)
		return
	}
	for _, l := range probes.Lists() {
		fmt.Println(cat.Report.Get(l))
	}
	fmt.Println("tools:", cat.Tools[0].Name, cat.Tools[1].Name)
	// Output:
	// tools: present (listed, 2 items)
	// resources: absent (method not found: method-not-found (JSON-RPC -32601))
	// prompts: absent (method not found: method-not-found (JSON-RPC -32601))
	// resource-templates: absent (method not found: method-not-found (JSON-RPC -32601))
	// tools: search fetch
}

func ExampleListDeclared() {
	caps := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}, Prompts: &mcp.PromptCapabilities{}}
	cat, err := probes.ListDeclared(context.Background(), staticLister{}, caps, probes.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(cat.Tools), "tools")
	fmt.Println(cat.Report.Get(probes.Resources))
	fmt.Println(cat.Report.Get(probes.Prompts).Warning)
	// Output:
	// 2 tools
	// resources: absent (not declared)
	// declared in the server's capabilities but prompts/list answered -32601 (Method not found)
}

// A re-list after notifications/prompts/list_changed sends only prompts/list.
func ExampleListOnly() {
	cat, err := probes.ListOnly(context.Background(), staticLister{}, []probes.List{probes.Prompts}, probes.Options{})
	fmt.Println("error:", err)
	fmt.Println(cat.Report.Get(probes.Tools))
	fmt.Println(cat.Report.Get(probes.Prompts))
	// Output:
	// error: <nil>
	// tools: absent (not declared)
	// prompts: absent (method not found: method-not-found (JSON-RPC -32601))
}
