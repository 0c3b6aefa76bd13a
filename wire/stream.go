package wire

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/mcpsup/mcpsup/classify"
)

// StreamConfig configures the keeper of the standalone SSE stream. The zero
// value selects the documented defaults.
//
// go-sdk v1.8.0 ends the whole session when its standalone GET stream fails
// for good: MaxRetries reconnects without a new event id (a go-sdk server
// sends none, so a proxy that cuts idle streams is enough), a 4xx/5xx on a
// reconnect, or a 5xx on the first GET. The keeper prevents this (DESIGN.md
// failure story S5): go-sdk's single GET is answered with a body that never
// ends by itself. When the server's stream ends, the body re-dials the
// server with a bounded backoff and splices the new stream in, delivering
// only whole SSE events so a stream cut mid-event cannot corrupt go-sdk's
// reader. go-sdk keeps processing every server message with the host's
// handlers. Only a sign that the session is really gone (404 to a request
// with Mcp-Session-Id, a 4xx with a null-id -32000 JSON-RPC error, 401) ends
// the body; go-sdk's next GET then gets that answer replayed, and the
// session ends as go-sdk ends it (without DELETE after a 404).
type StreamConfig struct {
	// Span is how long an attempt must live, or deliver an event, not to
	// count as failing at once. Default 2s.
	Span time.Duration
	// InitialBackoff is the wait before re-dialing after an attempt that
	// failed at once; it doubles per consecutive failure up to MaxBackoff.
	// After an attempt that lived past Span, the re-dial is immediate.
	// Defaults 1s and 30s.
	InitialBackoff time.Duration
	MaxBackoff     time.Duration
	// MaxFailedRedials is how many consecutive attempts may fail at once
	// before the keeper holds the stream silently, as if
	// [Transport.HoldStream] had been called; HoldStream(false) restarts it.
	// Default 8.
	MaxFailedRedials int
	// MaxEventBytes bounds the buffer of one incomplete SSE event. An event
	// larger than this is passed on unbuffered, and a stream cut inside it
	// is ended (go-sdk then reconnects by itself) rather than spliced.
	// Default 1 MiB.
	MaxEventBytes int
}

func (c StreamConfig) withDefaults() StreamConfig {
	if c.Span <= 0 {
		c.Span = 2 * time.Second
	}
	if c.InitialBackoff <= 0 {
		c.InitialBackoff = time.Second
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = 30 * time.Second
	}
	if c.MaxBackoff < c.InitialBackoff {
		c.MaxBackoff = c.InitialBackoff
	}
	if c.MaxFailedRedials <= 0 {
		c.MaxFailedRedials = 8
	}
	if c.MaxEventBytes <= 0 {
		c.MaxEventBytes = 1 << 20
	}
	return c
}

// StreamEnd says how a standalone stream attempt ended.
type StreamEnd uint8

// How an attempt ends.
const (
	// EndNoAnswer: the GET got no HTTP answer (refused, reset, ...).
	EndNoAnswer StreamEnd = iota + 1
	// EndNotStream: the answer was not a 200 text/event-stream.
	EndNotStream
	// EndEOF: the server ended the stream.
	EndEOF
	// EndError: reading the stream failed.
	EndError
	// EndClosed: the client closed the stream (session closed).
	EndClosed
)

func (e StreamEnd) String() string {
	switch e {
	case EndNoAnswer:
		return "no-answer"
	case EndNotStream:
		return "not-stream"
	case EndEOF:
		return "eof"
	case EndError:
		return "error"
	case EndClosed:
		return "closed"
	}
	return "unknown"
}

// StreamAttempt records one GET of the standalone SSE stream.
type StreamAttempt struct {
	// Seq numbers the attempts of one go-sdk stream from 1.
	Seq int
	// Status and ContentType of the answer; Status 0 when none came.
	Status      int
	ContentType string
	// End says how the attempt ended; Err is the error behind EndNoAnswer
	// and EndError.
	End StreamEnd
	Err error
	// Bytes and Events delivered to go-sdk (events: SSE events with at
	// least one field; comments are not events).
	Bytes  int64
	Events int
	// SessionGone reports an answer that says the session is over.
	SessionGone bool
	// Start and Duration on the Transport's clock.
	Start    time.Time
	Duration time.Duration
}

// FailedAtOnce reports whether the attempt failed at once: it was not ended
// by the client, did not signal a gone session, delivered no event and
// ended within span.
func (a StreamAttempt) FailedAtOnce(span time.Duration) bool {
	return a.End != EndClosed && !a.SessionGone && a.Events == 0 && a.Duration < span
}

