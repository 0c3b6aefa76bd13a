package hub_test

import (
	"context"
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/hub"
	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/supervisor"
)

// Two servers with the same tool names, one merged catalog, a call routed
// by its qualified name.
func Example() {
	ctx := context.Background()
	a, _ := mcptest.NewServer(mcptest.Options{WithoutTools: true, Tools: 1})
	defer a.Close()
	b, _ := mcptest.NewServer(mcptest.Options{WithoutTools: true, Tools: 1})
	defer b.Close()

	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	h := hub.New(hub.Config{Supervisor: supervisor.Config{HTTP: supervisor.HTTPConfig{HTTPClient: &http.Client{Transport: tr}}}})
	defer h.Close()
	f, err := hub.ParseServers(fmt.Appendf(nil, `{"mcpServers": {"a": {"url": %q}, "b": {"url": %q}}}`, a.URL(), b.URL()))
	if err != nil {
		panic(err)
	}
	if err := h.AddServers(ctx, f); err != nil {
		panic(err)
	}
	if err := h.WaitReady(ctx, hub.All); err != nil {
		panic(err)
	}
	for _, t := range h.Tools() {
		fmt.Println(t.Name, "->", t.Server, t.ID)
	}
	res, err := h.CallTool(ctx, &mcp.CallToolParams{Name: "b__tool-1", Arguments: mcptest.EchoArgs{Text: "hi"}})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// a__tool-1 -> a tool-1
	// b__tool-1 -> b tool-1
	// tool-1: hi
}

// A name no model API accepts is shortened with a stable hash.
func ExampleValidName() {
	fmt.Println(hub.ValidName("search__find"), hub.ValidName("search.find"))
	// Output: true false
}

// An mcpServers file as Claude Desktop or Cursor writes it: a streamable
// HTTP server and a stdio one; the field the hub does not know is reported,
// not fatal.
func ExampleParseServers() {
	f, err := hub.ParseServers([]byte(`{"mcpServers": {
		"search": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer …"}, "alwaysAllow": ["find"]},
		"files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]}
	}}`))
	if err != nil {
		panic(err)
	}
	for _, sc := range f.Servers {
		if sc.Command != "" {
			fmt.Println("start", sc.Name, sc.Command, sc.Args)
		} else {
			fmt.Println("connect", sc.Name, sc.URL)
		}
	}
	for _, w := range f.Warnings {
		fmt.Println(w)
	}
	// Output:
	// start files npx [-y @modelcontextprotocol/server-filesystem /tmp]
	// connect search https://example.com/mcp
	// server "search" field "alwaysAllow": unknown field, kept
}
