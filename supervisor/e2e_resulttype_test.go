package supervisor_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/supervisor"
)

// resultServer is a go-sdk server (stateless: 2026-07-28; else 2025-11-25)
// with one tool "t", whose tools/call answers are result, written in place
// of the server's as a JSON body for the call's id, when result is not
// empty. It counts the tools/call requests it receives.
func resultServer(t *testing.T, stateless bool, result string) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "rt", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "t"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: stateless})
	var calls atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(body, &msg) == nil && msg.Method == "tools/call" {
			calls.Add(1)
			if result != "" {
				w.Header().Set("Content-Type", "application/json")
				if sid := r.Header.Get("Mcp-Session-Id"); sid != "" {
					w.Header().Set("Mcp-Session-Id", sid)
				}
				_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(msg.ID) + `,"result":` + result + `}`))
				return
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts, &calls
}

// readyOn starts a supervisor on ts with opts and waits until it is ready.
func readyOn(t *testing.T, ts *httptest.Server, opts mcp.ClientOptions) (*supervisor.Supervisor, context.Context) {
	t.Helper()
	sup := mustNew(t, supervisor.Config{Endpoint: ts.URL, HTTP: supervisor.HTTPConfig{HTTPClient: ts.Client()}, Client: supervisor.ClientConfig{ClientOptions: opts}})
	sup.Start()
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	t.Cleanup(cancel)
	require.NoError(t, sup.WaitForState(ctx, supervisor.Ready))
	return sup, ctx
}

// changelog.mdx (2026-07-28) item 8: every result carries resultType,
// "complete" or "input_required". One with any other value is invalid: the
// call fails as a protocol error naming the field, once, and the session
// serves on.
func TestE2EUnknownResultTypeIsAProtocolError(t *testing.T) {
	ts, calls := resultServer(t, true, `{"resultType":"bogus","content":[{"type":"text","text":"x"}]}`)
	sup, ctx := readyOn(t, ts, mcp.ClientOptions{})
	_, err := sup.CallTool(ctx, &mcp.CallToolParams{Name: "t"})
	var ce *supervisor.CallError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, classify.Protocol, ce.Verdict.Class, "%v", err)
	var he *classify.HTTPError
	require.ErrorAs(t, err, &he)
	require.Equal(t, `resultType "bogus" is neither "complete" nor "input_required"`, he.Problem)
	require.Equal(t, int64(1), calls.Load())
	require.Equal(t, supervisor.Ready, sup.State())
}

// changelog.mdx item 8: "Clients MUST treat results from earlier-protocol
// servers that omit the field as "complete"". A 2025-11-25 result without
// resultType that carries inputRequests (roots/list, which go-sdk always
// fulfils) is the call's answer: go-sdk's multi round-trip middleware sent
// the same tools/call ten times for it.
func TestE2EResultWithoutResultTypeIsComplete(t *testing.T) {
	ts, calls := resultServer(t, false,
		`{"content":[{"type":"text","text":"done"}],"inputRequests":{"r":{"method":"roots/list","params":{}}},"requestState":"s"}`)
	sup, ctx := readyOn(t, ts, mcp.ClientOptions{})
	require.Equal(t, "2025-11-25", sup.ResumeState().ProtocolVersion)
	res, err := sup.CallTool(ctx, &mcp.CallToolParams{Name: "t"})
	require.NoError(t, err)
	require.Equal(t, "done", res.Content[0].(*mcp.TextContent).Text)
	require.Equal(t, int64(1), calls.Load(), "one tools/call: no replay")
}

// elicitServer is a 2026-07-28 go-sdk server whose tool "ask" asks the
// client for input by multi round-trip (mrtr.mdx) and answers with what it
// got; it counts the tools/call requests.
func elicitServer(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "ask", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "ask"}, func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		if r, ok := req.Params.InputResponses["name"].(*mcp.ElicitResult); ok {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello " + r.Content["name"].(string)}}}, nil, nil
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"name": &mcp.ElicitParams{
			Message:         "your name?",
			RequestedSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"name": {Type: "string"}}},
		}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	var calls atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") == "tools/call" {
			calls.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts, &calls
}

