package gateway_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/cmd/mcpsup/gateway"
)

// A 2025-era server's elicitation/create during the call of a 2026-07-28
// client reaches that client the way a 2026-07-28 server asks (MCP
// 2026-07-28, basic/patterns/mrtr.mdx: "The previous pattern of
// server-initiated requests is no longer supported"; "Servers MAY respond
// to any supported client request with an InputRequiredResult"): go-sdk's
// 2026-07-28 client fulfils the gateway's InputRequiredResult and retries
// with inputResponses and the requestState; the upstream's elicitation is
// answered with the client's content, and its tool ran once.
func TestE2EServerRequestHeldFor2026Client(t *testing.T) {
	f := newFixture(t, "ask")
	asked := make(chan string, 2)
	cs := f.connectAs(t, "2026-07-28", true, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked <- req.Params.Message
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"ok": true}}, nil
		},
	})
	require.Equal(t, "2026-07-28", cs.InitializeResult().ProtocolVersion)

	res, err := cs.CallTool(f.ctx, &mcp.CallToolParams{Name: "ask__confirm", Arguments: map[string]any{}})
	require.NoError(t, err)
	require.False(t, res.IsError, "%v", text(t, res))
	require.Equal(t, "answer accept", text(t, res))
	require.Equal(t, "proceed?", <-asked)
	got := <-f.up.Elicited
	require.Equal(t, "accept", got.Action)
	require.Equal(t, map[string]any{"ok": true}, got.Content)
	require.EqualValues(t, 1, f.up.Confirms.Load())
	require.Empty(t, f.up.ElicitFailed)
}

// heldClient is a 2026-07-28 client over the stdio downstream that sees
// the gateway's InputRequiredResults itself (go-sdk's own retries off).
func heldClient(t *testing.T, f *fixture) *mcp.ClientSession {
	return f.connectAs(t, "2026-07-28", true, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return nil, errors.New("answered by the test")
		},
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
	})
}

// holdConfirm calls ask__confirm and returns the id of its one input
// request and the requestState.
func holdConfirm(t *testing.T, f *fixture, cs *mcp.ClientSession) (string, string) {
	t.Helper()
	res, err := cs.CallTool(f.ctx, &mcp.CallToolParams{Name: "ask__confirm", Arguments: map[string]any{}})
	require.NoError(t, err)
	require.Len(t, res.InputRequests, 1)
	require.NotEmpty(t, res.RequestState)
	for id, ir := range res.InputRequests {
		ep, ok := ir.(*mcp.ElicitParams)
		require.True(t, ok, "%T", ir)
		require.Equal(t, "proceed?", ep.Message)
		return id, res.RequestState
	}
	panic("unreachable")
}

func retryConfirm(f *fixture, cs *mcp.ClientSession, name, id, state string) (*mcp.CallToolResult, error) {
	return cs.CallTool(f.ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{},
		InputResponses: mcp.InputResponseMap{id: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"ok": true}}},
		RequestState:   state})
}

// requireStateRefused: the retry named no held call: -32602 (Invalid
// params) with data class "request-state".
func requireStateRefused(t *testing.T, err error) {
	t.Helper()
	var we *jsonrpc.Error
	require.True(t, errors.As(err, &we), "%v", err)
	require.Equal(t, int64(gateway.CodeInvalidParams), we.Code, "%v", err)
	require.Contains(t, string(we.Data), `"class":"request-state"`)
}

// The gateway's requestState is attacker-controlled input (mrtr.mdx,
// Server Requirements: servers "MUST reject state that fails
// verification", and SHOULD verify "the authenticated principal", "an
// identifier for the originating request" and "a short expiry"): a forged
// state, another session's, one retried on another tool, and one answered
// already are each -32602 and leave the upstream untouched; the right
// retry, after those, answers the elicitation and returns the one call's
// result.
func TestE2EHeldCallStateVerified(t *testing.T) {
	f := newFixture(t, "ask")
	a, b := heldClient(t, f), heldClient(t, f)
	id, state := holdConfirm(t, f, a)
	require.LessOrEqual(t, len(state), 64)

	forged := []byte(state)
	forged[len(forged)-1] ^= 1
	_, err := retryConfirm(f, a, "ask__confirm", id, string(forged))
	requireStateRefused(t, err)
	_, err = retryConfirm(f, a, "ask__confirm", id, state+"A")
	requireStateRefused(t, err)
	_, err = retryConfirm(f, b, "ask__confirm", id, state) // another client's
	requireStateRefused(t, err)
	_, err = retryConfirm(f, a, "ask__log", id, state) // another request
	requireStateRefused(t, err)
	require.Empty(t, f.up.Elicited)

	res, err := retryConfirm(f, a, "ask__confirm", id, state)
	require.NoError(t, err)
	require.Equal(t, "answer accept", text(t, res))
	require.Equal(t, map[string]any{"ok": true}, (<-f.up.Elicited).Content)

	_, err = retryConfirm(f, a, "ask__confirm", id, state) // answered already
	requireStateRefused(t, err)
	require.EqualValues(t, 1, f.up.Confirms.Load())
}

