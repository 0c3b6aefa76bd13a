package httpsession_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/httpsession"
	"github.com/mcpsup/mcpsup/mcptest"
)

// A tool call answered 429 by a proxy: the verdict carries the status and
// Retry-After that go-sdk reports only as -32005.
func ExampleAnnotate() {
	srv := mcp.NewServer(&mcp.Implementation{Name: "example", Version: "v1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo"}, func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	})
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"tools/call"`)) {
			w.Header().Set("Retry-After", "30")
			http.Error(w, "slow down", http.StatusTooManyRequests)
			return
		}
		mcpHandler.ServeHTTP(w, r)
	}))
	defer hs.Close()

	s, err := httpsession.Open(context.Background(), httpsession.Options{Endpoint: hs.URL, Era: httpsession.Era2025, Stream: httpsession.StreamOff})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()

	ctx := httpsession.WithExchange(context.Background())
	_, err = s.ClientSession().CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello"}})
	fmt.Println(classify.Classify(ctx, httpsession.Annotate(ctx, err)))
	// Output: rate-limited (HTTP 429, retry after 30s, tools/call)
}

// A StreamSwitch owns the standalone stream decision of one server: hand
// the same switch to every session so each inherits it. A decision
// persisted earlier is passed in and kept while it is younger than Memory.
func ExampleNewStreamSwitch() {
	clock := clockwork.NewFakeClock()
	sw := httpsession.NewStreamSwitch(httpsession.SwitchConfig{
		Mode:       httpsession.StreamAuto,
		Memory:     24 * time.Hour,
		Clock:      clock,
		Remembered: httpsession.StreamDecision{Off: true, Since: clock.Now().Add(-time.Hour)},
		OnStream:   func(d httpsession.StreamDecision) { fmt.Println("stream off:", d.Off) },
	})
	defer sw.Close()
	d := sw.Decision()
	fmt.Println("off:", d.Off, "for", d.Until.Sub(clock.Now()))
	// Sessions opened with httpsession.Options{Wire: httpsession.Config{Switch: sw}} hold
	// their stream until then.
	// Output:
	// off: true for 23h0m0s
}

// A host's own go-sdk client gets the wire facts on every request's error
// once it adds FactsMiddleware: here a gateway answers a tool call with an
// HTML 403, which the Transport keeps from ending the session.
func ExampleFactsMiddleware() {
	srv, err := mcptest.NewServer(mcptest.Options{})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	srv.Gateway().Add(mcptest.ToolCallForbiddenHTML())

	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "v1"}, nil)
	client.AddSendingMiddleware(httpsession.FactsMiddleware())
	s, err := httpsession.Open(context.Background(), httpsession.Options{Endpoint: srv.URL(), HTTPClient: srv.HTTPClient(), Client: client, Era: httpsession.Era2025, Stream: httpsession.StreamOff})
	if err != nil {
		panic(err)
	}
	defer s.Close()

	_, err = s.ClientSession().CallTool(context.Background(), &mcp.CallToolParams{Name: mcptest.RecordTool, Arguments: mcptest.IDArgs{ID: "a"}})
	var facts *classify.HTTPError
	fmt.Println(errors.As(err, &facts), facts.Status, facts.ContentType)
	fmt.Println(classify.Classify(context.Background(), err).Class)
	// Output:
	// true 403 text/html
	// forbidden
}

// The 2026-07-28 era has no ping; Session.Discover is its keepalive
// request. A server rolled back to 2025 answers it 400 -32022, which
// EraRefusal tells.
func ExampleSession_Discover() {
	srv, err := mcptest.NewServer(mcptest.Options{Mode: mcptest.Sessionless2026})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := httpsession.Open(ctx, httpsession.Options{Endpoint: srv.URL(), HTTPClient: srv.HTTPClient(), Era: httpsession.Era20260728})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	fmt.Println("protocol:", s.ProtocolVersion())
	fmt.Println("alive:", s.Discover(ctx) == nil)

	srv.Gateway().Add(mcptest.Rule{
		Match:  mcptest.Match{Verb: http.MethodPost, Method: "server/discover"},
		Action: mcptest.JSONRPCError(http.StatusBadRequest, mcptest.RequestID, httpsession.CodeUnsupportedProtocolVersion, "unsupported protocol version"),
	})
	rctx := httpsession.WithExchange(ctx)
	err = s.Discover(rctx)
	x, _ := httpsession.LastExchange(rctx)
	fmt.Println("refused:", err != nil, httpsession.EraRefusal(x))
	fmt.Println("discovers seen:", srv.Log().Count("server/discover"))
	// Output:
	// protocol: 2026-07-28
	// alive: true
	// refused: true true
	// discovers seen: 3
}
