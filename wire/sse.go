package wire

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// maxRetryField bounds the SSE retry field's value.
const maxRetryField = 24 * time.Hour

// maxDroppedRun is how many events in a row a standalone stream attempt may
// drop before the keeper ends it as garbage (and re-dials on the backoff):
// it bounds what one attempt reads and reports without a message.
const maxDroppedRun = 16

// ErrStreamEvent is matched (errors.Is) by every [*EventError].
var ErrStreamEvent = errors.New("mcpsup/wire: standalone stream event dropped")

// DropReason says why the keeper dropped an event of the standalone stream.
type DropReason uint8

// Why an event is dropped.
const (
	// DropMalformedLine: a line of the event is neither a comment nor a
	// field (it has no colon; WHATWG HTML, server-sent events, allows it,
	// go-sdk v1.8.0 fails the session on it).
	DropMalformedLine DropReason = iota + 1
	// DropNotJSONRPC: the event's data is not one JSON-RPC 2.0 message
	// (go-sdk's jsonrpc.DecodeMessage refuses it).
	DropNotJSONRPC
	// DropResponse: the data is a JSON-RPC response; the standalone stream
	// carries only requests and notifications (MCP spec, transports,
	// listening for messages from the server).
	DropResponse
	// DropOversized: the event outgrew [StreamConfig.MaxEventBytes]; the
	// keeper reads no more of it and ends the attempt.
	DropOversized
	// DropTruncated: the stream ended inside the event.
	DropTruncated
	// DropTooManyValues: the message holds more than go-sdk may decode
	// ([DecodeLimits]: more JSON values than [Config.MaxJSONValues], which
	// go-sdk would decode at some 100 bytes each, or a request more
	// messages than [Config.MaxMessages]).
	DropTooManyValues
)

func (r DropReason) String() string {
	switch r {
	case DropMalformedLine:
		return "malformed-line"
	case DropNotJSONRPC:
		return "not-jsonrpc"
	case DropResponse:
		return "response"
	case DropOversized:
		return "oversized"
	case DropTruncated:
		return "truncated"
	case DropTooManyValues:
		return "too-many-values"
	}
	return "unknown"
}

// EventError records one event of the standalone stream that the keeper did
// not hand to go-sdk. The session is unaffected.
type EventError struct {
	// Reason says what was wrong.
	Reason DropReason
	// Bytes is how many bytes of the event were read (for DropOversized:
	// up to where the keeper stopped reading).
	Bytes int
	// Detail names the fault: the start of the malformed line (quoted, at
	// most 64 bytes), the decoder's error (at most 200 bytes) or the bound
	// passed; "" when the reason says all.
	Detail string
	// Attempt is the [StreamAttempt.Seq] the event came on.
	Attempt int
}

