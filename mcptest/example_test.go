package mcptest_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A host application tests how its MCP client handles a rate-limited tool
// call: the gateway answers the first tools/call with 429 and a non-JSON
// body (DESIGN.md, S4), and the test checks from the request log that the
// client neither reconnected nor replayed the call.
func Example() {
	srv, err := mcptest.NewServer(mcptest.Options{Tools: 2})
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	rule := mcptest.ToolCallRateLimited(30 * time.Second)
	rule.Match.Occurrence = mcptest.First()
	srv.Gateway().Add(rule)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1.0.0"}, nil)
	session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL(), HTTPClient: srv.HTTPClient()},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		panic(err)
	}
	defer session.Close()

	call := &mcp.CallToolParams{Name: mcptest.RecordTool, Arguments: mcptest.IDArgs{ID: "order-1"}}
	_, err = session.CallTool(ctx, call)
	fmt.Println("first call failed:", err != nil)
	_, err = session.CallTool(ctx, call)
	fmt.Println("second call failed:", err != nil)

	log := srv.Log()
	fmt.Println("initialize requests:", log.Count("initialize"))
	fmt.Println("tools/call requests:", log.Count("tools/call"))
	fmt.Println("tool ran:", srv.Invocations(mcptest.RecordTool, "order-1"))
	// Output:
	// first call failed: true
	// second call failed: false
	// initialize requests: 1
	// tools/call requests: 2
	// tool ran: 1
}

// Restart the server under a connected client: its session id becomes
// unknown and go-sdk's 404 ends the session; a new session works at the same
// URL.
func ExampleServer_Restart() {
	srv, err := mcptest.NewServer(mcptest.Options{})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	connect := func() *mcp.ClientSession {
		client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1.0.0"}, nil)
		s, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL(), HTTPClient: srv.HTTPClient()},
			&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			panic(err)
		}
		return s
	}
	old := connect()
	defer old.Close()

	if err := srv.Restart(); err != nil {
		panic(err)
	}
	_, err = old.ListTools(ctx, nil)
	fmt.Println("old session:", err != nil)
	fresh := connect()
	defer fresh.Close()
	res, err := fresh.ListTools(ctx, nil)
	fmt.Println("new session tools:", len(res.Tools), err)
	// Output:
	// old session: true
	// new session tools: 2 <nil>
}

// A gateway rule that answers the first standalone GET with raw SSE bytes
// (here a line without a colon and data that is not JSON-RPC), as a hostile
// server or gateway would, to test that a client survives them.
func ExampleHostileSSE() {
	srv, err := mcptest.NewServer(mcptest.Options{})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	srv.Gateway().Add(mcptest.HostileSSE([]byte("no colon here\n\ndata: <html>\n\n"), 0))

	req, _ := http.NewRequest(http.MethodGet, srv.URL(), nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := srv.HTTPClient().Do(req)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Printf("%d %s %q\n", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	// Output:
	// 200 text/event-stream "no colon here\n\ndata: <html>\n\n"
}

// A host tests that its client refuses another call's result: the gateway
// answers a tools/call with a response carrying a wrong id, in an event
// stream, and then lets the next call through.
func ExampleSSE() {
	srv, err := mcptest.NewServer(mcptest.Options{})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	srv.Gateway().Add(mcptest.Rule{
		Match:  mcptest.Match{Verb: "POST", Method: "tools/call", Occurrence: mcptest.First()},
		Action: mcptest.SSE(mcptest.SSEMessage(mcptest.BodyWrongID)...),
	})

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1.0.0"}, nil)
	session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL(), HTTPClient: srv.HTTPClient(), DisableStandaloneSSE: true},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		panic(err)
	}
	defer session.Close()

	call := &mcp.CallToolParams{Name: mcptest.RecordTool, Arguments: mcptest.IDArgs{ID: "a"}}
	_, err = session.CallTool(ctx, call)
	fmt.Println("first call failed:", err != nil)
	_, err = session.CallTool(ctx, call)
	fmt.Println("second call failed:", err != nil)
	fmt.Println("initialize requests:", srv.Log().Count("initialize"))
	// Output:
	// first call failed: true
	// second call failed: false
	// initialize requests: 1
}

// ResetAfterServer loses the answer of a call the server ran: a client
// cannot tell whether it ran, and only a tool annotated idempotentHint
// ([mcptest.IdempotentRecordTool]) is safe to send again.
func ExampleResetAfterServer() {
	srv, err := mcptest.NewServer(mcptest.Options{IdempotentRecord: true})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	srv.Gateway().Add(mcptest.Rule{
		Match:  mcptest.Match{Verb: http.MethodPost, Method: "tools/call", Occurrence: mcptest.First()},
		Action: mcptest.ResetAfterServer(),
	})

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1.0.0"}, nil)
	session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL(), HTTPClient: srv.HTTPClient()},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		panic(err)
	}
	defer session.Close()
	call := &mcp.CallToolParams{Name: mcptest.IdempotentRecordTool, Arguments: mcptest.IDArgs{ID: "x"}}
	_, err = session.CallTool(ctx, call)
	fmt.Println("answered:", err == nil)
	fmt.Println("ran at the server:", srv.Invocations(mcptest.IdempotentRecordTool, "x"))
	// Output:
	// answered: false
	// ran at the server: 1
}
