package wire

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStreamForKeepsTheFirstInTheSlot: a call's first answer stream is the
// storage kept in its slot; a second one of the same call, and one made
// without a slot, are their own.
func TestStreamForKeepsTheFirstInTheSlot(t *testing.T) {
	ctx := WithExchange(context.Background())
	s := ctx.Value(slotKey{}).(*slot)
	first := streamFor(ctx)
	assert.Same(t, &s.stream, first)
	second := streamFor(ctx)
	assert.NotSame(t, first, second)
	assert.NotSame(t, first, streamFor(context.Background()))
}

// A response carrying the call's plain integer id is matched by its digits,
// boxing no id; one spelling the same number otherwise (go-sdk reads 300.0
// as 300) is matched too, and one with another id is not. Written anew, the
// response carries the call's id.
func TestCallIDMatchesWithoutBoxing(t *testing.T) {
	want, ok := requestID("300")
	require.True(t, ok)
	sc := new(decodeScratch)
	data := []byte(`{"jsonrpc":"2.0","id":300,"result":{}}`)
	allocs := testing.AllocsPerRun(100, func() {
		msg, _, err := decodeMessageInto(data, want, sc)
		if err != nil || answerProblem(msg.(*jsonrpc.Response), want) != "" {
			t.Fatal(msg, err)
		}
	})
	assert.Zero(t, allocs, "matching the call's id allocates nothing")

	for _, c := range []struct {
		body    string
		problem bool
	}{
		{`{"jsonrpc":"2.0","id":300.0,"result":{}}`, false},
		{`{"jsonrpc":"2.0","id":3e2,"result":{}}`, false},
		{`{"jsonrpc":"2.0","id":301,"result":{}}`, true},
		{`{"jsonrpc":"2.0","id":"300","result":{}}`, true},
	} {
		msg, _, err := decodeMessageFor([]byte(c.body), want)
		require.NoError(t, err, c.body)
		assert.Equal(t, c.problem, answerProblem(msg.(*jsonrpc.Response), want) != "", c.body)
	}

	msg, exact, err := decodeMessageFor([]byte("{\"jsonrpc\":\"2.0\",\n\"id\":300,\"result\":{}}"), want)
	require.NoError(t, err)
	require.False(t, exact, "a line break: written anew")
	r := msg.(*jsonrpc.Response)
	want.fill(r)
	b, err := handOn(nil, r, exact)
	require.NoError(t, err)
	back, err := jsonrpc.DecodeMessage(b)
	require.NoError(t, err)
	assert.Equal(t, want.ID(), back.(*jsonrpc.Response).ID)
}

// A server-to-client request that happens to carry the call's id keeps it:
// the zero ID stands for the call's in a response only.
func TestCallIDRequestKeepsItsID(t *testing.T) {
	want, _ := requestID("7")
	msg, _, err := decodeMessageFor([]byte(`{"jsonrpc":"2.0","id":7,"method":"roots/list"}`), want)
	require.NoError(t, err)
	req := msg.(*jsonrpc.Request)
	assert.True(t, req.IsCall(), "still a request, not a notification")
	assert.Equal(t, want.ID(), req.ID)
}
