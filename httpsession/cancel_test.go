package httpsession

import (
	"bytes"
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
	tr := NewTransport(Config{})
	post := func(body string) *http.Response {
		req, err := http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader([]byte(body)))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := tr.RoundTrip(req)
		require.NoError(t, err)
		return resp
	}
	drain := func(resp *http.Response) { _, _ = io.Copy(io.Discard, resp.Body); resp.Body.Close() }
	cancel := func(id string) int {
		resp := post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `}}`)
		defer drain(resp)
		return resp.StatusCode
	}

	drain(post(`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}`))
	drain(post(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"x"}}`))
	streaming := post(`{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"u"}}`)

	assert.Equal(t, http.StatusAccepted, cancel("3"), "the 401'd request")
	assert.Equal(t, http.StatusAccepted, cancel("4"), "the answered call")
	assert.Equal(t, http.StatusAccepted, cancel("5"), "the call still streaming")
	assert.Equal(t, http.StatusAccepted, cancel("9"), "an id never sent")
	assert.Equal(t, http.StatusAccepted, cancel("3"), "taken once: a second cancellation of 3 goes out")
	streaming.Body.Close()

	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"5", "9", "3"}, cancels, "the server saw only the cancellations of requests it might still run")
}

// The answered ids are bounded by maxAnswered: past it the oldest is
// forgotten first, so its cancellation goes out again.
func TestAnsweredIDsForgetTheOldestPastTheBound(t *testing.T) {
	var a answeredIDs
	for i := range maxAnswered + 1 {
		a.add(strconv.Itoa(i))
	}
	assert.Len(t, a.set, maxAnswered)
	assert.False(t, a.take("0"), "the oldest is forgotten")
	assert.True(t, a.take("1"), "the next oldest is kept")
	assert.True(t, a.take(strconv.Itoa(maxAnswered)), "the newest is kept")
	assert.False(t, a.take(strconv.Itoa(maxAnswered)), "taken once")
}
