package httpsession

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A shifted request differs from go-sdk's in its id alone: every other
// member keeps its text (no HTML escaping), and the body can be read again.
// A cancellation moves params.requestId; a response to the server, an id
// that is not an integer, and a shift of 0 leave the request as it was.
func TestShiftRequestMovesTheIDAlone(t *testing.T) {
	post := func(body string) (*http.Request, *Exchange) {
		req, err := http.NewRequest(http.MethodPost, "http://127.0.0.1/", bytes.NewReader([]byte(body)))
		require.NoError(t, err)
		x := new(Exchange)
		x.Method, x.RequestID = requestIdentity(req)
		return req, x
	}
	members := func(req *http.Request) map[string]any {
		body, err := req.GetBody()
		require.NoError(t, err)
		data, err := io.ReadAll(body)
		require.NoError(t, err)
		require.Equal(t, int64(len(data)), req.ContentLength)
		var m map[string]any
		require.NoError(t, json.Unmarshal(data, &m))
		return m
	}

	req, x := post(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"a<b>&c","arguments":{"q":"x < y"}}}`)
	out, moved := shiftRequest(req, x, 1<<40)
	require.True(t, moved)
	m := members(out)
	assert.Equal(t, float64(1<<40+7), m["id"])
	assert.Equal(t, map[string]any{"name": "a<b>&c", "arguments": map[string]any{"q": "x < y"}}, m["params"])
	body, _ := out.GetBody()
	data, _ := io.ReadAll(body)
	assert.Contains(t, string(data), `"a<b>&c"`, "no HTML escaping")
	assert.Equal(t, "7", x.RequestID, "the exchange keeps go-sdk's id")

	req, x = post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"gone"}}`)
	out, moved = shiftRequest(req, x, 1<<40)
	require.True(t, moved)
	assert.Equal(t, map[string]any{"requestId": float64(1<<40 + 7), "reason": "gone"}, members(out)["params"])

	for _, body := range []string{
		`{"jsonrpc":"2.0","id":7,"result":{}}`,         // a response to the server's request 7
		`{"jsonrpc":"2.0","id":"s-1","method":"ping"}`, // not go-sdk's numbering
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"s-1"}}`,
	} {
		req, x := post(body)
		out, moved := shiftRequest(req, x, 1<<40)
		assert.False(t, moved, body)
		assert.Same(t, req, out, body)
	}
	req, x = post(`{"jsonrpc":"2.0","id":7,"method":"ping"}`)
	out, moved = shiftRequest(req, x, 0)
	assert.False(t, moved)
	assert.Same(t, req, out)
}

// Shifted ids stay within what go-sdk reads exactly (a float64) and what
// the plain-integer path reads: 15 digits.
func TestIDShiftRange(t *testing.T) {
	for range 1000 {
		s := newIDShift()
		require.GreaterOrEqual(t, s, int64(minIDShift))
		require.Less(t, s, int64(maxIDShift))
	}
	_, ok := plainInt([]byte("70368744177664")) // maxIDShift: 14 digits
	require.True(t, ok)
}
