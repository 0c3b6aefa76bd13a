package wire

import "bytes"

// sseFramer splits a text/event-stream (WHATWG HTML, server-sent events)
// into whole events, so that only complete events reach go-sdk and a stream
// cut mid-event can be replaced by a new one without corrupting go-sdk's
// reader. Lines end with LF or CRLF.
type sseFramer struct {
	buf     []byte // bytes not yet handed on
	scanned int    // bytes of buf already split into lines
	fields  bool   // the current event has a field
	id      string // the current event's id field
	idSet   bool
	lastID  string // id of the last dispatched event that had one
}

// push appends p and returns the whole events now complete (as bytes, with
// their terminating blank line) and how many of them carry a field.
func (f *sseFramer) push(p []byte) (events int, ready []byte) {
	f.buf = append(f.buf, p...)
	cut := 0
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
			cut = f.scanned
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
	if cut > 0 {
		ready = append([]byte(nil), f.buf[:cut]...)
		f.buf = append(f.buf[:0], f.buf[cut:]...)
		f.scanned -= cut
	}
	return events, ready
}

// reset drops an incomplete event; lastID is kept for Last-Event-ID.
func (f *sseFramer) reset() {
	f.buf, f.scanned, f.fields, f.idSet = f.buf[:0], 0, false, false
}
