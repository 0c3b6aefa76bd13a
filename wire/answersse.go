package wire

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// wireSlack is how many more bytes than [Config.MaxSSEEvent] one event may
// take on the wire (gzip framing of incompressible data).
const wireSlack = 64 << 10

// answerStream is the body go-sdk reads in place of a text/event-stream
// answer to a call. It parses the server's stream itself (WHATWG HTML,
// server-sent events) and hands on only well-formed events, one JSON-RPC
// message each, written anew: `data: <message>` and a blank line. Event ids
// and retry fields are not handed on, so go-sdk never resumes the stream
// with a GET and Last-Event-ID (a refused resumption would end its
// connection); the stream ends when the call's response came through.
//
// Server-to-client requests and notifications pass. Anything else fails the
// call, and only the call: the stream hands go-sdk a JSON-RPC error response
// for the call's id (code [CodeHTTPAnswer]) naming what was wrong, and ends.
// That is a line without a colon, an event over the bound, data that is not
// one JSON-RPC message, a response that does not answer the call (see
// [answerProblem]), and a stream that ends or breaks before the response.
//
// It is read by one goroutine (go-sdk's stream reader).
type answerStream struct {
	t    *Transport
	ctx  context.Context
	rec  *recorded // the call's record in its slot; may be nil
	x    Exchange  // the answer's facts as the headers gave them
	want jsonrpc.ID
	max  int

	src  *bufio.Reader
	wire *wireCounter
	body io.Closer

	out   []byte // ready for go-sdk
	ended bool   // nothing comes after out
	err   error  // returned once out is drained (the caller's context ended)

	line     []byte // the current line
	data     []byte // the current event's data lines, joined with LF
	hasData  bool
	name     string
	size     int   // decoded bytes of the current event
	wireMark int64 // wire bytes before the current event
}

func (t *Transport) newAnswerStream(req *http.Request, x *Exchange, want jsonrpc.ID, r io.Reader, wc *wireCounter, body io.Closer) *answerStream {
	return &answerStream{
		t: t, ctx: req.Context(), x: *x, want: want, max: t.cfg.MaxSSEEvent,
		src: bufio.NewReaderSize(r, 4<<10), wire: wc, body: body,
	}
}

// Read implements io.Reader.
func (s *answerStream) Read(p []byte) (int, error) {
	for len(s.out) == 0 {
		if s.err != nil {
			return 0, s.err
		}
		if s.ended {
			return 0, io.EOF
		}
		s.step()
	}
	n := copy(p, s.out)
	s.out = s.out[n:]
	return n, nil
}

// Close closes the server's stream.
func (s *answerStream) Close() error { return s.body.Close() }

// step reads one line of the server's stream and acts on it.
func (s *answerStream) step() {
	line, err := s.readLine()
	if err != nil {
		switch {
		case s.ctx.Err() != nil:
			s.err = s.ctx.Err() // the caller gave up: go-sdk stops reading
			s.ended = true
			_ = s.body.Close()
		case errors.Is(err, errEventTooLarge):
			s.fail(fmt.Sprintf("SSE event larger than %d bytes", s.max), true)
		case errors.Is(err, io.EOF):
			s.fail("SSE stream ended without the response", false)
		default:
			s.fail("SSE stream broke off before the response: "+err.Error(), false)
		}
		return
	}
	if len(line) == 0 {
		s.dispatch()
		return
	}
	if line[0] == ':' {
		return // a comment, e.g. a keepalive
	}
	name, value, ok := bytes.Cut(line, []byte(":"))
	if !ok {
		s.fail(fmt.Sprintf("SSE line without a colon: %.40q", line), false)
		return
	}
	value = bytes.TrimPrefix(value, []byte(" "))
	switch string(name) {
	case "data":
		if s.hasData {
			s.data = append(s.data, '\n')
		}
		s.data, s.hasData = append(s.data, value...), true
	case "event":
		s.name = string(value)
	}
	// id and retry are not handed on (see answerStream); other fields are
	// ignored, as the SSE specification says.
}

var errEventTooLarge = errors.New("event too large")

// readLine returns the next line without its LF or CRLF. The line is valid
// until the next call. An event past the bound, decoded or on the wire,
// returns errEventTooLarge; a stream that ends mid-line returns io.EOF.
func (s *answerStream) readLine() ([]byte, error) {
	s.line = s.line[:0]
	for {
		chunk, err := s.src.ReadSlice('\n')
		s.size += len(chunk)
		if s.size > s.max || s.wire.n-s.wireMark > int64(s.max)+wireSlack {
			return nil, errEventTooLarge
		}
		s.line = append(s.line, chunk...)
		switch {
		case err == nil:
			return bytes.TrimSuffix(bytes.TrimSuffix(s.line, []byte("\n")), []byte("\r")), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return nil, err
		}
	}
}

// dispatch ends the current event at its blank line.
func (s *answerStream) dispatch() {
	data, hasData, name := s.data, s.hasData, s.name
	s.data, s.hasData, s.name, s.size, s.wireMark = s.data[:0], false, "", 0, s.wire.n
	if cap(s.data) > keptBuffer {
		s.data = nil
	}
	if !hasData || len(bytes.TrimSpace(data)) == 0 || (name != "" && name != "message") {
		// No message: a priming event (SEP-1699), or an event type MCP does
		// not use, which go-sdk skips too.
		return
	}
	msg, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		s.fail("SSE event data is not a JSON-RPC message", false)
		return
	}
	if r, ok := msg.(*jsonrpc.Response); ok {
		if problem := answerProblem(r, s.want); problem != "" {
			s.fail(problem, false)
			return
		}
		s.ended = true // the call is answered: nothing more to read
		_ = s.body.Close()
	}
	s.emit(msg)
}

// emit hands msg on as one event.
func (s *answerStream) emit(msg jsonrpc.Message) {
	b, err := reencode(msg)
	if err != nil {
		s.fail("SSE event data is not a JSON-RPC message", false)
		return
	}
	s.out = append(s.out, "data: "...)
	s.out = append(s.out, b...)
	s.out = append(s.out, "\n\n"...)
}

// fail ends the stream with a JSON-RPC error response for the call naming
// problem, and amends the call's record.
func (s *answerStream) fail(problem string, oversized bool) {
	_ = s.body.Close()
	s.ended = true
	s.x.Malformed, s.x.Oversized, s.x.Rewritten, s.x.Problem = true, oversized, true, problem
	if s.rec != nil {
		s.rec.amend(func(x *Exchange) {
			x.Malformed, x.Oversized, x.Rewritten, x.Problem = true, oversized, true, problem
		})
	}
	s.t.log.Debug("mcpsup/wire: event stream answer refused, the call fails alone",
		"method", s.x.Method, "problem", problem)
	s.out = append(s.out, "data: "...)
	s.out = append(s.out, errorResponse(s.x.RequestID, s.x, problem)...)
	s.out = append(s.out, "\n\n"...)
}
