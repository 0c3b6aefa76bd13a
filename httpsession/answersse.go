package httpsession

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpsup/mcpsup/httpsession/sse"
	"github.com/mcpsup/mcpsup/httpsession/wirebody"
)

// Resumption and drain of a call's event stream (MCP 2025-11-25
// transports, resumability and redelivery; decision record 0009).
const (
	maxAnswerResumes   = 3                // resumptions in a row without progress
	defaultResumeDelay = time.Second      // without a retry field (go-sdk's reconnectInitialDelay)
	maxResumeDelay     = 30 * time.Second // caps the retry field
	drainBytes         = 4 << 10          // read of a stream after its response, at most
	drainWait          = time.Second      // and for at most this long
)

// answerStream is a call's text/event-stream answer: the [sseOwner] of an
// [sseLoop] on its own goroutine (run), handing deliver each message,
// decoded once; resumed (2025-11-25) or lost (2026-07-28) as decision
// records 0006 and 0009 say. Anything else wrong fails the call alone.
type answerStream struct {
	sseLoop
	req     *http.Request         // the call's POST: its context and protocol version
	x       Exchange              // the call's record as the answer's headers left it
	slot    *Exchanges            // the call's, told of the end; may be nil
	recN    int                   // the call's record in slot
	want    callID                // the id the response must carry
	deliver func(jsonrpc.Message) // the conn's queue
	sdkID   jsonrpc.ID            // the call's id as go-sdk made it
	session string                // the answer's Mcp-Session-Id (conn.noteResult)

	answered  bool // the call's response came through
	resumes   int  // resumptions in a row without progress
	delivered bool // a message was handed on since the answer opened
}

// run reads the stream to its end, then drains what little follows the
// response, so that the connection stays reusable (a server ends the stream
// after the response, as go-sdk's does), and closes it.
func (s *answerStream) run() {
	for {
		msg, done := s.next(s)
		if msg != nil {
			s.deliver(msg)
		}
		if done {
			break
		}
	}
	if s.answered && s.ctx.Err() == nil && s.current() != nil {
		s.c.drains.drain(s)
	}
	_ = s.Close()
	if s.slot != nil {
		s.slot.streamClosed()
	}
}

func (s *answerStream) event(ev sse.Event, line *sse.LineError) (jsonrpc.Message, bool) {
	if line != nil {
		return s.fail(fmt.Sprintf("SSE line without a colon: %.40q", line.Start), false)
	}
	if !ev.Message() {
		return nil, false // a priming event (SEP-1699), or a type go-sdk skips too
	}
	msg, err := decodeMessageFor(ev.Data, s.want)
	if err != nil {
		return s.fail("SSE event data is not a JSON-RPC message", false)
	}
	method, payload := s.x.Method, []byte(nil) // what msgcheck.Limits bound: the response's, or a request's of the server
	switch m := msg.(type) {
	case *jsonrpc.Response:
		payload = m.Result
	case *jsonrpc.Request:
		method, payload = m.Method, m.Params
	}
	if problem := s.c.cfg.limits.Problem(method, ev.Data, payload); problem != "" {
		return s.fail(problem, true)
	}
	s.delivered = true
	r, ok := msg.(*jsonrpc.Response)
	if !ok {
		return msg, false
	}
	if problem := answerProblem(r, s.want); problem != "" {
		return s.fail(problem, false)
	}
	if problem := s.c.checkResponse(s.req, s.x.Method, r); problem != "" {
		return s.fail(problem, false)
	}
	if r.ID == (jsonrpc.ID{}) {
		r.ID = s.sdkID
	}
	s.c.noteResult(s.x.Method, s.session, r)
	s.answered = true
	return r, true
}

func (s *answerStream) ended(err error) (jsonrpc.Message, bool) {
	switch {
	case s.ctx.Err() != nil:
		return nil, true // the caller gave up: go-sdk stops reading
	case errors.Is(err, sse.ErrEventTooLarge):
		return s.fail(err.Error(), true)
	case s.resumable():
		return nil, false
	case errors.Is(err, io.EOF):
		return s.lose("SSE stream ended without the response", nil)
	}
	return s.lose("SSE stream broke off before the response: "+err.Error(), err)
}

// resumable reports whether the stream, which ended before the response,
// may be resumed. Progress is a new event id and a message in the same
// answer: ids alone deliver nothing.
func (s *answerStream) resumable() bool {
	if s.moved && s.delivered {
		s.resumes = 0
	}
	s.delivered = false
	return s.lastID != "" && s.resumes < maxAnswerResumes && resumesStreams(s.req.Header.Get(HeaderProtocolVersion))
}

