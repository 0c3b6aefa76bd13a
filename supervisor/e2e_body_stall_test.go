package supervisor_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/supervisor"
)

// stallServer is a go-sdk server with one tool "t" whose tools/call answer
// is 200 application/json and the first bytes of a body, `{"jsonrpc":"2.0",`,
// and then nothing until the client hangs up. Each such answer's start is
// sent on started.
func stallServer(t *testing.T) (*httptest.Server, chan struct{}) {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "stall", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "t"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	started := make(chan struct{}, 4)
	stop := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			Method string `json:"method"`
		}
		if json.Unmarshal(body, &msg) == nil && msg.Method == "tools/call" {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Mcp-Session-Id", r.Header.Get("Mcp-Session-Id"))
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0",`))
			w.(http.Flusher).Flush()
			started <- struct{}{}
			select {
			case <-r.Context().Done():
			case <-stop:
			}
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	t.Cleanup(func() { close(stop) }) // before ts.Close
	return ts, started
}

// DESIGN.md's Bounds: "Config.Limits.CallTimeout ... | timeout, outcome
// unknown". A call whose CallTimeout ends while its answer's body is half
// read met our own deadline: the body that broke off is no complete HTTP
// answer (streamable-http.mdx: the server answers a POST with "a single JSON
// object"), not a malformed one. The call is timeout, outcome-unknown, and
// the session serves on.
func TestE2ECallTimeoutInsideAHalfReadBodyIsTimeout(t *testing.T) {
	ts, started := stallServer(t)
	clock := clockwork.NewFakeClock()
	sup := mustNew(t, supervisor.Config{
		Endpoint: ts.URL,
		HTTP:     supervisor.HTTPConfig{HTTPClient: ts.Client()},
		Observe:  supervisor.ObserveConfig{Clock: clock},
		Stream:   supervisor.StreamConfig{Policy: supervisor.StreamOff},
		Limits:   supervisor.LimitsConfig{CatalogPollInterval: -1, CallTimeout: 3 * time.Second},
	})
	sup.Start()
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	require.NoError(t, sup.WaitForState(ctx, supervisor.Ready))
	gen := sup.Generation()

	errc := make(chan error, 1)
	go func() { _, err := sup.CallTool(context.Background(), &mcp.CallToolParams{Name: "t"}); errc <- err }()
	select {
	case <-started:
	case <-ctx.Done():
		t.Fatal("the call never reached the server")
	}
	require.NoError(t, clock.BlockUntilContext(ctx, 1), "the call's timer")
	clock.Advance(3 * time.Second)
	var err error
	select {
	case err = <-errc:
	case <-ctx.Done():
		t.Fatal("the call outlived its CallTimeout")
	}
	var ce *supervisor.CallError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, classify.Timeout, ce.Verdict.Class, "%v", err)
	require.Equal(t, supervisor.OutcomeUnknown, ce.Delivery, "%v", err)
	require.Equal(t, supervisor.Ready, sup.State())
	require.Equal(t, gen, sup.Generation(), "our own deadline is no dead session")
}