// A held call waits for its client's retry at most HeldCallTimeout, and
// no longer than its session: then the upstream's elicitation gets an
// error (mrtr.mdx: "Servers MUST NOT assume that clients will fulfill the
// inputRequests or retry the original request") and a retry with its state
// is -32602.
func TestE2EHeldCallExpires(t *testing.T) {
	clock := clockwork.NewFakeClock()
	f := newFixtureWith(t, gateway.Config{Clock: clock}, "ask")
	cs := heldClient(t, f)
	id, state := holdConfirm(t, f, cs)
	require.NoError(t, clock.BlockUntilContext(f.ctx, 1))
	clock.Advance(gateway.DefaultHeldCallTimeout)
	select {
	case err := <-f.up.ElicitFailed:
		require.Contains(t, err.Error(), "no retry within")
	case <-f.ctx.Done():
		t.Fatal("the upstream's elicitation was not answered after the hold timeout")
	}
	_, err := retryConfirm(f, cs, "ask__confirm", id, state)
	requireStateRefused(t, err)

	// The session's end ends its held call.
	other := heldClient(t, f)
	holdConfirm(t, f, other)
	require.NoError(t, other.Close())
	select {
	case err := <-f.up.ElicitFailed:
		require.Contains(t, err.Error(), "session ended")
	case <-f.ctx.Done():
		t.Fatal("the upstream's elicitation was not answered after the client's session ended")
	}
	require.EqualValues(t, 2, f.up.Confirms.Load())
	require.Empty(t, f.up.Elicited)
}

// At most MaxHeldPerSession calls of one client are held at once: the
// next one's elicitation is answered with an error at once, and the call's
// result is the upstream's (a tool error here).
func TestE2EHeldCallsBounded(t *testing.T) {
	f := newFixture(t, "ask")
	cs := heldClient(t, f)
	type heldCall struct{ id, state string }
	var held []heldCall
	for range gateway.MaxHeldPerSession {
		id, state := holdConfirm(t, f, cs)
		held = append(held, heldCall{id, state})
	}
	res, err := cs.CallTool(f.ctx, &mcp.CallToolParams{Name: "ask__confirm", Arguments: map[string]any{}})
	require.NoError(t, err)
	require.Nil(t, res.InputRequests)
	require.True(t, res.IsError)
	require.Contains(t, text(t, res), "calls of this client are held already")
	require.Len(t, f.up.ElicitFailed, 1)
	require.EqualValues(t, gateway.MaxHeldPerSession+1, f.up.Confirms.Load())

	// The held calls are still good: each retry gets its call's result.
	for _, h := range held {
		res, err := retryConfirm(f, cs, "ask__confirm", h.id, h.state)
		require.NoError(t, err)
		require.Equal(t, "answer accept", text(t, res))
	}
}

// A retry that leaves the server's request unanswered is asked it again
// (mrtr.mdx, Error Handling: "the server SHOULD respond with a new
// InputRequiredResult requesting the missing information again"), under a
// new requestState (the old one is spent), at most MaxInputRounds
// InputRequiredResults a call: past them the server's request gets an
// error and the call's result is the server's.
func TestE2EHeldCallRoundsBounded(t *testing.T) {
	f := newFixture(t, "ask")
	cs := heldClient(t, f)
	id, state := holdConfirm(t, f, cs)
	for round := 2; round <= gateway.MaxInputRounds; round++ {
		res, err := cs.CallTool(f.ctx, &mcp.CallToolParams{Name: "ask__confirm", Arguments: map[string]any{}, RequestState: state})
		require.NoError(t, err)
		require.Contains(t, res.InputRequests, id)
		require.NotEqual(t, state, res.RequestState)
		if round == 2 {
			_, err := retryConfirm(f, cs, "ask__confirm", id, state)
			requireStateRefused(t, err)
		}
		state = res.RequestState
	}
	res, err := cs.CallTool(f.ctx, &mcp.CallToolParams{Name: "ask__confirm", Arguments: map[string]any{}, RequestState: state})
	require.NoError(t, err)
	require.Nil(t, res.InputRequests)
	require.True(t, res.IsError)
	require.Contains(t, text(t, res), "input rounds answered already")
	require.Len(t, f.up.ElicitFailed, 1)
	require.EqualValues(t, 1, f.up.Confirms.Load())
}
