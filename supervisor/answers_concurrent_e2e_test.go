package supervisor_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/supervisor"
)

// An answer to one call that carries the id of another call still in
// flight fails the call it answered, as protocol with the outcome unknown;
// the call in flight gets its own result, not the stray one, and the
// session lives. The stray answer comes as the whole JSON body, or as an
// SSE event before the call's own response.
func TestAnotherCallsAnswerFailsOnlyTheCall(t *testing.T) {
	const stray = `{"jsonrpc":"2.0","id":$PREV_ID,"result":{"content":[{"type":"text","text":"not yours"}]}}`
	cases := map[string]mcptest.Action{
		"JSON": mcptest.JSONBody(stray),
		"SSE before the response": mcptest.SSE(append(mcptest.SSEMessage(stray),
			mcptest.SSEMessage(`{"jsonrpc":"2.0","id":$ID,"result":{"content":[{"type":"text","text":"mine"}]}}`)...)...),
	}
	for name, action := range cases {
		t.Run(name, func(t *testing.T) {
			srv, err := mcptest.NewServer(mcptest.Options{})
			require.NoError(t, err)
			t.Cleanup(srv.Close)
			sup, err := supervisor.New(supervisor.Config{Endpoint: srv.URL(), HTTP: supervisor.HTTPConfig{HTTPClient: srv.HTTPClient()}, Stream: supervisor.StreamConfig{Policy: supervisor.StreamOff}})
			require.NoError(t, err)
			t.Cleanup(func() { _ = sup.Close() })
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			sup.Start()
			require.NoError(t, sup.WaitForState(ctx, supervisor.Ready))

			type result struct {
				res *mcp.CallToolResult
				err error
			}
			first := make(chan result, 1)
			go func() {
				res, err := sup.CallTool(ctx, &mcp.CallToolParams{Name: mcptest.BlockTool, Arguments: mcptest.IDArgs{ID: "first"}})
				first <- result{res, err}
			}()
			require.NoError(t, srv.WaitBlocked(ctx, "first"))
			// The first call was the previous one: $PREV_ID is its id.
			rule := srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Verb: http.MethodPost, Method: "tools/call"}, Action: action})
			_, err = sup.CallTool(ctx, &mcp.CallToolParams{Name: mcptest.RecordTool, Arguments: mcptest.IDArgs{ID: "second"}})
			var ce *supervisor.CallError
			require.True(t, errors.As(err, &ce), "%v", err)
			assert.Equal(t, classify.Protocol, ce.Verdict.Class, "verdict %v", ce.Verdict)
			assert.Equal(t, supervisor.OutcomeUnknown, ce.Delivery)
			srv.Gateway().Remove(rule)

			srv.Release("first")
			got := <-first
			require.NoError(t, got.err)
			require.Len(t, got.res.Content, 1)
			text, ok := got.res.Content[0].(*mcp.TextContent)
			require.True(t, ok, "%T", got.res.Content[0])
			assert.NotEqual(t, "not yours", text.Text, "the stray answer reached the call in flight")
			assert.Equal(t, 1, srv.Invocations(mcptest.BlockTool, "first"))
			assert.Equal(t, supervisor.Ready, sup.State())
			assert.Equal(t, uint64(1), sup.Generation(), "same session")
			assert.Equal(t, 1, srv.Log().Count("initialize"))
			assert.Zero(t, srv.Log().CountVerb(http.MethodDelete))
		})
	}
}
