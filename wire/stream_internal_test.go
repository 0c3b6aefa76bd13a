package wire

import (
	"context"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cannedStreams answers successive GETs with the given SSE bodies.
type cannedStreams struct {
	mu     sync.Mutex
	bodies []string
}

func (c *cannedStreams) RoundTrip(req *http.Request) (*http.Response, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.bodies) == 0 {
		return localResponse(req, http.StatusMethodNotAllowed, "text/plain", nil, nil), nil
	}
	body := c.bodies[0]
	c.bodies = c.bodies[1:]
	resp := localResponse(req, http.StatusOK, "text/event-stream", nil, nil)
	resp.Body = io.NopCloser(strings.NewReader(body))
	return resp, nil
}

func newTestStreamBody(t *testing.T, base http.RoundTripper) *streamBody {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://127.0.0.1/", nil)
	require.NoError(t, err)
	return newStreamBody(NewTransport(Config{Base: base}), req)
}

// readN reads n bytes through a buffer of size bufSize.
func readN(t *testing.T, r io.Reader, n, bufSize int) string {
	t.Helper()
	var out []byte
	p := make([]byte, bufSize)
	for len(out) < n {
		k, err := r.Read(p)
		require.NoError(t, err)
		out = append(out, p[:k]...)
	}
	return string(out)
}

// TestStreamBodySplicesWholeEvents: a stream cut inside an event is replaced
// by the next one without handing go-sdk the partial event, whatever the
// size of go-sdk's read buffer; a large event crosses many reads intact.
func TestStreamBodySplicesWholeEvents(t *testing.T) {
	large := "data: {\"x\":\"" + strings.Repeat("y", 100<<10) + "\"}\n\n"
	first := "id: 1\ndata: {\"a\":1}\n\n: keepalive\n\ndata: {\"b\""
	second := "data: {\"c\":3}\r\n\r\n" + large
	want := "id: 1\ndata: {\"a\":1}\n\n: keepalive\n\n" + "data: {\"c\":3}\r\n\r\n" + large
	for _, size := range []int{1, 7, 4096, 64 << 10} {
		base := &cannedStreams{bodies: []string{first, second}}
		b := newTestStreamBody(t, base)
		got := readN(t, b, len(want), size)
		assert.Equal(t, want, got, "buffer of %d bytes", size)
		assert.LessOrEqual(t, cap(b.out), keptBuffer, "no large buffer kept once drained")
		assert.LessOrEqual(t, cap(b.frame.buf), keptBuffer)
		require.NoError(t, b.Close())
	}
}

// TestStreamBodyMemoryPerEvent: a kept stream that delivered one small
// event has allocated a few hundred bytes, not a large read buffer.
func TestStreamBodyMemoryPerEvent(t *testing.T) {
	const n = 200
	const event = "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n"
	bodies := make([]*streamBody, n)
	for i := range bodies {
		bodies[i] = newTestStreamBody(t, nil)
		bodies[i].cur = io.NopCloser(strings.NewReader(event))
	}
	p := make([]byte, 4096)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for _, b := range bodies {
		k, err := b.Read(p)
		require.NoError(t, err)
		require.Equal(t, event, string(p[:k]))
	}
	runtime.ReadMemStats(&after)
	perStream := (after.TotalAlloc - before.TotalAlloc) / n
	assert.Less(t, perStream, uint64(keptBuffer), "bytes allocated per stream for one event")
}

// BenchmarkStreamBodyFirstEvent measures the memory a kept standalone
// stream takes to deliver its first event to a reader with go-sdk's buffer
// size (bufio's default 4 KiB).
func BenchmarkStreamBodyFirstEvent(b *testing.B) {
	t := NewTransport(Config{})
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://127.0.0.1/", nil)
	if err != nil {
		b.Fatal(err)
	}
	const event = "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n"
	p := make([]byte, 4096)
	b.ReportAllocs()
	for b.Loop() {
		body := newStreamBody(t, req)
		body.cur = io.NopCloser(strings.NewReader(event))
		n, err := body.Read(p)
		if err != nil || string(p[:n]) != event {
			b.Fatal(n, err)
		}
	}
}

// recordingStreams answers every GET with one SSE body and records the
// Last-Event-ID of each.
type recordingStreams struct {
	mu      sync.Mutex
	lastIDs []string
}

func (r *recordingStreams) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.lastIDs = append(r.lastIDs, req.Header.Get(headerLastEventID))
	r.mu.Unlock()
	resp := localResponse(req, http.StatusOK, "text/event-stream", nil, nil)
	resp.Body = io.NopCloser(strings.NewReader("id: 5\ndata: {}\n\n"))
	return resp, nil
}

func (r *recordingStreams) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.lastIDs...)
}

// TestReconnectGETGoesThroughKeeper: go-sdk's GET with the Last-Event-ID of
// the stream the keeper ended (the session is gone) gets the gone answer
// replayed locally, once; a GET with another Last-Event-ID (a POST stream's
// resumption) passes through.
func TestReconnectGETGoesThroughKeeper(t *testing.T) {
	base := &recordingStreams{}
	tr := NewTransport(Config{Base: base})
	tr.gone = &goneAnswer{status: http.StatusNotFound, header: http.Header{"Content-Type": {"text/plain"}}, body: []byte("gone")}
	tr.reconnectID = "4"
	get := func(id string) *http.Response {
		req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://127.0.0.1/", nil)
		require.NoError(t, err)
		req.Header.Set(headerLastEventID, id)
		resp, err := tr.RoundTrip(req)
		require.NoError(t, err)
		return resp
	}

	resp := get("other")
	assert.Equal(t, []string{"other"}, base.seen(), "passed through at once")
	require.NoError(t, resp.Body.Close())

	resp = get("4")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, "the gone answer, replayed")
	assert.Equal(t, []string{"other"}, base.seen(), "nothing dialed")
	require.NoError(t, resp.Body.Close())

	resp = get("4")
	assert.Equal(t, []string{"other", "4"}, base.seen(), "the expected reconnect is taken once")
	require.NoError(t, resp.Body.Close())
}
