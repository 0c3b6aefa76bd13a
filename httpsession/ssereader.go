package httpsession

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// eventReader is the one parser of a text/event-stream in the package, the
// event stream interpretation of WHATWG HTML, server-sent events: lines end
// at CRLF, LF or CR; one leading byte order mark is stripped; a line that
// starts with ':' is a comment; `name:value` is a field whose value loses
// one leading space; a line without a colon is a field named by the whole
// line with an empty value; data fields are joined with LF; an id with a
// NUL (or another control byte but a tab, see [eventID]) and a retry that
// is not all ASCII digits are ignored; an empty line ends the event. MCP
// streamable HTTP carries one JSON-RPC message per event's data (see
// [sseEvent.message]).
//
// It reads either from a bufio.Reader (pull: a call's answer, a discover's)
// or from the bytes [eventReader.feed] gave it (push: the standalone
// stream, read into go-sdk's buffer, so an idle stream holds no buffer of
// its own).
//
// Bounds: one event holds at most max bytes, its line ends (one byte each,
// a CRLF too) and a partial line included, comment lines before its first field not (keepalives
// between events); with wire set, also at most max+[wireSlack] bytes on
// the wire since the last empty line (a decoded source; the reader zeroes
// the counter at each empty line). Past either, [eventReader.Next]
// returns an [*eventTooLargeError] and reads no more of the stream.
//
// Not safe for concurrent use: one goroutine reads a stream.
type eventReader struct {
	max  int           // bytes of one event at most; 0: no bound
	wire *wireCounter  // the source's bytes on the wire, when it decodes; nil: not bounded apart
	src  *bufio.Reader // pull: the stream; nil: push
	in   []byte        // push: bytes fed and not yet taken

	line   []byte // the current line, when it spans reads
	taken  bool   // line was returned: emptied at the next read
	begun  bool   // a line of this stream was read: no BOM to strip
	skipLF bool   // the last line ended with CR: an LF right after is its end
	broken bool   // an event outgrew a bound: no more is read until reset

	// The current event.
	fields    bool // it has a field
	hasData   bool
	idSet     bool
	otherType bool
	size      int // its bytes so far, a byte per line end
	data      []byte
	id        string

	// retry is the reconnection time the stream last set with a valid
	// retry field (at most [maxRetryField]), 0 when none: stream state,
	// taken at the field, as WHATWG says, and kept across reset.
	retry time.Duration
}

// sseEvent is one event the stream completed (an empty line after at
// least one field). Data is valid until the next call of Next.
type sseEvent struct {
	ID    string // its id field's value, when IDSet
	IDSet bool   // it had an id field that was taken
	// OtherType reports an event field naming a type other than
	// "message" (WHATWG's default type), which MCP does not use. The
	// name itself is not kept: nothing reads it.
	OtherType bool
	// Data is its data fields joined with LF. WHATWG dispatches only an
	// event with a data field (HasData): one without carries at most an
	// id for the next reconnection.
	Data    []byte
	HasData bool
	Size    int // its bytes on the stream, a byte per line end, the empty line's included
}

// message reports whether e carries an MCP message: a data field that holds
// more than white space, in an event of type "message". Other types
// go-sdk skips too; an event without one (a SEP-1699 priming event: an id
// and empty data) is no message.
func (e *sseEvent) message() bool {
	return e.HasData && !e.OtherType && len(bytes.TrimSpace(e.Data)) > 0
}

// errEventTooLarge is matched (errors.Is) by every [*eventTooLargeError].
var errEventTooLarge = errors.New("SSE event too large")

// eventTooLargeError is an event past an [eventReader]'s bound.
type eventTooLargeError struct {
	Max  int // the bound, bytes of one event
	Read int // bytes of the event read, up to where reading stopped
}

func (e *eventTooLargeError) Error() string {
	return fmt.Sprintf("SSE event larger than %d bytes", e.Max)
}

// Is reports target == errEventTooLarge.
func (e *eventTooLargeError) Is(target error) bool { return target == errEventTooLarge }

