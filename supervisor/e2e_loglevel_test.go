//lint:file-ignore SA1019 the logging feature, deprecated from protocol 2026-07-28 on (SEP-2577), is what these tests exercise

package supervisor_test

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

	"github.com/mcpsup/mcpsup/supervisor"
)

// logServer is a go-sdk server whose tool "talk" logs "hello" at info; it
// records the method and `_meta` of every request it receives.
// stateless serves 2026-07-28 (go-sdk's stateful handler never does).
type logServer struct {
	mu   sync.Mutex
	reqs []loggedRequest
}

type loggedRequest struct {
	method string
	meta   map[string]any
}

func newLogServer(t *testing.T, stateless bool) (*logServer, *httptest.Server) {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "log", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "talk"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: "hello"})
		return &mcp.CallToolResult{}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: stateless})
	ls := new(logServer)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			Method string `json:"method"`
			Params struct {
				Meta map[string]any `json:"_meta"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &msg) == nil && msg.Method != "" {
			ls.mu.Lock()
			ls.reqs = append(ls.reqs, loggedRequest{msg.Method, msg.Params.Meta})
			ls.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ls, ts
}

// received returns the requests of method the server received.
func (ls *logServer) received(method string) []loggedRequest {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	var out []loggedRequest
	for _, r := range ls.reqs {
		if r.method == method {
			out = append(out, r)
		}
	}
	return out
}

// readyForLogs starts a supervisor on ts whose host collects log messages.
func readyForLogs(t *testing.T, ts *httptest.Server) (*supervisor.Supervisor, chan *mcp.LoggingMessageParams) {
	t.Helper()
	logs := make(chan *mcp.LoggingMessageParams, 16)
	sup := mustNew(t, supervisor.Config{
		Endpoint: ts.URL,
		HTTP:     supervisor.HTTPConfig{HTTPClient: ts.Client()},
		Client: supervisor.ClientConfig{ClientOptions: mcp.ClientOptions{LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			logs <- r.Params
		}}},
	})
	sup.Start()
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	t.Cleanup(cancel)
	require.NoError(t, sup.WaitForState(ctx, supervisor.Ready))
	return sup, logs
}

// On a 2026-07-28 session the level the host set travels in each request's
// `_meta` (server/utilities/logging.mdx, "Per-request log level": include
// io.modelcontextprotocol/logLevel in the request's _meta; the server "MUST
// NOT emit notifications/message for a request that does not include this
// field"), and logging/setLevel, which that era removed (changelog.mdx,
// item 5), is never sent. Counted at a go-sdk 2026-07-28 server; the
// server's log message reaches the host.
func TestE2ELogLevelOn2026TravelsInMeta(t *testing.T) {
	ls, ts := newLogServer(t, true)
	sup, logs := readyForLogs(t, ts)
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	require.Equal(t, "2026-07-28", sup.ResumeState().ProtocolVersion)

	// Before a level is set, no request carries one, and no log arrives.
	_, err := sup.CallTool(ctx, &mcp.CallToolParams{Name: "talk"})
	require.NoError(t, err)
	require.NotContains(t, ls.received("tools/call")[0].meta, "io.modelcontextprotocol/logLevel")

	require.NoError(t, sup.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}))
	require.Empty(t, ls.received("logging/setLevel"), "no logging/setLevel on a 2026-07-28 session")

	params := &mcp.CallToolParams{Name: "talk"}
	_, err = sup.CallTool(ctx, params)
	require.NoError(t, err)
	calls := ls.received("tools/call")
	require.Len(t, calls, 2)
	require.Equal(t, "debug", calls[1].meta["io.modelcontextprotocol/logLevel"])
	require.NotContains(t, params.Meta, "io.modelcontextprotocol/logLevel", "the caller's params are not changed")
	select {
	case m := <-logs:
		require.Equal(t, "hello", m.Data)
		require.Len(t, logs, 0, "one log message, of the second call")
	case <-ctx.Done():
		t.Fatal("the server's log message never reached the host")
	}
}

// On a 2025-era session SetLoggingLevel sends logging/setLevel, and no
// request carries the 2026-07-28 `_meta` level.
func TestE2ELogLevelOn2025SendsSetLevel(t *testing.T) {
	ls, ts := newLogServer(t, false)
	sup, logs := readyForLogs(t, ts)
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	require.Equal(t, "2025-11-25", sup.ResumeState().ProtocolVersion)
	require.NoError(t, sup.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}))
	require.Len(t, ls.received("logging/setLevel"), 1)
	_, err := sup.CallTool(ctx, &mcp.CallToolParams{Name: "talk"})
	require.NoError(t, err)
	require.NotContains(t, ls.received("tools/call")[0].meta, "io.modelcontextprotocol/logLevel")
	select {
	case m := <-logs:
		require.Equal(t, "hello", m.Data)
	case <-ctx.Done():
		t.Fatal("the server's log message never reached the host")
	}
}
