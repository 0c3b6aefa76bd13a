package stdio

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/msgcheck"
	"github.com/mcpsup/mcpsup/session"
)

// discard is a process's stdin that drops what is written.
type discard struct{}

func (discard) Write(b []byte) (int, error) { return len(b), nil }
func (discard) Close() error                { return nil }

// readPassed hands c msg as the stdout filter does and returns what Read
// gets.
func readPassed(t *testing.T, c *markingConn, msg jsonrpc.Message) *jsonrpc.Response {
	go c.pass(msg)
	got, err := c.Read(context.Background())
	require.NoError(t, err)
	return got.(*jsonrpc.Response)
}

// TestMarkingConnHoldsAnAwaitedAnswerToItsMethodsCount: the answer a
// caller waits for is held to the bounds of its request's method; one no
// caller waits for any more (go-sdk retires a call whose context ended and
// decodes no answer to it, mcp/transport.go call) is handed on unchecked,
// and an answer to a request that counts nothing passes. A mark kept under
// several ids (go-sdk's multi-round-trip re-sends within one call,
// mcp/mrtr.go) is forgotten under all of them.
func TestMarkingConnHoldsAnAwaitedAnswerToItsMethodsCount(t *testing.T) {
	ctx := context.Background()
	c := newMarkingConn(func(session.LineDropped, string) {}, nil, 1, msgcheck.Limits{ContentBlocks: 5}.WithDefaults())
	c.stdin = discard{}
	id := func(n int64) jsonrpc.ID { v, _ := jsonrpc.MakeID(float64(n)); return v }
	call, ping, gone := new(callMark), new(callMark), new(callMark)
	for n, m := range map[int64]*callMark{1: call, 2: ping, 3: gone, 4: call} {
		method := "tools/call"
		if m == ping {
			method = "ping"
		}
		require.NoError(t, c.Write(context.WithValue(ctx, markKey{}, m), &jsonrpc.Request{ID: id(n), Method: method}))
	}
	gone.done() // its caller returned
	blocks := func(n int) []byte {
		return []byte(`{"content":[` + strings.TrimSuffix(strings.Repeat(`{"type":"text","text":""},`, n), ",") + `]}`)
	}
	read := func(n int64, result []byte) *jsonrpc.Response {
		return readPassed(t, c, &jsonrpc.Response{ID: id(n), Result: result})
	}
	r := read(4, blocks(6))
	require.NotNil(t, r.Error, "refused")
	assert.Equal(t, int64(msgcheck.CodeRefused), r.Error.(*jsonrpc.Error).Code)
	assert.Equal(t, "mcpsup: answer refused: tools/call result with more than 5 content blocks", r.Error.(*jsonrpc.Error).Message)
	_, refused := call.done()
	assert.Equal(t, "tools/call result with more than 5 content blocks", refused)
	assert.Nil(t, read(3, blocks(6)).Error, "no caller waits: go-sdk drops it unread")
	assert.Nil(t, read(2, []byte(`{}`)).Error, "a ping's answer")
	ping.done()
	assert.Empty(t, c.marks, "every id of every mark forgotten")
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
	c := newMarkingConn(func(session.LineDropped, string) {}, nil, 1, msgcheck.Limits{}.WithDefaults())
	c.stdin = discard{}
	id := func(n int64) jsonrpc.ID { v, _ := jsonrpc.MakeID(float64(n)); return v }
	for n, method := range map[int64]string{1: "tools/list", 2: "tools/call"} { // awaited, as every call is
		require.NoError(t, c.Write(context.WithValue(ctx, markKey{}, new(callMark)), &jsonrpc.Request{ID: id(n), Method: method}))
	}

	r := readPassed(t, c, &jsonrpc.Response{ID: id(1), Result: []byte(`{"tools":[],"ttlMs":1e300}`)})
	require.Nil(t, r.Error, "the listing keeps its tools")
	var res mcp.ListToolsResult
	require.NoError(t, json.Unmarshal(r.Result, &res), "go-sdk decodes the tamed result: %s", r.Result)

	r = readPassed(t, c, &jsonrpc.Response{ID: id(2), Result: []byte(`{"content":[],"resultType":"teleport"}`)})
	require.NotNil(t, r.Error, "refused")
	assert.Equal(t, int64(msgcheck.CodeRefused), r.Error.(*jsonrpc.Error).Code)
	assert.Contains(t, r.Error.(*jsonrpc.Error).Message, "teleport")
}

// stuckStdin is a process's stdin that reads nothing: every Write blocks
// until Close; it counts the Writes that reached it.
type stuckStdin struct {
	entered chan struct{} // a token per Write reached
	closed  chan struct{}
	once    sync.Once
}

func (c *stuckStdin) Write([]byte) (int, error) {
	c.entered <- struct{}{}
	<-c.closed
	return 0, io.ErrClosedPipe
}