// maxLineStart bounds the start of a line an [*sseLineError] keeps.
const maxLineStart = 64

// sseLineError is a line that is neither a comment nor a field with a
// colon. WHATWG takes it for a field named by the whole line with an empty
// value, and the reader does so (a bare `data` adds an empty data line);
// go-sdk v1.8.0 ends its session on it (mcp/event.go scanEventsLimited), so
// the callers refuse it. The event goes on: Next may be called again.
type sseLineError struct {
	Start []byte // the line's first bytes, at most maxLineStart
}

func (e *sseLineError) Error() string {
	return fmt.Sprintf("SSE line without a colon: %q", e.Start)
}

// errNeedInput is Next's error in push mode once the fed bytes are taken:
// feed more.
var errNeedInput = errors.New("SSE reader needs input")

// feed gives a push reader p to read; p is read by the following calls of
// Next, until one returns errNeedInput, and not kept past them.
func (r *eventReader) feed(p []byte) { r.in = p }

// reset starts a new stream: the event under way, a partial line and fed
// bytes are dropped; retry stays.
func (r *eventReader) reset() {
	r.endEvent()
	r.in, r.line, r.taken, r.begun, r.skipLF, r.broken = nil, nil, false, false, false, false
	if r.wire != nil {
		r.wire.n = 0
	}
}

// pending reports the bytes of an event or line under way, 0 when none.
func (r *eventReader) pending() (n int, underWay bool) {
	return r.size + len(r.line), r.fields || len(r.line) > 0
}

// Next returns the next event the stream completes. Its errors: an
// [*sseLineError] (not final: the event goes on), an [*eventTooLargeError]
// (final until reset), errNeedInput (push: feed more), or the source's
// read error (io.EOF at its end; an event under way is dropped, as WHATWG
// says).
func (r *eventReader) Next() (sseEvent, error) {
	for {
		line, own, err := r.readLine()
		if err != nil {
			return sseEvent{}, err
		}
		if !r.begun {
			r.begun, line = true, bytes.TrimPrefix(line, utf8BOM)
		}
		switch {
		case len(line) == 0:
			if r.wire != nil {
				r.wire.n = 0
			}
			if !r.fields {
				r.size = 0
				continue
			}
			return r.dispatch(), nil
		case line[0] == ':':
			if !r.fields {
				r.size = 0 // a keepalive comment between events
			}
			continue
		}
		r.fields = true
		name, value, ok := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		r.field(name, value, own)
		if !ok {
			return sseEvent{}, &sseLineError{Start: bytes.Clone(line[:min(len(line), maxLineStart)])}
		}
	}
}

// field takes one field of the current event; own says value lies in
// r.line.
func (r *eventReader) field(name, value []byte, own bool) {
	switch string(name) {
	case "data":
		switch {
		case r.hasData:
			r.data = append(r.data, '\n')
			r.data = append(r.data, value...)
		case own:
			// A long line, read into r.line: its value becomes the data
			// where copying it would cost a second buffer as long.
			r.data, r.line = value, r.data[:0]
		default:
			r.data = append(r.data, value...)
		}
		r.hasData = true
	case "event":
		r.otherType = string(value) != "message"
	case "id":
		if id, ok := eventID(value); ok {
			r.id, r.idSet = id, true
		}
	case "retry":
		if d, ok := retryField(value); ok {
			r.retry = d
		}
	}
	// Other fields are ignored, as WHATWG says.
}

// dispatch returns the current event, ended by its empty line, and starts
// the next; the event's data stays valid until the next read writes it.
func (r *eventReader) dispatch() sseEvent {
	e := sseEvent{ID: r.id, IDSet: r.idSet, OtherType: r.otherType, Data: r.data, HasData: r.hasData, Size: r.size}
	r.endEvent()
	return e
}

// endEvent forgets the current event.
func (r *eventReader) endEvent() {
	r.size, r.fields, r.hasData, r.otherType, r.id, r.idSet = 0, false, false, false, "", false
	r.data = r.data[:0]
	if cap(r.data) > keptBuffer {
		r.data = nil
	}
}

