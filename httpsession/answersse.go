package httpsession

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// wireSlack is how many more bytes than [Config.MaxSSEEvent] one event may
// take on the wire (gzip framing of incompressible data).
const wireSlack = 64 << 10

// Resumption of a call's event stream (MCP transports, resumability and
// redelivery; SEP-1699).
const (
	// maxAnswerResumes bounds the resumptions of one call's stream in a row
	// that bring no event with a new id.
	maxAnswerResumes = 3
	// defaultResumeDelay is the wait before a resumption when the server
	// sent no retry field (go-sdk waits about as long,
	// mcp/streamable.go reconnectInitialDelay).
	defaultResumeDelay = time.Second
	// maxResumeDelay caps the server's retry field.
	maxResumeDelay = 30 * time.Second
	// drainBytes and drainWait bound what is read of a call's stream after
	// its response (see answerStream.Close).
	drainBytes = 4 << 10
	drainWait  = time.Second
)

// answerStream reads a text/event-stream answer to a call with an
// [eventReader] and hands the session's conn only well-formed events, one
// JSON-RPC message each, decoded once (deliver). When the server's stream
// ends before the response after an event with an id, answerStream
// resumes it, with a GET carrying Last-Event-ID and the POST's
// headers, after the server's retry delay (at most 30 s; 1 s without one),
// at most [maxAnswerResumes] times in a row without progress (a new event
// id and a message). A 2026-07-28 request's stream is never resumed
// ([resumesStreams]): its loss is marked on the record
// ([Exchange.StreamLost]) for the caller to re-issue the request. The
// stream ends when the call's response came through.
//
// Server-to-client requests and notifications pass. Anything else fails the
// call, and only the call: the stream hands go-sdk a JSON-RPC error response
// for the call's id (code [CodeHTTPAnswer]) naming what was wrong, and ends.
// That is a line without a colon, an event over the bound, data that is not
// one JSON-RPC message, a response that does not answer the call (see
// [answerProblem]), a stream that ends or breaks before the response and
// cannot be resumed, and a refused resumption (any answer but a 200
// text/event-stream). A stream that breaks (a read error other than EOF:
// a reset, a truncated body) records its error as the call's TransportErr,
// so the call is classified transport, not protocol.
//
// One goroutine reads it ([answerStream.run]).
type answerStream struct {
	t    *Transport
	ctx  context.Context
	req  *http.Request // the call's POST, whose headers a resumption sends
	rec  *recorded     // the call's record in its slot; may be nil
	slot *slot         // the call's slot, told of Close; may be nil
	// method, requestID, status and contentType are the call's facts as
	// the answer's headers gave them: what a failure's response names.
	method, requestID string
	status            int
	contentType       string
	want              callID

	src       *bufio.Reader // bufs.src; nil once closed
	bufs      *callBuffers
	counter   wireCounter // the body's bytes on the wire since the last blank line (see [eventReader])
	body      io.Closer
	closeOnce sync.Once
	closeErr  error // the server's body's Close error

	ended    bool  // nothing comes after out and msg
	answered bool  // the call's response came through
	err      error // returned once out is drained (the caller's context ended)

	events eventReader // reads src, bounded by Config.MaxSSEEvent decoded and on the wire

	lastID  string // the last event id: a resumption's Last-Event-ID
	resumes int    // resumptions in a row without progress (see [answerStream.resumable])
	// What the stream brought since it was last (re)opened: an event id
	// other than the last, a message handed on.
	moved, delivered bool

	// deliver takes the stream's messages (the session's conn, conn.go);
	// sdkID is the call's id as go-sdk made it.
	deliver func(jsonrpc.Message)
	sdkID   jsonrpc.ID

	drainStart time.Time // when Close began to drain (see [drains])
	drainAt    int       // the index in drains.active; -1 once out of it
}

