package httpsession

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A notifications/cancelled for a request whose whole answer came with its
// response (here a 401 from a gateway and a JSON result) is answered
// locally: the server never sees it. A cancellation of a request still
// streaming its answer, or of an id never sent, goes out.
func TestCancelOfAnAnsweredRequestStaysLocal(t *testing.T) {
	var mu sync.Mutex
	var cancels []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				RequestID json.RawMessage `json:"requestId"`
			} `json:"params"`
		}
		require.NoError(t, json.Unmarshal(body, &m))
		switch m.Method {
		case "notifications/cancelled":
			mu.Lock()
			cancels = append(cancels, string(m.Params.RequestID))
			mu.Unlock()
			w.WriteHeader(http.StatusAccepted)
		case "tools/list":
			http.Error(w, "expired token", http.StatusUnauthorized)
		case "tools/call":
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"content":[]}}`)
		default: // a call answered as a stream that is still open
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}
	}))
	defer srv.Close()
	c := testConn(t, Config{}, srv.URL)
	ctx, stop := context.WithCancel(context.Background())
	defer stop() // ends the call still streaming
	call := func(body string) { writeRaw(t, c, ctx, body) }
	cancel := func(id string) {
		writeRaw(t, c, ctx, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`+id+`}}`)
	}

	call(`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}`)
	readUntilResponse(t, c)
	call(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"x"}}`)
	readUntilResponse(t, c)
	call(`{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"u"}}`)

	cancel("3") // the 401'd request
	cancel("4") // the answered call
	cancel("5") // the call still streaming
	cancel("9") // an id never sent
	cancel("3") // taken once: a second cancellation of 3 goes out

	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"5", "9", "3"}, cancels, "the server saw only the cancellations of requests it might still run")
}

// The answered ids are bounded by maxAnswered: past it the oldest is
// forgotten first, so its cancellation goes out again.
func TestAnsweredIDsForgetTheOldestPastTheBound(t *testing.T) {
	var a recent[struct{}]
	for i := range maxAnswered + 1 {
		a.add(strconv.Itoa(i), struct{}{}, maxAnswered)
	}
	assert.Equal(t, maxAnswered, a.len())
	taken := func(id string) bool { _, ok := a.take(id); return ok }
	assert.False(t, taken("0"), "the oldest is forgotten")
	assert.True(t, taken("1"), "the next oldest is kept")
	assert.True(t, taken(strconv.Itoa(maxAnswered)), "the newest is kept")
	assert.False(t, taken(strconv.Itoa(maxAnswered)), "taken once")
}
