package supervisor_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/httpsession"
	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/supervisor"
)

// TestRefusedAnswerIsTypedOverHTTP: over streamable HTTP, as over stdio
// (TestCommandResultOverTheContentBoundIsRefused), a 2xx answer the session
// refuses before go-sdk decodes it (over a msgcheck bound or
// AnswerLimits.JSON, in a JSON body or an event; MCP schema, a Result is a
// JSON object: not one) fails the call with an error that errors.Is
// classify.ErrProtocol and errors.As an *httpsession.AnswerRefusedError
// naming the problem. A 5xx, a 4xx or a broken connection is the server's
// answer or none: neither. The session serves the next call.
func TestRefusedAnswerIsTypedOverHTTP(t *testing.T) {
	jsonHdr := http.Header{"Content-Type": {"application/json"}}
	blocks := strings.TrimSuffix(strings.Repeat(`{"type":"text","text":"x"},`, 6), ",")
	values := strings.TrimSuffix(strings.Repeat("{},", 200), ",")
	limits := supervisor.AnswerLimits{JSON: 4 << 10, JSONValues: 100, ContentBlocks: 5}
	cases := []struct {
		name    string
		action  mcptest.Action
		class   classify.Class
		problem string // "": not refused
	}{
		{"JSON body over AnswerLimits.JSON", mcptest.Large(200, jsonHdr, `{"jsonrpc":"2.0","id":$ID,"result":{"content":[{"type":"text","text":"`, 8<<10, 'x'),
			classify.Protocol, "JSON body larger than 4096 bytes"},
		{"content blocks over AnswerLimits.ContentBlocks", mcptest.JSONBody(`{"jsonrpc":"2.0","id":$ID,"result":{"content":[` + blocks + `]}}`),
			classify.Protocol, "tools/call result with more than 5 content blocks"},
		{"event over AnswerLimits.JSONValues", mcptest.SSE(mcptest.SSEMessage(`{"jsonrpc":"2.0","id":$ID,"result":{"content":[],"structuredContent":{"v":[` + values + `]}}}`)...),
			classify.Protocol, "JSON-RPC message with more than 100 JSON values"},
		{"result not an object", mcptest.JSONBody(`{"jsonrpc":"2.0","id":$ID,"result":[]}`),
			classify.Protocol, "response result is not a JSON object"},
		{"HTTP 500", mcptest.PlainText(500, "Internal Server Error"), classify.ServerError, ""},
		{"HTTP 403", mcptest.HTML(403, mcptest.ForbiddenPage), classify.Forbidden, ""},
		{"connection reset", mcptest.Reset(), classify.Transport, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv, err := mcptest.NewServer(mcptest.Options{})
			require.NoError(t, err)
			t.Cleanup(srv.Close)
			sup, err := supervisor.New(supervisor.Config{
				Endpoint: srv.URL(),
				HTTP:     supervisor.HTTPConfig{HTTPClient: srv.HTTPClient()},
				Stream:   supervisor.StreamConfig{Policy: supervisor.StreamOff},
				Limits:   supervisor.LimitsConfig{AnswerLimits: limits},
			})
			require.NoError(t, err)
			t.Cleanup(func() { _ = sup.Close() })
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			sup.Start()
			require.NoError(t, sup.WaitForState(ctx, supervisor.Ready))
			srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Verb: http.MethodPost, Method: "tools/call", Occurrence: mcptest.First()}, Action: c.action})

			_, err = sup.CallTool(ctx, &mcp.CallToolParams{Name: mcptest.RecordTool, Arguments: mcptest.IDArgs{ID: "refused"}})
			var ce *supervisor.CallError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, c.class, ce.Verdict.Class, "verdict %v: %s", ce.Verdict, ce.Verdict.Detail)
			var refused *httpsession.AnswerRefusedError
			if c.problem == "" {
				assert.NotErrorIs(t, err, classify.ErrProtocol)
				assert.False(t, errors.As(err, &refused), "%v", err)
			} else {
				assert.ErrorIs(t, err, classify.ErrProtocol)
				require.ErrorAs(t, err, &refused)
				assert.Equal(t, "tools/call", refused.Method)
				assert.Equal(t, c.problem, refused.Problem)
				var facts *classify.HTTPError
				require.ErrorAs(t, err, &facts, "the exchange is kept")
				assert.Equal(t, 200, facts.Status)
			}

			_, err = sup.CallTool(ctx, &mcp.CallToolParams{Name: mcptest.RecordTool, Arguments: mcptest.IDArgs{ID: "next"}})
			require.NoError(t, err)
			assert.Equal(t, uint64(1), sup.Generation(), "same session")
		})
	}
}