// newAnswerStream returns the stream go-sdk reads in place of resp's body,
// or the error of a Content-Encoding the Transport does not decode.
func (t *Transport) newAnswerStream(req *http.Request, x *Exchange, want callID, resp *http.Response) (*answerStream, error) {
	s := streamFor(req.Context())
	*s = answerStream{t: t, ctx: req.Context(), req: req, method: x.Method, requestID: x.RequestID, status: x.Status, contentType: x.ContentType,
		want: want, body: resp.Body}
	r, err := decodedBodyInto(resp, 0, &s.counter)
	if err != nil {
		return nil, err
	}
	s.bufs = callBufferPool.Get().(*callBuffers)
	s.src = s.bufs.src
	s.src.Reset(r)
	s.events = eventReader{max: t.cfg.MaxSSEEvent, wire: &s.counter, src: s.src, data: s.bufs.data[:0], line: s.bufs.line[:0]}
	return s, nil
}

// streamFor returns the storage of a new answer stream for a request made
// with ctx: the first one of a call is kept in the call's slot (see
// [WithExchange]), which spares a call with an event-stream answer an
// allocation of its own; any other is allocated.
func streamFor(ctx context.Context) *answerStream {
	if s, _ := ctx.Value(slotKey{}).(*slot); s != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		if !s.streamTaken {
			s.streamTaken = true
			return &s.stream
		}
	}
	return new(answerStream)
}

// answerBufferSize is the size of an answer stream's read buffer: a line
// longer than it is read in pieces (see [eventReader]).
const answerBufferSize = 4 << 10

// callBuffers are a call's answer stream's working buffers, which the
// stream takes when the answer comes and gives back on Close. One pool for all, so that
// calls in a row reuse them.
type callBuffers struct {
	src        *bufio.Reader
	data, line []byte
	decode     decodeScratch
}

var callBufferPool = sync.Pool{New: func() any {
	return &callBuffers{src: bufio.NewReaderSize(nil, answerBufferSize)}
}}

// release gives s's buffers back (the ones not grown past keptBuffer).
func (s *answerStream) release() {
	b := s.bufs
	s.bufs, s.src = nil, nil
	b.src.Reset(nil)
	b.data, b.line = keep(s.events.data), keep(s.events.line)
	b.decode = decodeScratch{}
	s.events.src, s.events.data, s.events.line = nil, nil, nil
	callBufferPool.Put(b)
}

// keep returns b emptied, or nil when it grew past keptBuffer.
func keep(b []byte) []byte {
	if cap(b) > keptBuffer {
		return nil
	}
	return b[:0]
}

// Close closes the server's stream. After the response it first reads
// what little is left (at most drainBytes, cut between drainWait and twice
// that; see [drains]), so that a server that ends the stream after the
// response, as go-sdk's does, leaves its connection reusable.
//
// The drain reads in the caller's goroutine; the Transport's drain timer
// closes the server's body when it takes too long, and the session's
// Close at once, which ends a read still waiting. net/http's bodies also
// end their read when the call's context ends.
func (s *answerStream) Close() error {
	if s.src == nil {
		s.closeBody() // closed before
		return s.closeErr
	}
	if s.answered && s.ctx.Err() == nil && s.t.drains.start(s) {
		_, _ = s.src.Discard(drainBytes)
		s.t.drains.stop(s)
	}
	s.closeBody()
	s.ended = true
	s.release()
	if s.slot != nil {
		s.slot.streamClosed()
	}
	return s.closeErr
}

// closeBody closes the server's body once; the drain timer and Close may
// both call it.
func (s *answerStream) closeBody() {
	s.closeOnce.Do(func() { s.closeErr = s.body.Close() })
}

// step reads the server's stream up to its next event and acts on it.
func (s *answerStream) step() {
	ev, err := s.events.Next()
	if err == nil {
		s.dispatch(ev)
		return
	}
	if bare, ok := err.(*sseLineError); ok {
		s.fail(fmt.Sprintf("SSE line without a colon: %.40q", bare.Start), false)
		return
	}
	resumable := s.resumable()
	switch {
	case s.ctx.Err() != nil:
		s.err = s.ctx.Err() // the caller gave up: go-sdk stops reading
		s.ended = true
		_ = s.body.Close()
	case errors.Is(err, errEventTooLarge):
		s.fail(err.Error(), true)
	case resumable:
		s.resume()
	case errors.Is(err, io.EOF):
		s.lose("SSE stream ended without the response", nil)
	default:
		s.lose("SSE stream broke off before the response: "+err.Error(), err)
	}
}