func (e *EventError) Error() string {
	s := fmt.Sprintf("mcpsup/wire: standalone stream event dropped (%s, %d bytes)", e.Reason, e.Bytes)
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Is reports target == ErrStreamEvent.
func (e *EventError) Is(target error) bool { return target == ErrStreamEvent }

// sseFilter parses a text/event-stream (WHATWG HTML, server-sent events)
// and hands go-sdk only the events that carry one JSON-RPC request or
// notification: `data: <the message>` and a blank line, nothing else, the
// message as it came when go-sdk reads those bytes as it, re-encoded
// otherwise ([handOn]); one leading byte order mark is stripped. go-sdk
// v1.8.0 ends the session on a
// line without a colon, on data it cannot decode and on an event past its
// size limit (mcp/streamable.go processStream, mcp/event.go
// scanEventsLimited); none of those reach it. Ids and retry fields are
// kept for the keeper's re-dial, not handed on, so go-sdk never reconnects
// with a Last-Event-ID of its own. Lines end with LF or CRLF.
//
// It holds at most max bytes of one event (its partial line included);
// comment lines between events do not count.
type sseFilter struct {
	max    int          // bytes of one event held at most; 0: no bound
	limits DecodeLimits // what go-sdk may decode of one message; zero fields: no bound

	line  []byte // the current incomplete line
	begun bool   // a line of this stream was taken: no BOM to strip

	// The current event, as go-sdk would read it (mcp/event.go).
	size      int    // its bytes so far, line ends included
	fields    bool   // it has a field
	data      []byte // its data fields, trimmed and joined with LF
	dataLines int
	name      string // its event field
	id        string // its id field
	idSet     bool
	bad       *EventError // a malformed line: the event is dropped at its end

	run    int           // events dropped in a row
	lastID string        // id of the last event that had one: the re-dial's Last-Event-ID
	retry  time.Duration // the reconnection time of the last valid retry field
}

// filtered is what one push produced.
type filtered struct {
	events   int           // whole events with a field
	messages int           // of them, those handed on
	acks     int           // of them, listen acknowledgements (listen.go)
	drops    []*EventError // events dropped
	garbage  bool          // the attempt must end: an oversized event, or maxDroppedRun drops in a row
}

// push parses p, appends the events to hand on to out and returns it. After
// a result with garbage set, the caller ends the stream and calls reset.
func (f *sseFilter) push(p []byte, out []byte, r *filtered) []byte {
	for len(p) > 0 && !r.garbage {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if f.over(len(f.line) + len(p)) {
				f.drop(r, DropOversized, len(p))
				return out
			}
			f.line = append(f.line, p...)
			return out
		}
		if f.over(len(f.line) + i + 1) {
			f.drop(r, DropOversized, i+1)
			return out
		}
		var line []byte
		if len(f.line) > 0 {
			f.line = append(f.line, p[:i]...)
			line = f.line
		} else {
			line = p[:i]
		}
		p = p[i+1:]
		f.size += len(line) + 1
		out = f.lineDone(bytes.TrimSuffix(line, []byte("\r")), out, r)
		f.line = f.line[:0]
		if cap(f.line) > keptBuffer {
			f.line = nil
		}
	}
	return out
}

// over reports whether n more bytes would make the event outgrow max.
func (f *sseFilter) over(n int) bool { return f.max > 0 && f.size+n > f.max }

// lineDone takes one complete line.
func (f *sseFilter) lineDone(line []byte, out []byte, r *filtered) []byte {
	if !f.begun {
		f.begun, line = true, bytes.TrimPrefix(line, utf8BOM)
	}
	switch {
	case len(line) == 0:
		return f.dispatch(out, r)
	case line[0] == ':':
		if !f.fields {
			f.size = 0 // a keepalive comment between events
		}
		return out
	}
	f.fields = true
	name, value, ok := bytes.Cut(line, []byte(":"))
	if !ok {
		if f.bad == nil {
			start := line[:min(len(line), 64)]
			f.bad = &EventError{Reason: DropMalformedLine, Detail: fmt.Sprintf("line without a colon: %q", start)}
		}
		return out
	}
	switch string(name) {
	case "data":
		if f.dataLines > 0 {
			f.data = append(f.data, '\n')
		}
		f.dataLines++
		f.data = append(f.data, bytes.TrimSpace(value)...)
	case "event":
		f.name = string(bytes.TrimSpace(value))
	case "id":
		if id, ok := eventID(bytes.TrimPrefix(value, []byte(" "))); ok {
			f.id, f.idSet = id, true
		}
	case "retry":
		if d, ok := retryField(bytes.TrimPrefix(value, []byte(" "))); ok {
			f.retry = d
		}
	}
	return out
}

