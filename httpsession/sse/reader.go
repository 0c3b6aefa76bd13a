// Package sse is the one text/event-stream parser of mcpsup's streamable
// HTTP transport, by WHATWG HTML's "Server-sent events" interpretation
// (section 9.2.6; decision record 0009). It knows nothing of MCP.
package sse

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
)

const (
	// MaxRetry bounds the retry field: a larger value reads as MaxRetry.
	MaxRetry = 24 * time.Hour
	// WireSlack is how many more bytes than Max one event may take on the
	// wire (gzip framing), when [Reader.Wire] is set.
	WireSlack = 64 << 10
	// KeptLine bounds the line buffer a Reader keeps between lines, in
	// bytes: a longer one is dropped.
	KeptLine = 4 << 10
)

// Reader reads the events of one stream at a time ([Reader.Reset] starts
// the next). One event holds at most Max bytes (a byte per line end), and
// with Wire set at most Max+[WireSlack] bytes on the wire since the last
// empty line; past either, Next returns an [*EventTooLargeError]. The zero
// value reads without bounds once Reset. One goroutine reads.
type Reader struct {
	Max int // bytes of one event at most; 0: no bound
	// Wire counts the bytes of the current stream read from the wire
	// before decoding (N, since Reset); nil: not bounded apart.
	Wire interface{ N() int64 }
	// BufferSize is the read buffer's size in bytes; 0: 4 KiB. A longer
	// line is read in pieces.
	BufferSize int
	// Idle: the buffer is made when a byte arrives and dropped when it is
	// empty between events, so a stream that waits for hours holds none; a
	// short answer keeps one.
	Idle bool

	raw   io.Reader     // the stream
	src   *bufio.Reader // buffers raw
	first [1]byte       // the byte that woke a stream without src

	line     []byte // the current line
	begun    bool   // a line of this stream was read: no BOM to strip
	skipLF   bool   // the last line ended with CR: an LF right after is its end
	broken   bool   // an event outgrew a bound
	wireMark int64  // Wire.N() at the last empty line or Reset

	fields bool  // the current event has a field
	cur    Event // the current event

	retry time.Duration // from the last valid retry field, kept across Reset
}

// Event is one event the stream completed (an empty line after at least
// one field). It owns its Data.
type Event struct {
	ID        string // its id field's value, when IDSet
	IDSet     bool
	OtherType bool   // an event type other than "message", which MCP does not use
	Data      []byte // its data fields joined with LF
	HasData   bool   // WHATWG dispatches only an event with a data field
	Size      int    // its bytes on the stream, a byte per line end
}

// Message reports whether e carries a message: data of more than white
// space in an event of type "message". An MCP (SEP-1699) priming event, an
// id and empty data, is none.
func (e *Event) Message() bool {
	return e.HasData && !e.OtherType && len(bytes.TrimSpace(e.Data)) > 0
}

// ErrEventTooLarge is matched (errors.Is) by every [*EventTooLargeError].
var ErrEventTooLarge = errors.New("SSE event too large")

// EventTooLargeError is an event past a [Reader]'s bound.
type EventTooLargeError struct {
	Max  int // the bound, bytes of one event
	Read int // bytes of the event read, up to where reading stopped
}

func (e *EventTooLargeError) Error() string {
	return fmt.Sprintf("SSE event larger than %d bytes", e.Max)
}

func (e *EventTooLargeError) Is(target error) bool { return target == ErrEventTooLarge }

// maxLineStart bounds the start of a line a [*LineError] keeps.
const maxLineStart = 64

// LineError is a line without a colon: WHATWG takes it for a field with an
// empty value, and so does the Reader, but go-sdk v1.8.0 ends its session
// on one (mcp/event.go scanEventsLimited), so a caller may refuse it.
type LineError struct {
	Start []byte // the line's first bytes, at most 64
}

func (e *LineError) Error() string {
	return fmt.Sprintf("SSE line without a colon: %q", e.Start)
}