// resume reopens the call's stream after it ended before the response: a
// GET with Last-Event-ID (MCP transports, resumability and redelivery),
// through the Transport's base (no redirect is followed, nothing reaches
// the standalone stream's keeper). A refused resumption fails the call.
func (s *answerStream) resume() {
	_ = s.body.Close()
	s.resumes++
	delay := min(s.events.retry, maxResumeDelay)
	if delay <= 0 {
		delay = defaultResumeDelay
	}
	select {
	case <-s.t.clock.After(delay):
	case <-s.ctx.Done():
		s.err, s.ended = s.ctx.Err(), true
		return
	}
	get, err := http.NewRequestWithContext(s.ctx, http.MethodGet, s.req.URL.String(), nil)
	if err != nil {
		s.fail("resumption of the SSE stream failed: "+err.Error(), false)
		return
	}
	get.Header = s.req.Header.Clone()
	for _, h := range []string{"Content-Type", "Content-Length"} {
		get.Header.Del(h)
	}
	get.Header.Set("Accept", "text/event-stream")
	get.Header.Set("Accept-Encoding", acceptEncoding)
	get.Header.Set(headerLastEventID, s.lastID)
	resp, err := s.t.base.RoundTrip(get)
	switch {
	case s.ctx.Err() != nil:
		if err == nil {
			_ = resp.Body.Close()
		}
		s.err, s.ended = s.ctx.Err(), true
		return
	case err != nil:
		s.fail("resumption of the SSE stream failed: "+err.Error(), false)
		return
	}
	if ct := mediaType(resp.Header.Get("Content-Type")); resp.StatusCode != http.StatusOK || ct != "text/event-stream" {
		_ = readBounded(resp, s.t.cfg.MaxErrorBody)
		if ct == "" {
			ct = "no content type"
		}
		s.fail(fmt.Sprintf("resumption of the SSE stream refused: HTTP %d %s (%s)", resp.StatusCode, http.StatusText(resp.StatusCode), ct), false)
		return
	}
	r, err := decodedBodyInto(resp, 0, &s.counter)
	if err != nil {
		_ = resp.Body.Close()
		s.fail("resumption of the SSE stream refused: "+err.Error(), false)
		return
	}
	s.t.cfg.Logger.Debug("mcpsup/httpsession: event stream answer resumed", "method", s.method, "resumes", s.resumes)
	s.src.Reset(r)
	s.body = resp.Body
	s.events.reset() // an event cut by the end of the stream is dropped
}

// dispatch acts on one event of the stream.
func (s *answerStream) dispatch(ev sseEvent) {
	if ev.IDSet {
		s.moved = s.moved || ev.ID != s.lastID
		s.lastID = ev.ID
	}
	if !ev.message() {
		return // a priming event (SEP-1699), or a type go-sdk skips too
	}
	data := ev.Data
	// Into the call's buffers: a response is checked and handed on here,
	// not kept.
	msg, err := decodeMessageInto(data, s.want, &s.bufs.decode)
	if err != nil {
		s.fail("SSE event data is not a JSON-RPC message", false)
		return
	}
	if problem := s.decodeProblem(data, msg); problem != "" {
		s.fail(problem, true)
		return
	}
	if r, ok := msg.(*jsonrpc.Response); ok {
		if problem := answerProblem(r, s.want); problem != "" {
			s.fail(problem, false)
			return
		}
		problem, _ := s.t.check().Response(checkedRequest(s.req, s.method), r)
		if problem != "" {
			s.fail(problem, false)
			return
		}
		s.ended, s.answered = true, true // the call is answered: nothing more to read
	}
	s.delivered = true
	s.emit(data, msg)
}

