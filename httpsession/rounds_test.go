package httpsession_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/httpsession"
)

// A 2026-07-28 call re-issued after its response stream broke carries the
// round it had reached: "A broken response stream loses the in-flight
// request; clients MUST re-issue it as a new request with a new request ID"
// (changelog item 9), and "If an InputRequiredResult contains the
// requestState field, the client MUST echo back the exact value of that
// field when retrying the original request" (basic/patterns/mrtr.mdx,
// Client Requirements). The tool asks twice (requestState "s1", then "s2");
// the stream of the third round, the one carrying "s2", breaks; the call
// sent again goes out with a new id and that round's requestState and
// inputResponses byte for byte, and the server answers it at once: four
// tools/call at the server, not six.
func TestReissueKeepsTheLastRound(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "rounds", Version: "v1"}, nil)
	ask := func(state string) *mcp.CallToolResult {
		return &mcp.CallToolResult{RequestState: state, InputRequests: mcp.InputRequestMap{"q": &mcp.ElicitParams{
			Message: "go on?", RequestedSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"n": {Type: "integer"}}},
		}}}
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "confirm"}, func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		switch req.Params.RequestState {
		case "":
			return ask("s1"), nil, nil
		case "s1":
			return ask("s2"), nil, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done " + req.Params.RequestState}}}, nil, nil
	})
	var mu sync.Mutex
	var calls [][]byte // the tools/call bodies, in order
	g := &gateway{next: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})}
	g.setFault(func(w http.ResponseWriter, r *http.Request, method string, n int) bool {
		if method != "tools/call" {
			return false
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		mu.Lock()
		calls = append(calls, body)
		mu.Unlock()
		if n != 2 {
			return false
		}
		// The third round's stream breaks before its response.
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, ": working\n\n")
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	})
	hs := httptest.NewServer(g)
	t.Cleanup(hs.Close)

	answers := 0
	client := mcp.NewClient(&mcp.Implementation{Name: "t"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			answers++ // each round's answer differs from the last
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"n": answers}}, nil
		},
	})
	s, err := open2026(t, hs.URL, httpsession.Options{Client: client, Stream: httpsession.StreamOff})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	params := &mcp.CallToolParams{Name: "confirm", Arguments: map[string]any{}}
	_, err = s.ClientSession().CallTool(ctx, params)
	require.Error(t, err, "the third round's stream broke")
	res, err := s.ClientSession().CallTool(ctx, params) // the re-issue, as the supervisor sends it
	require.NoError(t, err)
	require.Len(t, res.Content, 1)
	assert.Equal(t, "done s2", res.Content[0].(*mcp.TextContent).Text)

	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, 4, len(calls), "three rounds, then the re-issue of the last one")
	type request struct {
		ID     json.RawMessage `json:"id"`
		Params struct {
			Name           string          `json:"name"`
			RequestState   json.RawMessage `json:"requestState"`
			InputResponses json.RawMessage `json:"inputResponses"`
		} `json:"params"`
	}
	var lost, again request
	require.NoError(t, json.Unmarshal(calls[2], &lost))
	require.NoError(t, json.Unmarshal(calls[3], &again))
	assert.Equal(t, `"s2"`, string(lost.Params.RequestState))
	assert.Equal(t, string(lost.Params.RequestState), string(again.Params.RequestState), "requestState echoed byte for byte")
	assert.Equal(t, string(lost.Params.InputResponses), string(again.Params.InputResponses), "inputResponses byte for byte")
	assert.Contains(t, string(again.Params.InputResponses), `"n":2`, "the last round's answer, not an older one")
	assert.Equal(t, "confirm", again.Params.Name)
	assert.NotEqual(t, string(lost.ID), string(again.ID), fmt.Sprintf("a new request id (%s)", again.ID))
}