var errStreamClosed = errors.New("mcpsup/wire: standalone stream closed")

// standaloneGET answers go-sdk's standalone stream GET.
func (t *Transport) standaloneGET(req *http.Request) (*http.Response, error) {
	if resp := t.replayGone(req); resp != nil {
		return resp, nil
	}
	b := &streamBody{t: t, req: req, ctx: req.Context(), closed: make(chan struct{})}
	resp, kind, err := b.dial()
	switch kind {
	case dialStream:
		out := *resp
		out.Body = b
		return &out, nil
	case dialDeclined:
		return resp, nil
	case dialGone:
		b.ended = true
	case dialFailed:
		if b.ctx.Err() != nil {
			return nil, err
		}
	}
	out := localResponse(req, http.StatusOK, "text/event-stream", nil, nil)
	out.Body, out.ContentLength = b, -1
	return out, nil
}

// replayGone returns the recorded session-gone answer, if any.
func (t *Transport) replayGone(req *http.Request) *http.Response {
	t.mu.Lock()
	g := t.gone
	t.mu.Unlock()
	if g == nil {
		return nil
	}
	x := t.begin(req)
	x.Local, x.Status, x.ContentType, x.SessionGone = true, g.StatusCode, mediaType(g.Header.Get("Content-Type")), true
	t.finish(req, x)
	body, _ := io.ReadAll(g.Body)
	g.Body = io.NopCloser(bytes.NewReader(body))
	return localResponse(req, g.StatusCode, "", g.Header, body)
}

type dialKind uint8

const (
	dialStream   dialKind = iota // a 200 text/event-stream: reading
	dialDeclined                 // first GET answered "no stream here": go-sdk sees it as is
	dialGone                     // the session is over
	dialFailed                   // try again later
)

// streamBody is the never-ending body go-sdk reads as its standalone stream.
type streamBody struct {
	t   *Transport
	req *http.Request
	ctx context.Context

	closeOnce sync.Once
	closed    chan struct{}

	mu  sync.Mutex
	cur io.ReadCloser // the server's current stream, nil between attempts

	// Owned by the reading goroutine.
	seq      int
	att      StreamAttempt
	failures int  // consecutive attempts that failed at once
	ended    bool // deliver EOF once out is drained
	unsafe   bool // an oversized event is being passed through
	frame    sseFramer
	out      []byte
	chunk    []byte
}

// dial makes one attempt. It reports every attempt that does not become a
// live stream at once.
func (b *streamBody) dial() (*http.Response, dialKind, error) {
	b.seq++
	req := b.req.Clone(b.ctx)
	if id := b.frame.lastID; id != "" {
		req.Header.Set(headerLastEventID, id)
	}
	x := b.t.begin(req)
	b.att = StreamAttempt{Seq: b.seq, Start: x.Start}
	resp, err := b.t.base.RoundTrip(req)
	b.t.fill(&x, resp, err)
	if err != nil {
		b.t.finish(req, x)
		b.att.End, b.att.Err = EndNoAnswer, err
		b.report()
		return nil, dialFailed, err
	}
	b.att.Status, b.att.ContentType = x.Status, x.ContentType
	if x.Status == http.StatusOK && x.ContentType == "text/event-stream" {
		b.t.finish(req, x)
		b.setCur(resp.Body)
		return resp, dialStream, nil
	}
	prefix := readPrefix(resp, b.t.cfg.MaxErrorBody)
	_ = resp.Body.Close()
	x.Body = snippet(prefix)
	if r, ok := classify.ParseRPCError(prefix); ok {
		x.RPC, x.RPCPresent = r, true
	}
	x.SessionGone = sessionGone(x) || x.Status == http.StatusUnauthorized
	b.t.finish(req, x)
	b.att.End, b.att.SessionGone = EndNotStream, x.SessionGone
	b.report()
	if x.SessionGone {
		g := localResponse(req, x.Status, "", resp.Header, prefix)
		b.t.mu.Lock()
		if b.t.gone == nil {
			b.t.gone = g
		}
		b.t.mu.Unlock()
		return nil, dialGone, nil
	}
	// First GET: go-sdk tolerates 405, other 4xx and non-SSE answers by
	// giving up the stream (mcp/streamable.go connectStandaloneSSE); it
	// fails the session on 5xx, so those are kept here.
	declined := x.Status < 500 && x.Status != http.StatusTooManyRequests
	if b.seq == 1 && declined {
		resp.Body = io.NopCloser(bytes.NewReader(prefix))
		return resp, dialDeclined, nil
	}
	return nil, dialFailed, nil
}

