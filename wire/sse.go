package wire

import "bytes"

// sseFramer splits a text/event-stream (WHATWG HTML, server-sent events)
// into whole events, so that only complete events reach go-sdk and a stream
// cut mid-event can be replaced by a new one without corrupting go-sdk's
// reader. Lines end with LF or CRLF.
type sseFramer struct {
	buf     []byte // bytes not yet handed on
	scanned int    // bytes of buf already split into lines
	done    int    // bytes of buf that are whole events, handed on by push
	fields  bool   // the current event has a field
	id      string // the current event's id field
	idSet   bool
	lastID  string // id of the last dispatched event that had one
}

// push appends p and returns how many whole events are now complete with
// a field, and their bytes (with their terminating blank line). ready
// aliases the framer's buffer: it is valid until the next call of any
// method.
func (f *sseFramer) push(p []byte) (events int, ready []byte) {
	f.compact()
	f.buf = append(f.buf, p...)
	for {
		i := bytes.IndexByte(f.buf[f.scanned:], '\n')
		if i < 0 {
			break
		}
		line := bytes.TrimSuffix(f.buf[f.scanned:f.scanned+i], []byte("\r"))
		f.scanned += i + 1
		switch {
		case len(line) == 0:
			if f.fields {
				events++
				if f.idSet {
					f.lastID = f.id
				}
			}
			f.fields, f.idSet = false, false
			f.done = f.scanned
		case line[0] == ':':
			// A comment, e.g. a keepalive.
		default:
			f.fields = true
			name, value, _ := bytes.Cut(line, []byte(":"))
			if string(name) == "id" && bytes.IndexByte(value, 0) < 0 {
				f.id, f.idSet = string(bytes.TrimPrefix(value, []byte(" "))), true
			}
		}
	}
	return events, f.buf[:f.done]
}

// pending returns the bytes of the incomplete event.
func (f *sseFramer) pending() []byte { return f.buf[f.done:] }

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

// reset drops an incomplete event; lastID is kept for Last-Event-ID.
func (f *sseFramer) reset() {
	f.buf, f.scanned, f.done, f.fields, f.idSet = f.buf[:0], 0, 0, false, false
	f.compact()
}