// Reset starts a new stream on raw: the event under way and a partial line
// are dropped; the retry field stays.
func (r *Reader) Reset(raw io.Reader) {
	r.raw, r.src = raw, nil
	if !r.Idle && raw != nil {
		r.src = bufio.NewReaderSize(raw, r.bufferSize())
	}
	r.endEvent()
	r.line, r.begun, r.skipLF, r.broken = r.line[:0], false, false, false
	r.markWire()
}

// Retry returns the stream's reconnection time from its last valid retry
// field (ASCII digits, milliseconds; at most [MaxRetry]), 0 when none.
func (r *Reader) Retry() time.Duration { return r.retry }

// Pending reports the bytes of an event or line under way.
func (r *Reader) Pending() (n int, underWay bool) {
	return r.cur.Size + len(r.line), r.fields || len(r.line) > 0
}

// Next returns the next event. Its errors: a [*LineError] (the event goes
// on), an [*EventTooLargeError] (final until Reset), or the source's
// (io.EOF at its end; an event under way is dropped, as WHATWG says).
func (r *Reader) Next() (Event, error) {
	for {
		line, err := r.readLine()
		if err != nil {
			return Event{}, err
		}
		if !r.begun {
			r.begun, line = true, bytes.TrimPrefix(line, []byte("\xEF\xBB\xBF"))
		}
		switch {
		case len(line) == 0:
			r.markWire()
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
			return Event{}, &LineError{Start: bytes.Clone(line[:min(len(line), maxLineStart)])}
		}
	}
}

// field takes one field of the current event; value lies in r.line.
func (r *Reader) field(name string, value []byte) {
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

// endEvent forgets the current event, which owns its data.
func (r *Reader) endEvent() { r.fields, r.cur = false, Event{} }

// readLine returns the next line without its end, valid until the next call.
func (r *Reader) readLine() ([]byte, error) {
	if r.broken {
		return nil, &EventTooLargeError{Max: r.Max, Read: r.cur.Size + len(r.line)}
	}
	if cap(r.line) > KeptLine {
		r.line = nil
	}
	r.line = r.line[:0]
	if r.Idle && r.src != nil && !r.fields && r.src.Buffered() == 0 {
		r.src = nil // between events, nothing buffered: wait without a buffer
	}
	for {
		if r.Wire != nil && r.Wire.N()-r.wireMark > int64(r.Max)+WireSlack {
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

// buffer makes src once a byte of raw arrives, or returns raw's error.
func (r *Reader) buffer() error {
	if r.src != nil {
		return nil
	}
	for {
		n, err := r.raw.Read(r.first[:])
		if n > 0 {
			r.src = bufio.NewReaderSize(io.MultiReader(bytes.NewReader(r.first[:n]), r.raw), r.bufferSize())
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// markWire starts the wire's count of an event.
func (r *Reader) markWire() {
	if r.Wire != nil {
		r.wireMark = r.Wire.N()
	}
}

// Discard reads and drops up to n bytes of the stream.
func (r *Reader) Discard(n int) {
	if r.src != nil {
		_, _ = r.src.Discard(n)
		return
	}
	_, _ = io.CopyN(io.Discard, r.raw, int64(n))
}

// over reports whether n more bytes would make the event outgrow max.
func (r *Reader) over(n int) bool { return r.Max > 0 && r.cur.Size+n > r.Max }

// tooLarge ends the stream at an event past a bound, after read more bytes.
func (r *Reader) tooLarge(read int) error {
	r.broken = true
	return &EventTooLargeError{Max: r.Max, Read: r.cur.Size + len(r.line) + read}
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

// retryField parses a retry value: ASCII digits, milliseconds, at most
// MaxRetry.
func retryField(v []byte) (time.Duration, bool) {
	if len(v) == 0 || bytes.ContainsFunc(v, func(r rune) bool { return r < '0' || r > '9' }) {
		return 0, false
	}
	ms, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil || ms > int64(MaxRetry/time.Millisecond) {
		return MaxRetry, true
	}
	return time.Duration(ms) * time.Millisecond, true
}

// bufferSize is BufferSize, 0 meaning 4 KiB: bufio.NewReaderSize would
// take 0 for its 16-byte minimum.
func (r *Reader) bufferSize() int { return cmp.Or(r.BufferSize, 4096) }