// decodeProblem is the Transport's [msgcheck.Limits.Problem] of msg (data):
// the call's response, whose result is of the call's method, or a request
// or notification of the server's on the call's stream.
func (s *answerStream) decodeProblem(data []byte, msg jsonrpc.Message) string {
	method, payload := s.method, []byte(nil)
	switch m := msg.(type) {
	case *jsonrpc.Response:
		payload = m.Result
	case *jsonrpc.Request:
		method, payload = m.Method, m.Params
	}
	return s.t.decodeLimits().Problem(method, data, payload)
}

// resumable reports whether the stream, which just ended before the
// response, may be resumed: its request's era resumes streams
// ([resumesStreams]: never on 2026-07-28), it had an event id, and fewer than
// [maxAnswerResumes] of its attempts in a row brought no progress. Progress
// is a new event id and a message handed on in the same attempt: ids alone
// (priming events whose ids go back and forth, say) deliver nothing, and a
// server that sent a retry field of 1 ms had its call's stream resumed
// every millisecond until the call's deadline.
func (s *answerStream) resumable() bool {
	if s.moved && s.delivered {
		s.resumes = 0
	}
	s.moved, s.delivered = false, false
	return s.lastID != "" && s.resumes < maxAnswerResumes && resumesStreams(s.req.Header.Get(HeaderProtocolVersion))
}

// run reads the stream to its end, handing each message to deliver, and
// closes it.
func (s *answerStream) run() {
	for !s.ended && s.err == nil {
		s.step()
	}
	_ = s.Close()
}

// emit hands go-sdk msg, decoded from the event's data. msg aliases data:
// a data buffer the reader keeps for the next event (at most keptBuffer,
// [eventReader.endEvent]) is copied first; a longer one the reader let go
// of is handed on as it is.
func (s *answerStream) emit(data []byte, msg jsonrpc.Message) {
	own := func(b []byte) []byte {
		if cap(data) > keptBuffer {
			return b
		}
		return bytes.Clone(b)
	}
	switch m := msg.(type) {
	case *jsonrpc.Response:
		r := *m
		r.Result = own(m.Result)
		if r.ID == (jsonrpc.ID{}) {
			r.ID = s.sdkID
		}
		s.deliver(&r)
	case *jsonrpc.Request:
		r := *m
		r.Params = own(m.Params)
		s.deliver(&r)
	}
}

// fail ends the stream with a JSON-RPC error response for the call naming
// problem, and amends the call's record.
func (s *answerStream) fail(problem string, oversized bool) {
	s.end(problem, func(x *Exchange) { x.Malformed, x.Oversized = true, oversized })
}

// lose ends a stream that ended (cause nil) or broke (cause: the read's
// error) before the response and cannot be resumed, as fail does. A break
// is no complete HTTP answer: the record carries cause as its TransportErr
// (classified transport, outcome unknown), not Malformed. On 2026-07-28 the
// record says the request is lost with its stream ([Exchange.StreamLost]).
func (s *answerStream) lose(problem string, cause error) {
	lost := !resumesStreams(s.req.Header.Get(HeaderProtocolVersion))
	s.end(problem, func(x *Exchange) {
		x.StreamLost = lost
		if cause != nil {
			x.TransportErr = cause
		} else {
			x.Malformed = true
		}
	})
}

// end ends the stream with a JSON-RPC error response for the call naming
// problem, and amends the call's record with mark.
func (s *answerStream) end(problem string, mark func(*Exchange)) {
	_ = s.body.Close()
	s.ended = true
	amend := func(x *Exchange) {
		x.Rewritten, x.Problem = true, problem
		mark(x)
	}
	if s.rec != nil {
		s.rec.amend(amend)
	}
	if s.method == methodDiscover {
		s.t.amendDiscover(s.requestID, amend) // era.go: the era is judged on how the discover ended
	}
	s.t.cfg.Logger.Debug("mcpsup/httpsession: event stream answer refused, the call fails alone",
		"method", s.method, "problem", problem)
	s.deliver(errorMessage(s.sdkID, Exchange{Status: s.status, ContentType: s.contentType}, problem))
}