// mrtr.mdx: "Servers MUST NOT send an inputRequests that the client has not
// declared support for in its capabilities". A host without an elicitation
// handler declares no elicitation; go-sdk refused such a request itself
// with -32602, which the host got as the server's JSON-RPC answer
// (application). It is now the server's protocol error, naming the
// capability and the handler the host must provide; one tools/call.
func TestE2EUndeclaredInputRequestNamesTheHandler(t *testing.T) {
	ts, calls := elicitServer(t)
	sup, ctx := readyOn(t, ts, mcp.ClientOptions{})
	require.Equal(t, "2026-07-28", sup.ResumeState().ProtocolVersion)
	_, err := sup.CallTool(ctx, &mcp.CallToolParams{Name: "ask"})
	var ce *supervisor.CallError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, classify.Protocol, ce.Verdict.Class, "%v", err)
	require.False(t, ce.Verdict.RPC.Present, "no JSON-RPC error came from the server: %v", err)
	var he *classify.HTTPError
	require.ErrorAs(t, err, &he)
	require.Contains(t, he.Problem, "declare no elicitation")
	require.Contains(t, he.Problem, "mcp.ClientOptions.ElicitationHandler")
	require.Equal(t, int64(1), calls.Load())

	// A host with the handler gets the round trip: two tools/call.
	ts2, calls2 := elicitServer(t)
	sup2, ctx2 := readyOn(t, ts2, mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "ann"}}, nil
	}})
	res, err := sup2.CallTool(ctx2, &mcp.CallToolParams{Name: "ask"})
	require.NoError(t, err)
	require.Equal(t, "hello ann", res.Content[0].(*mcp.TextContent).Text)
	require.Equal(t, int64(2), calls2.Load())
}

// stateServer is a 2026-07-28 go-sdk server with one tool "t" that answers
// a tools/call carrying no requestState (every tools/call when always) with
// an input_required result holding requestState "abc" alone, and any other
// with "state " and the requestState it got. It records the requestState
// of each tools/call it receives ("" when none).
func stateServer(t *testing.T, always bool) (*httptest.Server, func() []string) {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "st", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "t"}, func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "state " + req.Params.RequestState}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	var mu sync.Mutex
	var states []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				RequestState string `json:"requestState"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &msg) == nil && msg.Method == "tools/call" {
			mu.Lock()
			states = append(states, msg.Params.RequestState)
			mu.Unlock()
			if always || msg.Params.RequestState == "" {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(msg.ID) + `,"result":{"resultType":"input_required","requestState":"abc"}}`))
				return
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(states)
	}
}

// mrtr.mdx, Client Requirements: an InputRequiredResult without
// inputRequests lets "the client ... retry the original request
// immediately", and "If an InputRequiredResult contains the requestState
// field, the client MUST echo back the exact value of that field when
// retrying". go-sdk v1.8.0 re-sent only for inputRequests, so the interim
// result {"resultType":"input_required","requestState":"abc"} reached the
// host as the tool's success after one tools/call. Now the call is re-sent
// with the state and the host gets the final result; a server that answers
// so forever fails the call after go-sdk's three load-shedding rounds.
func TestE2EInputRequiredWithRequestStateAloneIsRetriedWithTheState(t *testing.T) {
	ts, states := stateServer(t, false)
	sup, ctx := readyOn(t, ts, mcp.ClientOptions{})
	require.Equal(t, "2026-07-28", sup.ResumeState().ProtocolVersion)
	res, err := sup.CallTool(ctx, &mcp.CallToolParams{Name: "t"})
	require.NoError(t, err)
	require.Equal(t, "state abc", res.Content[0].(*mcp.TextContent).Text)
	require.False(t, res.NeedsInput(), "the final result, not the interim one")
	require.Equal(t, []string{"", "abc"}, states(), "re-sent once, echoing the state")

	ts2, states2 := stateServer(t, true)
	sup2, ctx2 := readyOn(t, ts2, mcp.ClientOptions{})
	res, err = sup2.CallTool(ctx2, &mcp.CallToolParams{Name: "t"})
	require.Error(t, err, "an interim result is never the call's success: %+v", res)
	require.Equal(t, []string{"", "abc", "abc"}, states2(), "bounded: go-sdk's maxLoadSheddingMultiRoundTripRetries")
	require.Equal(t, supervisor.Ready, sup2.State())
}

// mrtr.mdx: "Servers MUST include at least one of inputRequests or
// requestState in every InputRequiredResult". One with neither reached the
// host as the tool's success; it is the server's protocol error naming
// what is missing, after one tools/call.
func TestE2EInputRequiredWithNeitherIsAProtocolError(t *testing.T) {
	ts, calls := resultServer(t, true, `{"resultType":"input_required"}`)
	sup, ctx := readyOn(t, ts, mcp.ClientOptions{})
	_, err := sup.CallTool(ctx, &mcp.CallToolParams{Name: "t"})
	var ce *supervisor.CallError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, classify.Protocol, ce.Verdict.Class, "%v", err)
	var he *classify.HTTPError
	require.ErrorAs(t, err, &he)
	require.Equal(t, `resultType "input_required" holds neither inputRequests nor requestState`, he.Problem)
	require.Equal(t, int64(1), calls.Load())
	require.Equal(t, supervisor.Ready, sup.State())
}