func (b *streamBody) setCur(rc io.ReadCloser) {
	b.mu.Lock()
	b.cur = rc
	b.mu.Unlock()
	select {
	case <-b.closed:
		_ = rc.Close()
	default:
	}
}

// report ends the current attempt's record.
func (b *streamBody) report() {
	b.att.Duration = b.t.clock.Since(b.att.Start)
	switch {
	case b.att.End == EndClosed:
	case b.att.FailedAtOnce(b.t.stream.Span):
		b.failures++
	default:
		b.failures = 0
	}
	b.t.log.Debug("mcpsup/wire: standalone stream attempt ended",
		"seq", b.att.Seq, "status", b.att.Status, "end", b.att.End.String(),
		"events", b.att.Events, "bytes", b.att.Bytes, "duration", b.att.Duration)
	if f := b.t.cfg.OnStreamAttempt; f != nil {
		f(b.att)
	}
}

// Read implements io.Reader.
func (b *streamBody) Read(p []byte) (int, error) {
	for {
		if len(b.out) > 0 {
			n := copy(p, b.out)
			b.out = b.out[n:]
			return n, nil
		}
		if err := b.stopped(); err != nil {
			return 0, err
		}
		if b.ended {
			return 0, io.EOF
		}
		b.mu.Lock()
		cur := b.cur
		b.mu.Unlock()
		if cur == nil {
			if err := b.redial(); err != nil {
				return 0, err
			}
			continue
		}
		if b.chunk == nil {
			b.chunk = make([]byte, 32<<10)
		}
		n, err := cur.Read(b.chunk)
		if n > 0 {
			b.take(b.chunk[:n])
		}
		if err != nil {
			b.endAttempt(cur, err)
		}
	}
}

// stopped reports the client closing the stream.
func (b *streamBody) stopped() error {
	select {
	case <-b.closed:
		return errStreamClosed
	default:
	}
	return b.ctx.Err()
}

// take frames newly read bytes, queuing whole events for go-sdk.
func (b *streamBody) take(p []byte) {
	if b.unsafe {
		b.out = append(b.out, p...)
		b.att.Bytes += int64(len(p))
		return
	}
	events, ready := b.frame.push(p)
	b.att.Events += events
	if len(b.frame.buf) > b.t.stream.MaxEventBytes {
		// Too large to buffer: pass it on; a cut now cannot be spliced.
		ready, b.unsafe = append(ready, b.frame.buf...), true
		b.frame.reset()
	}
	b.out = append(b.out, ready...)
	b.att.Bytes += int64(len(ready))
}

// endAttempt closes the server's stream after it ended with err.
func (b *streamBody) endAttempt(cur io.ReadCloser, err error) {
	_ = cur.Close()
	b.mu.Lock()
	b.cur = nil
	b.mu.Unlock()
	switch {
	case b.stopped() != nil:
		b.att.End = EndClosed
	case errors.Is(err, io.EOF):
		b.att.End = EndEOF
	default:
		b.att.End, b.att.Err = EndError, err
	}
	b.report()
	if b.unsafe {
		b.ended = true // cut inside an event we could not hold back
	}
	b.frame.reset()
}

// redial waits for the backoff (or while held) and makes the next attempt.
func (b *streamBody) redial() error {
	for {
		hold, changed := b.t.holding()
		if hold || b.failures >= b.t.stream.MaxFailedRedials {
			select {
			case <-changed:
				if h, _ := b.t.holding(); !h {
					b.failures = 0
				}
				continue
			case <-b.closed:
				return errStreamClosed
			case <-b.ctx.Done():
				return b.ctx.Err()
			}
		}
		if d := b.backoff(); d > 0 {
			select {
			case <-b.t.clock.After(d):
			case <-changed:
				continue
			case <-b.closed:
				return errStreamClosed
			case <-b.ctx.Done():
				return b.ctx.Err()
			}
		}
		if _, kind, _ := b.dial(); kind == dialGone {
			b.ended = true
		}
		return b.stopped()
	}
}

// backoff is the wait before the next attempt.
func (b *streamBody) backoff() time.Duration {
	if b.failures == 0 {
		return 0
	}
	d := b.t.stream.InitialBackoff
	for i := 1; i < b.failures && d < b.t.stream.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, b.t.stream.MaxBackoff)
}

// Close implements io.Closer; it ends the stream for good.
func (b *streamBody) Close() error {
	b.closeOnce.Do(func() { close(b.closed) })
	b.mu.Lock()
	cur := b.cur
	b.mu.Unlock()
	if cur != nil {
		return cur.Close()
	}
	return nil
}
