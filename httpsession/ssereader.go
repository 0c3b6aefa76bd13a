package httpsession

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
)

const (
	maxRetryField = 24 * time.Hour // bounds the SSE retry field
	wireSlack     = 64 << 10       // more bytes one event may take on the wire (gzip framing)
	keptBuffer    = 4 << 10        // bounds the line buffer a reader keeps between lines
)

// eventReader is the package's one text/event-stream parser, by WHATWG
// HTML's interpretation (decision record 0009). One event holds at most max
// bytes (0: none; a byte per line end), and with wire set at most
// max+[wireSlack] bytes on the wire since the last empty line; past either,
// Next returns an [*eventTooLargeError]. One goroutine reads.
type eventReader struct {
	max  int          // bytes of one event at most; 0: no bound
	wire *wireCounter // the source's bytes on the wire, when it decodes; nil: not bounded apart
	raw  io.Reader    // the stream
	size int          // src's size in bytes; 0: bufio's default (4 KiB)
	// idle: src is made when a byte arrives and dropped when it is empty
	// between events, so a stream that waits (the standalone stream blocks
	// for hours) holds no buffer; a call's short answer keeps one.
	idle bool

	src   *bufio.Reader // buffers raw
	first [1]byte       // the byte that woke a stream without src

	line   []byte // the current line
	begun  bool   // a line of this stream was read: no BOM to strip
	skipLF bool   // the last line ended with CR: an LF right after is its end
	broken bool   // an event outgrew a bound

	fields bool     // the current event has a field
	cur    sseEvent // the current event

	// retry is the stream's reconnection time from its last valid retry
	// field (at most maxRetryField), 0 when none; kept across reset.
	retry time.Duration
}

// sseEvent is one event the stream completed (an empty line after at least
// one field). It owns its Data.
type sseEvent struct {
	ID        string // its id field's value, when IDSet
	IDSet     bool
	OtherType bool   // an event type other than "message", which MCP does not use
	Data      []byte // its data fields joined with LF
	HasData   bool   // WHATWG dispatches only an event with a data field
	Size      int    // its bytes on the stream, a byte per line end
}

// message reports whether e carries an MCP message: data of more than
// white space in an event of type "message". A SEP-1699 priming event (an
// id and empty data) is none.
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

func (e *eventTooLargeError) Is(target error) bool { return target == errEventTooLarge }

// maxLineStart bounds the start of a line an [*sseLineError] keeps.
const maxLineStart = 64

// sseLineError is a line without a colon: WHATWG takes it for a field with
// an empty value, and so does the reader, but go-sdk v1.8.0 ends its
// session on one (mcp/event.go scanEventsLimited), so the callers refuse it.
type sseLineError struct {
	Start []byte // the line's first bytes, at most maxLineStart
}

func (e *sseLineError) Error() string {
	return fmt.Sprintf("SSE line without a colon: %q", e.Start)
}

// reset starts a new stream on raw: the event under way and a partial line
// are dropped; retry stays.
func (r *eventReader) reset(raw io.Reader) {
	r.raw, r.src = raw, nil
	if !r.idle && raw != nil {
		r.src = bufio.NewReaderSize(raw, r.size)
	}
	r.endEvent()
	r.line, r.begun, r.skipLF, r.broken = r.line[:0], false, false, false
	if r.wire != nil {
		r.wire.n = 0
	}
}

// pending reports the bytes of an event or line under way.
func (r *eventReader) pending() (n int, underWay bool) {
	return r.cur.Size + len(r.line), r.fields || len(r.line) > 0
}

// Next returns the next event. Its errors: an [*sseLineError] (the event
// goes on), an [*eventTooLargeError] (final until reset), or the source's
// (io.EOF at its end; an event under way is dropped, as WHATWG says).
func (r *eventReader) Next() (sseEvent, error) {
	for {
		line, err := r.readLine()
		if err != nil {
			return sseEvent{}, err
		}
		if !r.begun {
			r.begun, line = true, bytes.TrimPrefix(line, []byte("\xEF\xBB\xBF"))
		}
		switch {
		case len(line) == 0:
			if r.wire != nil {
				r.wire.n = 0
			}
			if !r.fields {
				r.cur.Size = 0
				continue
			}
			e := r.cur
			r.endEvent()
			return e, nil
		case line[0] == ':':
			if !r.fields {
				r.cur.Size = 0 // a keepalive comment between events
			}
			continue
		}
		r.fields = true
		name, value, ok := bytes.Cut(line, []byte(":"))
		r.field(string(name), bytes.TrimPrefix(value, []byte(" ")))
		if !ok {
			return sseEvent{}, &sseLineError{Start: bytes.Clone(line[:min(len(line), maxLineStart)])}
		}
	}
}