// redial resumes the stream with a GET after the last event id (no
// redirect followed); a refused resumption fails the call.
func (s *answerStream) redial() (jsonrpc.Message, bool) {
	s.resumes++
	delay := cmp.Or(min(s.events.Retry(), maxResumeDelay), defaultResumeDelay)
	if _, err := s.sleep(s.c.cfg.Clock.After(delay), nil); err != nil {
		return nil, true
	}
	req, err := s.c.streamGET(s.ctx, s.lastID)
	var resp *http.Response
	if err == nil {
		resp, err = s.c.send(req, 0)
	}
	switch {
	case s.ctx.Err() != nil:
		if err == nil {
			_ = resp.Body.Close()
		}
		return nil, true
	case err != nil:
		return s.fail("resumption of the SSE stream failed: "+err.Error(), false)
	}
	if ct := mediaType(resp.Header.Get("Content-Type")); resp.StatusCode != http.StatusOK || ct != "text/event-stream" {
		_ = wirebody.Read(resp, s.c.cfg.MaxErrorBody)
		return s.fail(fmt.Sprintf("resumption of the SSE stream refused: HTTP %d %s (%s)", resp.StatusCode,
			http.StatusText(resp.StatusCode), cmp.Or(ct, "no content type")), false)
	}
	if err := s.open(resp); err != nil {
		return s.fail("resumption of the SSE stream refused: "+err.Error(), false)
	}
	s.c.cfg.Logger.Debug("mcpsup/httpsession: event stream answer resumed", "method", s.x.Method, "resumes", s.resumes)
	return nil, false
}

// fail ends the stream with a JSON-RPC error response for the call naming
// problem, and marks the call's record Malformed.
func (s *answerStream) fail(problem string, oversized bool) (jsonrpc.Message, bool) {
	return s.end(problem, func(x *Exchange) { x.Malformed, x.Oversized = true, oversized })
}

// lose ends a stream that ended (cause nil) or broke (cause: the read's
// error) before the response and cannot be resumed. A break is no complete
// HTTP answer: the record carries cause as its TransportErr. On 2026-07-28
// the record says the request is lost with its stream.
func (s *answerStream) lose(problem string, cause error) (jsonrpc.Message, bool) {
	lost := !resumesStreams(s.req.Header.Get(HeaderProtocolVersion))
	return s.end(problem, func(x *Exchange) {
		x.StreamLost = lost
		if cause != nil {
			x.TransportErr = cause
		} else {
			x.Malformed = true
		}
	})
}

// end closes the stream and amends the call's record with mark; it returns
// the call's error response naming problem.
func (s *answerStream) end(problem string, mark func(*Exchange)) (jsonrpc.Message, bool) {
	s.cut()
	amend := func(x *Exchange) {
		x.Rewritten, x.Problem = true, problem
		mark(x)
	}
	if s.slot != nil {
		s.slot.amend(s.recN, amend)
	}
	if s.x.Method == methodDiscover {
		s.c.amendDiscover(s.x.RequestID, amend) // era.go: the era is judged on how the discover ended
	}
	s.c.cfg.Logger.Debug("mcpsup/httpsession: event stream answer refused, the call fails alone",
		"method", s.x.Method, "problem", problem)
	return errorMessage(s.sdkID, Exchange{Status: s.x.Status, ContentType: s.x.ContentType}, problem), true
}

// drains bounds the drains of a conn's answer streams after their
// response: each reads at most drainBytes for at most drainWait on the real
// clock (the bound decides nothing), and none once the session is closed
// (close cuts those under way). The zero value is ready; safe for
// concurrent use.
type drains struct {
	wait   time.Duration // 0: drainWait (tests set it shorter)
	mu     sync.Mutex
	active map[*answerStream]struct{}
	closed bool
}

// drain reads what little of s follows its response.
func (d *drains) drain(s *answerStream) {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return
	}
	if d.active == nil {
		d.active = make(map[*answerStream]struct{})
	}
	d.active[s] = struct{}{}
	wait := cmp.Or(d.wait, drainWait)
	d.mu.Unlock()
	cut := time.AfterFunc(wait, s.cut)
	s.events.Discard(drainBytes)
	cut.Stop()
	d.mu.Lock()
	delete(d.active, s)
	d.mu.Unlock()
}

// close cuts every drain under way and refuses those to come.
func (d *drains) close() {
	d.mu.Lock()
	d.closed = true
	due := d.active
	d.active = nil
	d.mu.Unlock()
	for s := range due {
		s.cut()
	}
}