// readLine returns the next line without its end, and whether it lies in
// r.line (assembled over reads) rather than in the source's buffer. It is
// valid until the next call.
func (r *eventReader) readLine() (line []byte, own bool, err error) {
	if r.broken {
		return nil, false, &eventTooLargeError{Max: r.max, Read: r.size + len(r.line)}
	}
	if r.taken {
		r.taken, r.line = false, r.line[:0]
		if cap(r.line) > keptBuffer {
			r.line = nil
		}
	}
	for {
		if r.wire != nil && r.wire.n > int64(r.max)+wireSlack {
			return nil, false, r.tooLarge(0)
		}
		buf := r.buffered()
		if r.skipLF && len(buf) > 0 {
			r.skipLF = false
			if buf[0] == '\n' { // the LF of a CRLF split between reads
				r.consume(1)
				buf = buf[1:]
			}
		}
		end := bytes.IndexByte(buf, '\n')
		head := buf
		if end >= 0 {
			head = buf[:end]
		}
		if cr := bytes.IndexByte(head, '\r'); cr >= 0 {
			end = cr
		}
		if end < 0 { // no line end yet: keep the part, read on
			if r.over(len(r.line) + len(buf)) {
				return nil, false, r.tooLarge(len(buf))
			}
			r.line = append(r.line, buf...)
			r.consume(len(buf))
			if err := r.fill(); err != nil {
				return nil, false, err
			}
			continue
		}
		// The line end counts one byte, a CRLF too: whether its LF came
		// in the same read must not change what the stream holds.
		n := end + 1
		if r.over(len(r.line) + n) {
			return nil, false, r.tooLarge(n)
		}
		r.size += len(r.line) + n
		if buf[end] == '\r' {
			switch {
			case n == len(buf):
				r.skipLF = true // its LF, if any, is not read yet
			case buf[n] == '\n':
				n++
			}
		}
		r.taken = true
		if len(r.line) == 0 {
			line = buf[:end] // in the buffer, which the next fill overwrites, not before
			r.consume(n)
			return line, false, nil
		}
		r.line = append(r.line, buf[:end]...)
		r.consume(n)
		return r.line, true, nil
	}
}

// over reports whether n more bytes would make the event outgrow max.
func (r *eventReader) over(n int) bool { return r.max > 0 && r.size+n > r.max }

// tooLarge ends the stream at an event past a bound, after read more bytes
// of it.
func (r *eventReader) tooLarge(read int) error {
	r.broken = true
	return &eventTooLargeError{Max: r.max, Read: r.size + len(r.line) + read}
}

// buffered returns the bytes read and not yet taken.
func (r *eventReader) buffered() []byte {
	if r.src == nil {
		return r.in
	}
	b, _ := r.src.Peek(r.src.Buffered()) // within the buffer: never an error
	return b
}

// consume takes n buffered bytes.
func (r *eventReader) consume(n int) {
	if r.src == nil {
		r.in = r.in[n:]
		return
	}
	_, _ = r.src.Discard(n) // n <= Buffered: never an error
}

// fill waits for more bytes, all buffered ones taken: the source's error,
// or errNeedInput in push mode.
func (r *eventReader) fill() error {
	if r.src == nil {
		r.in = nil
		return errNeedInput
	}
	_, err := r.src.Peek(1)
	return err
}

// utf8BOM is the byte order mark an event stream may start with: the
// UTF-8 decode of a stream strips one (WHATWG HTML, server-sent events).
// Taken for part of the first field's name, it cost the stream's first
// event: a call's response when it came first.
var utf8BOM = []byte("\xEF\xBB\xBF")

// eventID returns an id field's value as the last event id, false when it
// is not taken: one with a NUL (WHATWG HTML, server-sent events), or with
// another control byte but a tab, which net/http refuses in the
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

// retryField parses an SSE retry value: ASCII digits, milliseconds, at
// most maxRetryField.
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