// field takes one field of the current event; value lies in r.line.
func (r *eventReader) field(name string, value []byte) {
	switch name {
	case "data":
		if !r.cur.HasData {
			r.cur.Data, r.line = value, nil // the line's buffer becomes the event's data
		} else {
			r.cur.Data = append(append(r.cur.Data, '\n'), value...)
		}
		r.cur.HasData = true
	case "event":
		r.cur.OtherType = string(value) != "message"
	case "id":
		if id, ok := eventID(value); ok {
			r.cur.ID, r.cur.IDSet = id, true
		}
	case "retry":
		if d, ok := retryField(value); ok {
			r.retry = d
		}
	}
}

// endEvent forgets the current event; its data now belongs to it.
func (r *eventReader) endEvent() { r.fields, r.cur = false, sseEvent{} }

// readLine returns the next line without its end, valid until the next call.
func (r *eventReader) readLine() ([]byte, error) {
	if r.broken {
		return nil, &eventTooLargeError{Max: r.max, Read: r.cur.Size + len(r.line)}
	}
	if cap(r.line) > keptBuffer {
		r.line = nil
	}
	r.line = r.line[:0]
	if r.idle && r.src != nil && !r.fields && r.src.Buffered() == 0 {
		r.src = nil // between events, nothing buffered: wait without a buffer
	}
	for {
		if r.wire != nil && r.wire.n > int64(r.max)+wireSlack {
			return nil, r.tooLarge(0)
		}
		if err := r.buffer(); err != nil {
			return nil, err
		}
		buf, _ := r.src.Peek(r.src.Buffered()) // within the buffer: never an error
		if r.skipLF && len(buf) > 0 {
			r.skipLF = false
			if buf[0] == '\n' { // the LF of a CRLF split between reads
				_, _ = r.src.Discard(1)
				buf = buf[1:]
			}
		}
		end := bytes.IndexAny(buf, "\r\n")
		if end < 0 { // no line end yet: keep the part, read on
			if r.over(len(r.line) + len(buf)) {
				return nil, r.tooLarge(len(buf))
			}
			r.line = append(r.line, buf...)
			_, _ = r.src.Discard(len(buf))
			if _, err := r.src.Peek(1); err != nil {
				return nil, err
			}
			continue
		}
		// The line end counts one byte, a CRLF too: how reads split the
		// stream must not change what it holds.
		n := end + 1
		if r.over(len(r.line) + n) {
			return nil, r.tooLarge(n)
		}
		r.cur.Size += len(r.line) + n
		r.line = append(r.line, buf[:end]...)
		if buf[end] == '\r' {
			switch {
			case n == len(buf):
				r.skipLF = true // its LF, if any, is not read yet
			case buf[n] == '\n':
				n++
			}
		}
		_, _ = r.src.Discard(n)
		return r.line, nil
	}
}

// buffer makes src once a byte of raw arrives (it blocks until then); the
// source's error when none does.
func (r *eventReader) buffer() error {
	if r.src != nil {
		return nil
	}
	for {
		n, err := r.raw.Read(r.first[:])
		if n > 0 {
			r.src = bufio.NewReaderSize(io.MultiReader(bytes.NewReader(r.first[:n]), r.raw), r.size)
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// discard reads and drops up to n bytes of the stream.
func (r *eventReader) discard(n int) {
	if r.src != nil {
		_, _ = r.src.Discard(n)
		return
	}
	_, _ = io.CopyN(io.Discard, r.raw, int64(n))
}

// over reports whether n more bytes would make the event outgrow max.
func (r *eventReader) over(n int) bool { return r.max > 0 && r.cur.Size+n > r.max }

// tooLarge ends the stream at an event past a bound, after read more bytes.
func (r *eventReader) tooLarge(read int) error {
	r.broken = true
	return &eventTooLargeError{Max: r.max, Read: r.cur.Size + len(r.line) + read}
}

// eventID returns an id field's value, false when it is ignored: one with a
// NUL (WHATWG), or another control byte but a tab, which net/http refuses in
// the Last-Event-ID header of every re-dial.
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
