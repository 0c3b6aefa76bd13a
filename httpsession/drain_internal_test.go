package httpsession

import (
	"bytes"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// heldBody is a call's answer: its event, then, unless it ends, nothing
// until it is closed, as from a server that keeps the stream open after the
// response.
type heldBody struct {
	r      io.Reader
	ends   bool
	closed chan struct{}
	once   sync.Once
	mu     sync.Mutex
	eof    bool // read to its end before Close
}

func newHeldBody(ends bool) *heldBody {
	return &heldBody{r: bytes.NewReader([]byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n\n")), ends: ends, closed: make(chan struct{})}
}

func (b *heldBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if n > 0 || err == nil {
		return n, nil
	}
	if b.ends {
		b.mu.Lock()
		b.eof = true
		b.mu.Unlock()
		return 0, io.EOF
	}
	<-b.closed
	return 0, io.ErrUnexpectedEOF
}

func (b *heldBody) Close() error {
	b.once.Do(func() { close(b.closed) })
	return nil
}

func (b *heldBody) readToEnd() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.eof
}

// bodyBase answers each POST with a 200 text/event-stream of the next body.
type bodyBase struct{ bodies chan io.ReadCloser }

// drainingConn returns a conn whose answers are the bodies sent to the
// base, room for calls of them, and whose drains are cut after wait.
func drainingConn(t *testing.T, calls int, wait time.Duration) (bodyBase, *conn) {
	base := bodyBase{bodies: make(chan io.ReadCloser, calls)}
	tr := testConn(t, Config{Base: base}, "http://127.0.0.1/")
	tr.drains.wait = wait
	return base, tr
}

func (h bodyBase) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body:   <-h.bodies, ContentLength: -1, Request: req}, nil
}

// A stream the server holds open after the response is cut by the
// drain bound, and only it: streams that end are read to their end (their
// connection stays reusable), whichever order they close in.
func TestDrainTimerCutsOnlyHeldStreams(t *testing.T) {
	const calls = 6
	base, tr := drainingConn(t, calls, time.Millisecond)
	bodies := make([]*heldBody, calls)
	for i := range bodies {
		bodies[i] = newHeldBody(i%2 == 0)
		base.bodies <- bodies[i]
	}
	var wg sync.WaitGroup
	for range calls {
		got, ctx := callThrough(t, tr)
		require.Equal(t, `{}`, string(got[len(got)-1].(*jsonrpc.Response).Result))
		closed := make(chan struct{})
		AfterAnswers(ctx, func() { close(closed) })
		wg.Go(func() { <-closed })
	}
	wg.Wait() // returns only once the held streams were cut
	for i, b := range bodies {
		assert.Equal(t, i%2 == 0, b.readToEnd(), "body %d read to its end", i)
	}
	tr.drains.mu.Lock()
	defer tr.drains.mu.Unlock()
	assert.Empty(t, tr.drains.active)
}

// racingBody is a call's answer whose end, after the response, comes from
// another goroutine, racing the drain timer's cut; it counts its Closes.
type racingBody struct {
	r      io.Reader
	end    chan struct{}
	closed chan struct{}
	closes atomic.Int32
}

func (b *racingBody) Read(p []byte) (int, error) {
	if n, _ := b.r.Read(p); n > 0 {
		return n, nil
	}
	select {
	case <-b.end:
		return 0, io.EOF
	case <-b.closed:
		return 0, io.ErrUnexpectedEOF
	}
}

func (b *racingBody) Close() error {
	if b.closes.Add(1) == 1 {
		close(b.closed)
	}
	return nil
}

// Many calls closing at once, their servers ending the streams while the
// drain timer cuts: every Close returns, every server body is closed once,
// and no drain is left watched.
func TestDrainCutRacingEnds(t *testing.T) {
	const calls = 64
	base, tr := drainingConn(t, calls, time.Microsecond)
	bodies := make([]*racingBody, calls)
	for i := range bodies {
		bodies[i] = &racingBody{r: bytes.NewReader([]byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n\n")),
			end: make(chan struct{}), closed: make(chan struct{})}
		base.bodies <- bodies[i]
	}
	var wg sync.WaitGroup
	for i := range calls {
		_, ctx := callThrough(t, tr)
		closed := make(chan struct{})
		AfterAnswers(ctx, func() { close(closed) })
		wg.Go(func() { <-closed })
		wg.Go(func() { close(bodies[i].end) })
	}
	wg.Wait()
	for i, b := range bodies {
		assert.EqualValues(t, 1, b.closes.Load(), "body %d closed once", i)
	}
	tr.drains.mu.Lock()
	defer tr.drains.mu.Unlock()
	assert.Empty(t, tr.drains.active)
}
