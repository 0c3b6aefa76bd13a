package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/cmd/mcpsup/gateway"
	"github.com/mcpsup/mcpsup/cmd/mcpsup/internal/e2etest"
)

// connectAs opens a go-sdk client session on the gateway asking for
// protocol version, over its streamable HTTP handler or, with stdio, a
// transport that serves every version (as the command's stdio does).
func (f *fixture) connectAs(t *testing.T, version string, stdio bool, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, opts)
	var ct mcp.Transport = &mcp.StreamableClientTransport{Endpoint: f.http.URL + "/mcp"}
	if stdio {
		var st mcp.Transport
		ct, st = mcp.NewInMemoryTransports()
		ss, err := f.gw.Server().Connect(f.ctx, st, nil)
		require.NoError(t, err)
		t.Cleanup(func() { _ = ss.Close() })
	}
	cs, err := c.Connect(f.ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// A 2026-07-28 upstream asks for input by multi round-trip (MCP 2026-07-28,
// basic/patterns/mrtr.mdx): its first answer is an InputRequiredResult
// holding an elicitation/create and a requestState. The elicitation reaches
// the downstream client of the call, whatever its era: a 2025-11-25 client
// as a server request (client/elicitation.mdx), a 2026-07-28 client as the
// gateway's own InputRequiredResult, which it fulfils and retries. The
// upstream gets exactly two rounds, the second carrying the client's answer
// in inputResponses and the requestState unchanged ("If an
// InputRequiredResult contains the requestState field, the client MUST
// echo back the exact value of that field when retrying the original
// request").
func TestE2EInputRequiredRelayed(t *testing.T) {
	for _, tc := range []struct {
		name, version string
		stdio         bool
		negotiated    string
	}{
		{"http-2025-11-25", "2025-11-25", false, "2025-11-25"},
		// go-sdk's stateful streamable server speaks 2026-07-28 only when
		// stateless: the client gets 2025-11-25.
		{"http-2026-07-28", "2026-07-28", false, "2025-11-25"},
		{"stdio-2026-07-28", "2026-07-28", true, "2026-07-28"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, "mrtr")
			asked := make(chan string, 4)
			cs := f.connectAs(t, tc.version, tc.stdio, &mcp.ClientOptions{
				ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked <- req.Params.Message
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "ada"}}, nil
				},
			})
			require.Equal(t, tc.negotiated, cs.InitializeResult().ProtocolVersion)

			res, err := cs.CallTool(f.ctx, &mcp.CallToolParams{Name: "mrtr__ask", Arguments: map[string]any{}})
			require.NoError(t, err)
			require.Equal(t, "hello ada", text(t, res))
			require.Equal(t, "your name?", <-asked)
			require.Equal(t, []e2etest.MRTRRound{
				{Method: "tools/call"},
				{Method: "tools/call", RequestState: e2etest.MRTRState, Name: "ada"},
			}, f.up.MRTR.Rounds())

			pr, err := cs.GetPrompt(f.ctx, &mcp.GetPromptParams{Name: "mrtr__greet"})
			require.NoError(t, err)
			require.Equal(t, "hello ada", pr.Messages[0].Content.(*mcp.TextContent).Text)
			require.Equal(t, "your name?", <-asked)
			require.Len(t, f.up.MRTR.Rounds(), 4)
			require.Equal(t, e2etest.MRTRRound{Method: "prompts/get", RequestState: e2etest.MRTRState, Name: "ada"}, f.up.MRTR.Rounds()[3])

			rr, err := cs.ReadResource(f.ctx, &mcp.ReadResourceParams{URI: "mrtr://doc"})
			require.NoError(t, err)
			require.Equal(t, "hello ada", rr.Contents[0].Text)
			require.Equal(t, "your name?", <-asked)
			require.Len(t, f.up.MRTR.Rounds(), 6)
			require.Equal(t, e2etest.MRTRRound{Method: "resources/read", RequestState: e2etest.MRTRState, Name: "ada"}, f.up.MRTR.Rounds()[5])
		})
	}
}

// The rounds the gateway runs for a 2025-era client are bounded: a server
// that asks again whatever the answer ("the server SHOULD respond with a
// new InputRequiredResult requesting the missing information again",
// mrtr.mdx, Error Handling) gets MaxInputRounds rounds of the call, then the
// client gets -32603 whose data's class is "input-rounds".
func TestE2EInputRoundsBounded(t *testing.T) {
	f := newFixture(t, "mrtr")
	cs := f.connectAs(t, "2025-11-25", false, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
	})
	_, err := cs.CallTool(f.ctx, &mcp.CallToolParams{Name: "mrtr__ask", Arguments: map[string]any{}})
	requireClass(t, err, "mrtr", "input-rounds")
	require.Len(t, f.up.MRTR.Rounds(), gateway.MaxInputRounds)
}

// mrtr.mdx: "Servers MUST NOT send an inputRequests that the client has not
// declared support for in its capabilities". The gateway, the server of its
// client, passes no elicitation to a 2026-07-28 client that declared none,
// and asks a 2025-era one none: the call fails with class
// "input-unsupported" after the upstream's one round.
func TestE2EInputUnsupportedNeverSent(t *testing.T) {
	for _, stdio := range []bool{false, true} {
		f := newFixture(t, "mrtr")
		cs := f.connectAs(t, "2026-07-28", stdio, nil)
		_, err := cs.CallTool(f.ctx, &mcp.CallToolParams{Name: "mrtr__ask", Arguments: map[string]any{}})
		requireClass(t, err, "mrtr", "input-unsupported")
		require.Len(t, f.up.MRTR.Rounds(), 1)
	}
}

func requireClass(t *testing.T, err error, server, class string) {
	t.Helper()
	var we *jsonrpc.Error
	require.True(t, errors.As(err, &we), "%v", err)
	require.Equal(t, int64(gateway.CodeInternalError), we.Code)
	var data gateway.ErrorData
	require.NoError(t, json.Unmarshal(we.Data, &data), "%v", err)
	require.Equal(t, server, data.Server)
	require.Equal(t, class, data.Class, "%v", err)
}

// An InputRequiredResult with requestState alone (the server sheds load)
// is retried with the state (mrtr.mdx, Client Requirements: "If the
// InputRequiredResult does not contain the inputRequests field, the client
// MAY retry the original request immediately", and "MUST echo back the
// exact value"): by the gateway for a 2025-era client, by a 2026-07-28
// client itself. The upstream gets two rounds, the second with the state.
func TestE2EInputShedRetried(t *testing.T) {
	for _, stdio := range []bool{false, true} {
		f := newFixture(t, "mrtr")
		cs := f.connectAs(t, "2026-07-28", stdio, nil)
		res, err := cs.CallTool(f.ctx, &mcp.CallToolParams{Name: "mrtr__shed", Arguments: map[string]any{}})
		require.NoError(t, err)
		require.Equal(t, "served", text(t, res))
		require.Equal(t, []e2etest.MRTRRound{
			{Method: "tools/call"},
			{Method: "tools/call", RequestState: e2etest.MRTRShedState},
		}, f.up.MRTR.Rounds(), "stdio %v", stdio)
	}
}
