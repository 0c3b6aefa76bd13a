package wire

import (
	"bytes"
	"strconv"
	"strings"
	"time"
)

// truncatedEvent names the event that ends, for go-sdk, an oversized event
// cut mid-way (see [sseFramer.cut]). go-sdk skips events whose name is not
// "message" (mcp/streamable.go processStream), so the partial event is
// dropped whatever its data.
const truncatedEvent = "mcpsup-truncated"

// maxRetryField bounds the SSE retry field's value.
const maxRetryField = 24 * time.Hour

// sseFramer splits a text/event-stream (WHATWG HTML, server-sent events)
// into whole events, so that only complete events reach go-sdk and a stream
// cut mid-event can be replaced by a new one without corrupting go-sdk's
// reader. Lines end with LF or CRLF.
//
// It holds at most max bytes of one incomplete event. An event that outgrows
// max is handed on line by line as its lines complete (and a line that
// outgrows max too, byte by byte up to its LF); whole-event framing resumes
// after its terminating blank line.
type sseFramer struct {
	max int // bytes of one incomplete event held at most; 0: no bound

	buf     []byte // bytes not yet handed on
	scanned int    // bytes of buf already split into lines
	done    int    // bytes of buf handed on by push

	// The current event, as go-sdk reads it (mcp/event.go scanEventsLimited).
	fields    bool   // it has a field
	dataLines int    // its data fields
	dataBytes bool   // one of them is not blank
	name      string // its event field
	id        string // its id field
	idSet     bool

	// An event that outgrew max.
	passing   bool // its lines are handed on as they complete
	midLine   bool // its current line outgrew max: handed on unparsed up to its LF
	lineColon bool // the handed-on start of that line holds a colon

	lastID   string        // id of the last dispatched event that had one: the re-dial's Last-Event-ID
	readerID string        // the last non-empty id go-sdk parsed: the Last-Event-ID of its reconnect
	retry    time.Duration // the reconnection time of the last valid retry field
}

// framed is what one push made ready.
type framed struct {
	events   int    // whole events with a field
	messages int    // of them, those go-sdk decodes as a JSON-RPC message
	ready    []byte // bytes to hand on; aliases the framer's buffer until its next call
}

// push appends p and returns what is now ready to hand on: whole events with
// their terminating blank line, comments, and the lines of an event that
// outgrew max.
func (f *sseFramer) push(p []byte) framed {
	var r framed
	f.compact()
	f.buf = append(f.buf, p...)
	for f.scanned < len(f.buf) {
		i := bytes.IndexByte(f.buf[f.scanned:], '\n')
		if f.midLine {
			if i < 0 {
				f.scanned = len(f.buf)
			} else {
				f.scanned += i + 1
				f.midLine = false
			}
			f.done = f.scanned
			continue
		}
		if i < 0 {
			break
		}
		line := bytes.TrimSuffix(f.buf[f.scanned:f.scanned+i], []byte("\r"))
		f.scanned += i + 1
		if len(line) == 0 {
			f.dispatch(&r)
			f.done = f.scanned
			continue
		}
		f.field(line)
		if f.passing {
			f.done = f.scanned
		}
	}
	if f.max > 0 && len(f.buf)-f.done > f.max {
		// Too large to hold: hand on what is held, and the rest as it comes.
		f.passing = true
		if tail := f.buf[f.scanned:]; len(tail) > 0 {
			f.longLine(tail)
			f.scanned = len(f.buf)
		}
		f.done = len(f.buf)
	}
	r.ready = f.buf[:f.done]
	return r
}

// field notes one non-blank line of the current event.
func (f *sseFramer) field(line []byte) {
	if line[0] == ':' {
		return // a comment, e.g. a keepalive
	}
	f.fields = true
	name, value, _ := bytes.Cut(line, []byte(":"))
	switch string(name) {
	case "data":
		f.dataLines++
		f.dataBytes = f.dataBytes || len(bytes.TrimSpace(value)) > 0
	case "event":
		f.name = string(bytes.TrimSpace(value))
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			f.id, f.idSet = string(bytes.TrimPrefix(value, []byte(" "))), true
		}
	case "retry":
		if d, ok := retryField(bytes.TrimPrefix(value, []byte(" "))); ok {
			f.retry = d
		}
	}
}

// longLine notes the start of a line too long to hold, handed on unparsed.
func (f *sseFramer) longLine(start []byte) {
	f.midLine = true
	f.lineColon = bytes.IndexByte(start, ':') >= 0
	if start[0] == ':' {
		return
	}
	f.fields = true
	if name, value, ok := bytes.Cut(start, []byte(":")); ok && string(name) == "data" {
		f.dataLines++
		f.dataBytes = f.dataBytes || len(bytes.TrimSpace(value)) > 0
	}
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

// message reports whether go-sdk decodes the current event as a JSON-RPC
// message: it has data (go-sdk joins data fields with LF, so two blank ones
// are data too) and no event name other than "message".
func (f *sseFramer) message() bool {
	return (f.dataBytes || f.dataLines > 1) && (f.name == "" || f.name == "message")
}

// dispatch ends the current event at its blank line.
func (f *sseFramer) dispatch(r *framed) {
	if f.fields {
		r.events++
		if f.message() {
			r.messages++
		}
		if f.idSet {
			f.lastID = f.id
		}
	}
	f.noteReaderID()
	f.endEvent()
}

// noteReaderID records the id go-sdk takes from the current event.
func (f *sseFramer) noteReaderID() {
	if id := strings.TrimSpace(f.id); f.idSet && id != "" {
		f.readerID = id
	}
}

func (f *sseFramer) endEvent() {
	f.fields, f.dataLines, f.dataBytes, f.name, f.id, f.idSet = false, 0, false, "", "", false
	f.passing, f.midLine, f.lineColon = false, false, false
}

// cut drops the incomplete event after the stream was cut. When part of it
// was handed on already (an event that outgrew max), it returns the bytes
// that end it for go-sdk: the end of the current line (with a colon, since
// go-sdk fails the session on a line without one) and an event field naming
// [truncatedEvent] before the blank line, so go-sdk dispatches the partial
// event and skips it, rather than decoding truncated data, which fails the
// session (mcp/streamable.go processStream, "failed to decode event"). The
// partial event's id, if go-sdk got it, becomes go-sdk's last event id, but
// not the keeper's: the re-dial asks for the event again.
func (f *sseFramer) cut() []byte {
	var end []byte
	if f.passing {
		if f.midLine {
			if !f.lineColon {
				end = append(end, ':')
			}
			end = append(end, '\n')
		}
		end = append(end, "event: "+truncatedEvent+"\n\n"...)
		f.noteReaderID()
	}
	f.buf, f.scanned, f.done = f.buf[:0], 0, 0
	f.endEvent()
	f.compact()
	return end
}

// compact drops the bytes push returned as ready, and a large buffer once
// it is empty.
func (f *sseFramer) compact() {
	if f.done > 0 {
		n := copy(f.buf, f.buf[f.done:])
		f.buf, f.scanned, f.done = f.buf[:n], f.scanned-f.done, 0
	}
	if len(f.buf) == 0 && cap(f.buf) > keptBuffer {
		f.buf = nil
	}
}
