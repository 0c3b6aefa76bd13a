package wire

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestSSEFramerDeliversWholeEventsOnly(t *testing.T) {
	var f sseFramer
	r := f.push([]byte(": keepalive\n\nid: 7\ndata: {\"a\""))
	assert.Equal(t, 0, r.events, "a comment is not an event")
	assert.Equal(t, ": keepalive\n\n", string(r.ready))
	f.compact()
	r = f.push([]byte(":1}\r\n\r\ndata: partial"))
	assert.Equal(t, 1, r.events)
	assert.Equal(t, 1, r.messages)
	assert.Equal(t, "id: 7\ndata: {\"a\":1}\r\n\r\n", string(r.ready))
	assert.Equal(t, "7", f.lastID)
	assert.Empty(t, f.cut(), "nothing of the partial event was handed on")
	r = f.push([]byte("data: x\n\n"))
	assert.Equal(t, 1, r.events)
	assert.Equal(t, "data: x\n\n", string(r.ready), "the cut partial event was dropped")
}

// TestSSEFramerCountsMessages: only events go-sdk decodes as a message
// count: a priming event (SEP-1699) or a named event is no message.
func TestSSEFramerCountsMessages(t *testing.T) {
	var f sseFramer
	r := f.push([]byte("id: 1\ndata: \nretry: 1500\n\n" + "event: other\ndata: {}\n\n" + "event: message\ndata: {}\n\n" + "data:\ndata:\n\n"))
	assert.Equal(t, 4, r.events)
	assert.Equal(t, 2, r.messages, "a message event and two blank data lines (go-sdk decodes an LF)")
	assert.Equal(t, 1500*time.Millisecond, f.retry)
	assert.Equal(t, "1", f.readerID)
	f.compact()
	f.push([]byte("retry: 2s\n\nretry: 99999999999999999999\n\n"))
	assert.Equal(t, maxRetryField, f.retry, "a value not all digits is ignored; a huge one is bounded")
}

// TestSSEFramerOversizedEvent: an event larger than max is handed on as its
// lines complete, and whole-event framing resumes after it.
func TestSSEFramerOversizedEvent(t *testing.T) {
	f := sseFramer{max: 16}
	large := strings.Repeat("x", 40)
	var got strings.Builder
	r := f.push([]byte("id: 3\nevent: other\ndata: " + large[:20]))
	assert.Equal(t, "id: 3\nevent: other\ndata: "+large[:20], string(r.ready), "held bytes outgrew max: all handed on")
	got.Write(r.ready)
	f.compact()
	r = f.push([]byte(large[20:] + "\n\ndata: {}\n\ndata: {\"b\""))
	got.Write(r.ready)
	assert.Equal(t, 2, r.events)
	assert.Equal(t, 1, r.messages)
	assert.Equal(t, "3", f.lastID)
	assert.Equal(t, "id: 3\nevent: other\ndata: "+large+"\n\ndata: {}\n\n", got.String(), "framing resumed: the partial event is held")
	assert.Empty(t, f.cut(), "a held partial event is just dropped")
}

// TestSSEFramerCutInsideOversizedEvent: a cut inside an event already partly
// handed on ends it for go-sdk with an event name go-sdk skips, and a colon
// when the cut line has none.
func TestSSEFramerCutInsideOversizedEvent(t *testing.T) {
	cases := []struct{ name, in, end string }{
		{"mid data line", "id: 9\ndata: {\"jsonrpc\":\"2.0\",", "\nevent: mcpsup-truncated\n\n"},
		{"mid field name", "data: " + strings.Repeat("y", 20) + "\n" + strings.Repeat("d", 20), ":\nevent: mcpsup-truncated\n\n"},
		{"at a line start", "data: " + strings.Repeat("y", 20) + "\n", "event: mcpsup-truncated\n\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := sseFramer{max: 16}
			r := f.push([]byte(c.in))
			assert.Equal(t, c.in, string(r.ready))
			assert.Equal(t, c.end, string(f.cut()))
			assert.Empty(t, f.lastID, "the keeper asks for the dropped event again")
			f.compact()
			r = f.push([]byte("data: {}\n\n"))
			assert.Equal(t, "data: {}\n\n", string(r.ready))
			assert.Equal(t, 1, r.messages)
		})
	}
	f := sseFramer{max: 16}
	f.push([]byte("id: 9\ndata: {\"jsonrpc\":\"2.0\","))
	f.cut()
	assert.Equal(t, "9", f.readerID, "go-sdk took the truncated event's id")
}
