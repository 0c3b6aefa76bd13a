package httpsession

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A resumed session's conn moves go-sdk's integer request ids on the wire
// by the shift, and a cancellation's params.requestId with them (MCP basic
// protocol, requests: an id "MUST NOT have been previously used by the
// requestor within the same session"); every other member keeps its text
// (no HTML escaping). A response to the server's request and an id that is
// not an integer go out as they are. The answer comes back with go-sdk's id.
func TestConnShiftsIDsOnTheWire(t *testing.T) {
	var mu sync.Mutex
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(body))
		mu.Unlock()
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal(body, &m)
		if len(m.ID) == 0 || bytes.Contains(body, []byte(`"result"`)) {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{}}`)
	}))
	defer srv.Close()
	c := wireConn(Config{}, srv.URL, &handshake{protocolVersion: "2025-11-25", sessionID: "s"})
	defer c.Close()
	shift := c.shift
	require.GreaterOrEqual(t, shift, int64(minIDShift))

	ctx := context.Background()
	writeRaw(t, c, ctx, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"a<b>&c","arguments":{"q":"x < y"}}}`)
	got := readUntilResponse(t, c)
	assert.Equal(t, want7(t), got[0].(*jsonrpc.Response).ID, "go-sdk gets its own id back")
	writeRaw(t, c, ctx, `{"jsonrpc":"2.0","id":"s-1","method":"ping"}`)
	readUntilResponse(t, c)
	writeRaw(t, c, ctx, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9,"reason":"gone"}}`) // 7 is answered: its cancellation stays local
	writeRaw(t, c, ctx, `{"jsonrpc":"2.0","id":7,"result":{}}`)

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, bodies, 4)
	moved := strconv.FormatInt(7+shift, 10)
	assert.Contains(t, bodies[0], `"id":`+moved)
	assert.Contains(t, bodies[0], `"a<b>&c"`, "no HTML escaping")
	assert.Contains(t, bodies[1], `"id":"s-1"`, "not go-sdk's numbering")
	assert.Contains(t, bodies[2], `"requestId":`+strconv.FormatInt(9+shift, 10))
	assert.Contains(t, bodies[3], `"id":7`, "a response carries the server's id")
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