// dispatch ends the current event at its blank line.
func (f *sseFilter) dispatch(out []byte, r *filtered) []byte {
	defer f.endEvent()
	if !f.fields {
		return out
	}
	r.events++
	if f.idSet {
		f.lastID = f.id // also past a dropped event: the re-dial does not ask for it again
	}
	if f.bad != nil {
		f.bad.Bytes = f.size
		f.report(r, f.bad)
		return out
	}
	if len(f.data) == 0 || (f.name != "" && f.name != "message") {
		// No message (a SEP-1699 priming event), or an event type go-sdk
		// skips: nothing to hand on, nothing wrong.
		return out
	}
	msg, exact, err := decodeMessage(f.data)
	if err != nil {
		f.report(r, &EventError{Reason: DropNotJSONRPC, Bytes: f.size, Detail: cutDetail(err.Error())})
		return out
	}
	if _, isResponse := msg.(*jsonrpc.Response); isResponse {
		f.report(r, &EventError{Reason: DropResponse, Bytes: f.size})
		return out
	}
	if req, ok := msg.(*jsonrpc.Request); ok { // responses were dropped above
		if problem := f.limits.Problem(req.Method, f.data, req.Params); problem != "" {
			f.report(r, &EventError{Reason: DropTooManyValues, Bytes: f.size, Detail: problem})
			return out
		}
	}
	enc, err := handOn(f.data, msg, exact)
	if err != nil {
		f.report(r, &EventError{Reason: DropNotJSONRPC, Bytes: f.size, Detail: cutDetail(err.Error())})
		return out
	}
	f.run = 0
	r.messages++
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == methodListenAck {
		r.acks++
	}
	out = append(out, "data: "...)
	out = append(out, enc...)
	return append(out, "\n\n"...)
}

// drop drops the current event as garbage after read more bytes of it:
// the attempt must end.
func (f *sseFilter) drop(r *filtered, reason DropReason, read int) {
	f.report(r, &EventError{Reason: reason, Bytes: f.size + len(f.line) + read,
		Detail: fmt.Sprintf("more than %d bytes", f.max)})
	r.garbage = true
	f.reset()
}

// report records a dropped event; maxDroppedRun in a row make the stream
// garbage.
func (f *sseFilter) report(r *filtered, e *EventError) {
	r.drops = append(r.drops, e)
	f.run++
	if f.run >= maxDroppedRun {
		r.garbage = true
	}
}

// cut ends the stream: an event under way is dropped (reported as
// DropTruncated when it had a field).
func (f *sseFilter) cut(r *filtered) {
	if f.fields || len(f.line) > 0 {
		r.drops = append(r.drops, &EventError{Reason: DropTruncated, Bytes: f.size + len(f.line)})
	}
	f.reset()
}

// reset forgets the current event and partial line, for the next stream;
// lastID and retry stay.
func (f *sseFilter) reset() {
	f.endEvent()
	f.line, f.begun = nil, false
	f.run = 0
}

// utf8BOM is the byte order mark an event stream may start with: the
// UTF-8 decode of a stream strips one (WHATWG HTML, server-sent events).
// Taken for part of the first field's name, it cost the stream's first
// event: a call's response when it came first.
var utf8BOM = []byte("\xEF\xBB\xBF")

func (f *sseFilter) endEvent() {
	f.size, f.fields, f.dataLines, f.name, f.id, f.idSet, f.bad = 0, false, 0, "", "", false, nil
	f.data = f.data[:0]
	if cap(f.data) > keptBuffer {
		f.data = nil
	}
}

// cutDetail bounds a decoder's error text in an EventError.
func cutDetail(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

// eventID returns an id field's value as the last event id, false when it
// is not taken: one with a NUL (WHATWG HTML, server-sent events), or with
// another control byte but a tab (a CR inside a line, say, which these
// parsers do not take for a line end), which net/http refuses in the
// Last-Event-ID header: every re-dial with it failed before it was sent,
// and the stream never came back.
func eventID(v []byte) (string, bool) {
	for _, c := range v {
		if (c < 0x20 && c != '\t') || c == 0x7f {
			return "", false
		}
	}
	return string(v), true
}

// retryField parses an SSE retry value: ASCII digits, milliseconds.
func retryField(v []byte) (time.Duration, bool) {
	if len(v) == 0 || bytes.ContainsFunc(v, func(r rune) bool { return r < '0' || r > '9' }) {
		return 0, false
	}
	ms, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil || ms > int64(maxRetryField/time.Millisecond) {
		return maxRetryField, true
	}
	return time.Duration(ms) * time.Millisecond, true
}