func (c *stuckStdin) Close() error {
	c.once.Do(func() { close(c.closed) })
	return nil
}

// waitSpy is a context that is canceled once a Write waits on it.
type waitSpy struct {
	context.Context
	cancel context.CancelFunc
	once   sync.Once
}

func (c *waitSpy) Done() <-chan struct{} {
	c.once.Do(c.cancel)
	return c.Context.Done()
}

// TestMarkingConnHoldsOneWriteToAServerThatReadsNothing: a server that
// stops reading its stdin holds the first write for good; every write after
// it waits for that one, bounded by its context, and one cut while it waits
// was not sent (its mark not written) and leaves nothing running, nor does
// the cancellation go-sdk sends for it: however many calls time out, one
// write reaches the pipe. Close ends the stuck write.
func TestMarkingConnHoldsOneWriteToAServerThatReadsNothing(t *testing.T) {
	inner := &stuckStdin{entered: make(chan struct{}, 1000), closed: make(chan struct{})}
	c := newMarkingConn(func(session.LineDropped, string) {}, nil, 1, msgcheck.Limits{}.WithDefaults())
	c.stdin = inner
	id := func(n int64) jsonrpc.ID { v, _ := jsonrpc.MakeID(float64(n)); return v }
	blob := json.RawMessage(`{"blob":"` + strings.Repeat("x", 1<<10) + `"}`)

	first := new(callMark)
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), markKey{}, first))
	out := make(chan error, 1)
	go func() { out <- c.Write(ctx, &jsonrpc.Request{ID: id(1), Method: "tools/call", Params: blob}) }()
	<-inner.entered // the write reached the pipe and is stuck there
	cancel()
	require.ErrorIs(t, <-out, context.Canceled)
	written, _ := first.done()
	assert.True(t, written, "a write cut while running goes on whole: it counts as written")

	const calls = 200
	for n := int64(2); n < 2+calls; n++ {
		mark := new(callMark)
		base, cancel := context.WithCancel(context.WithValue(context.Background(), markKey{}, mark))
		err := c.Write(&waitSpy{Context: base, cancel: cancel}, &jsonrpc.Request{ID: id(n), Method: "tools/call", Params: blob})
		require.ErrorIs(t, err, context.Canceled)
		written, _ := mark.done()
		require.False(t, written, "call %d: cut while waiting, not sent", n)
		// go-sdk then cancels it, with its context; a request never issued
		// is not cancelled (MCP 2025-11-25 basic/utilities/cancellation):
		// dropped, not waiting.
		base, cancel = context.WithCancel(context.WithValue(context.Background(), markKey{}, mark))
		cancelled := &jsonrpc.Request{Method: "notifications/cancelled", Params: json.RawMessage(fmt.Sprintf(`{"requestId":%d,"reason":"context canceled"}`, n))}
		require.NoError(t, c.Write(&waitSpy{Context: base, cancel: cancel}, cancelled), "call %d: its cancellation waited", n)
	}
	require.NoError(t, c.Close()) // returns once the stuck write has ended
	assert.Len(t, inner.entered, 0, "no write but the first reached the pipe")
	assert.Empty(t, c.marks, "no mark kept for a call that returned")
}

// TestMarkingConnTakesTheFirstAnswerOfAnID: "Responses are sent in reply to
// requests, containing either the result or error of the operation" (MCP
// 2025-11-25 basic, Responses): one answer per request. A server that
// answers an id twice, first with an error, then with a result past the
// bounds, leaves the caller the first: the second is not awaited any more,
// so it is neither checked nor made the call's refusal (nor is a second
// answer the filter dropped as too long: refuse finds no mark).
func TestMarkingConnTakesTheFirstAnswerOfAnID(t *testing.T) {
	ctx := context.Background()
	c := newMarkingConn(func(session.LineDropped, string) {}, nil, 1, msgcheck.Limits{ContentBlocks: 5}.WithDefaults())
	c.stdin = discard{}
	id := func(n int64) jsonrpc.ID { v, _ := jsonrpc.MakeID(float64(n)); return v }
	call := new(callMark)
	require.NoError(t, c.Write(context.WithValue(ctx, markKey{}, call), &jsonrpc.Request{ID: id(1), Method: "tools/call"}))
	first := readPassed(t, c, &jsonrpc.Response{ID: id(1), Error: &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "no such argument"}})
	require.Equal(t, int64(jsonrpc.CodeInvalidParams), first.Error.(*jsonrpc.Error).Code)
	again := readPassed(t, c, &jsonrpc.Response{ID: id(1), Result: []byte(`{"content":[` + strings.TrimSuffix(strings.Repeat(`{"type":"text","text":""},`, 6), ",") + `]}`)})
	assert.Nil(t, again.Error, "a second answer is handed on unchecked: go-sdk drops it (no call waits for the id)")
	_, refused := call.done()
	assert.Empty(t, refused, "the call keeps its first answer, the server's error")
}
