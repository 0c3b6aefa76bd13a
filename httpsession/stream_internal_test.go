package httpsession

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/httpsession/sse"
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
	return newStreamBody(wireConn(Config{Base: base}, "http://127.0.0.1/", nil), context.Background())
}

// readN reads n bytes through a buffer of size bufSize.
// nextN returns the next n messages of b, written as the events they came
// in.
func nextN(t *testing.T, b *streamBody, n int) string {
	t.Helper()
	var msgs []jsonrpc.Message
	for range n {
		msg, done := b.next(b)
		require.False(t, done)
		msgs = append(msgs, msg)
	}
	return asEvents(t, msgs)
}

// TestStreamBodySplicesWholeEvents: a stream cut inside an event is replaced
// by the next one without handing go-sdk the partial event; a large event
// crosses many reads intact; go-sdk gets the messages, without ids.
func TestStreamBodySplicesWholeEvents(t *testing.T) {
	large := `{"jsonrpc":"2.0","method":"x","params":{"x":"` + strings.Repeat("y", 100<<10) + `"}}`
	first := "id: 1\ndata: " + listChanged + "\n\n: keepalive\n\ndata: {\"b\""
	second := "data: " + listChanged + "\r\n\r\ndata: " + large + "\n\n"
	want := "data: " + listChanged + "\n\n" + "data: " + listChanged + "\n\n" + "data: " + large + "\n\n"
	base := &cannedStreams{bodies: []string{first, second}}
	b := newTestStreamBody(t, base)
	assert.Equal(t, want, nextN(t, b, 3))
	assert.Equal(t, "1", b.lastID)
	require.NoError(t, b.Close())
}

// TestStreamBodyMemoryPerEvent: a kept stream that delivered one small
// event keeps its read buffer (the one go-sdk's reader of the stream held
// before) and a few hundred bytes, not a large buffer. (Decoding the event
// with go-sdk's jsonrpc.DecodeMessage allocates a 64 KiB read buffer that
// is garbage at once; go-sdk's own decode of the event does the same.)
func TestStreamBodyMemoryPerEvent(t *testing.T) {
	const n = 200
	const event = "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n"
	bodies := make([]*streamBody, n)
	for i := range bodies {
		bodies[i] = newTestStreamBody(t, nil)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for _, b := range bodies {
		require.NoError(t, b.open(&http.Response{Header: http.Header{}, Body: io.NopCloser(strings.NewReader(event))}))
		require.Equal(t, event, nextN(t, b, 1))
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(bodies)
	perStream := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n
	assert.Less(t, perStream, int64(readBufferSize+sse.KeptLine), "bytes kept per stream after one event")
}

// BenchmarkStreamBodyFirstEvent measures the memory a kept standalone
// stream takes to deliver its first message.
func BenchmarkStreamBodyFirstEvent(b *testing.B) {
	t := wireConn(Config{}, "http://127.0.0.1/", nil)
	const event = "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n"
	b.ReportAllocs()
	for b.Loop() {
		body := newStreamBody(t, context.Background())
		if err := body.open(&http.Response{Header: http.Header{}, Body: io.NopCloser(strings.NewReader(event))}); err != nil {
			b.Fatal(err)
		}
		if _, done := body.next(body); done {
			b.Fatal("the stream ended")
		}
	}
}

// TestStreamBodyHoldsServerRequestsToTheContentBound: on the standalone
// stream, a sampling request whose messages hold more content blocks than
// the Transport's MaxContentBlocks is dropped before go-sdk decodes it, and
// the next event passes; at the bound it is handed on.
func TestStreamBodyHoldsServerRequestsToTheContentBound(t *testing.T) {
	sampling := `{"jsonrpc":"2.0","id":"s","method":"sampling/createMessage","params":{"messages":[{"content":[{},{}]}]}}`
	next := "data: " + listChanged + "\n\n"
	for _, c := range []struct {
		bound int
		want  string
		n     int
	}{{1, next, 1}, {2, "data: " + sampling + "\n\n" + next, 2}} {
		base := &cannedStreams{bodies: []string{"data: " + sampling + "\n\n" + next}}
		b := newStreamBody(wireConn(Config{Base: base, MaxContentBlocks: c.bound}, "http://127.0.0.1/", nil), context.Background())
		assert.Equal(t, c.want, nextN(t, b, c.n), "MaxContentBlocks %d", c.bound)
		require.NoError(t, b.Close())
	}
}

// localResponse builds an answer in the server's place.
// header (nil for none) becomes the answer's own: callers pass a fresh or
// cloned one.
func localResponse(req *http.Request, status int, contentType string, header http.Header, body []byte) *http.Response {
	h := header
	if h == nil {
		h = http.Header{}
	}
	if contentType != "" {
		h.Set("Content-Type", contentType)
	}
	return &http.Response{
		Status:        strconv.Itoa(status) + " " + http.StatusText(status),
		StatusCode:    status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h,
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}
}
