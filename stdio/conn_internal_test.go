package stdio

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/msgcheck"
	"github.com/mcpsup/mcpsup/session"
)

// scriptedConn is a stdio connection whose server's messages are given in
// advance; what is written is dropped.
type scriptedConn struct{ answers chan jsonrpc.Message }

func (c *scriptedConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case m := <-c.answers:
		return m, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
func (c *scriptedConn) Write(context.Context, jsonrpc.Message) error { return nil }
func (c *scriptedConn) Close() error                                 { return nil }
func (c *scriptedConn) SessionID() string                            { return "" }

var _ mcp.Connection = (*scriptedConn)(nil)

// TestMarkingConnHoldsAForgottenAnswerToEveryCount: a stdio connection
// remembers at most maxListsTracked unanswered requests whose result has an
// array counted; the answer to one it forgot (its method no longer known)
// is still held to the counts, every method's, so a server cannot get past
// the content bound by answering the oldest call last. An answer within
// the bounds passes, and so does one to a request that counts nothing.
func TestMarkingConnHoldsAForgottenAnswerToEveryCount(t *testing.T) {
	ctx := context.Background()
	inner := &scriptedConn{answers: make(chan jsonrpc.Message, 4)}
	c := &markingConn{Connection: inner, drop: func(session.LineDropped) {}, maxResponses: 1,
		limits: msgcheck.Limits{ContentBlocks: 5}.WithDefaults()}
	id := func(n int64) jsonrpc.ID { v, _ := jsonrpc.MakeID(float64(n)); return v }
	for n := int64(1); n <= maxListsTracked+10; n++ {
		method := "tools/call"
		if n == 2 {
			method = "ping"
		}
		require.NoError(t, c.Write(ctx, &jsonrpc.Request{ID: id(n), Method: method}))
	}
	blocks := func(n int) []byte {
		return []byte(`{"content":[` + strings.TrimSuffix(strings.Repeat(`{"type":"text","text":""},`, n), ",") + `]}`)
	}
	read := func(n int64, result []byte) *jsonrpc.Response {
		inner.answers <- &jsonrpc.Response{ID: id(n), Result: result}
		msg, err := c.Read(ctx)
		require.NoError(t, err)
		return msg.(*jsonrpc.Response)
	}
	r := read(1, blocks(6)) // forgotten: the oldest of more than maxListsTracked
	require.NotNil(t, r.Error, "refused")
	assert.Equal(t, int64(msgcheck.CodeRefused), r.Error.(*jsonrpc.Error).Code)
	assert.Equal(t, "mcpsup: answer refused: tools/call result with more than 5 content blocks", r.Error.(*jsonrpc.Error).Message)
	assert.Nil(t, read(3, blocks(5)).Error, "forgotten, within the bounds")
	assert.Nil(t, read(2, []byte(`{}`)).Error, "a ping's answer")
	r = read(maxListsTracked+10, blocks(6)) // remembered
	require.NotNil(t, r.Error)
	assert.Equal(t, "mcpsup: answer refused: tools/call result with more than 5 content blocks", r.Error.(*jsonrpc.Error).Message)
}

// TestMarkingConnChecksTheDecodedAnswerAsHTTPDoes: the one message-level
// check serves stdio as it serves streamable HTTP. A tools/list result
// whose ttlMs go-sdk cannot decode into its int (MCP 2026-07-28,
// server/utilities/caching: ttlMs is a hint) reaches go-sdk without the
// hint instead of failing the listing, and a tools/call result with a
// resultType no client can act on is refused, naming it, for that call
// alone.
func TestMarkingConnChecksTheDecodedAnswerAsHTTPDoes(t *testing.T) {
	ctx := context.Background()
	inner := &scriptedConn{answers: make(chan jsonrpc.Message, 2)}
	c := &markingConn{Connection: inner, drop: func(session.LineDropped) {}, maxResponses: 1,
		limits: msgcheck.Limits{}.WithDefaults()}
	id := func(n int64) jsonrpc.ID { v, _ := jsonrpc.MakeID(float64(n)); return v }
	require.NoError(t, c.Write(ctx, &jsonrpc.Request{ID: id(1), Method: "tools/list"}))
	require.NoError(t, c.Write(ctx, &jsonrpc.Request{ID: id(2), Method: "tools/call"}))

	inner.answers <- &jsonrpc.Response{ID: id(1), Result: []byte(`{"tools":[],"ttlMs":1e300}`)}
	msg, err := c.Read(ctx)
	require.NoError(t, err)
	r := msg.(*jsonrpc.Response)
	require.Nil(t, r.Error, "the listing keeps its tools")
	var res mcp.ListToolsResult
	require.NoError(t, json.Unmarshal(r.Result, &res), "go-sdk decodes the tamed result: %s", r.Result)

	inner.answers <- &jsonrpc.Response{ID: id(2), Result: []byte(`{"content":[],"resultType":"teleport"}`)}
	msg, err = c.Read(ctx)
	require.NoError(t, err)
	r = msg.(*jsonrpc.Response)
	require.NotNil(t, r.Error, "refused")
	assert.Equal(t, int64(msgcheck.CodeRefused), r.Error.(*jsonrpc.Error).Code)
	assert.Contains(t, r.Error.(*jsonrpc.Error).Message, "teleport")
}
