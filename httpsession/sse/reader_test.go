package sse

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chunked reads s at most n bytes at a time.
type chunked struct {
	s string
	n int
}

func (c *chunked) Read(p []byte) (int, error) {
	if c.s == "" {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), c.n)], c.s)
	c.s = c.s[k:]
	return k, nil
}

// readEvents reads in whole through a bufio.Reader of 16 bytes (lines
// longer than the buffer are assembled), its source handing over chunk
// bytes a read (0: all it can), and returns what Next gave: one entry per
// event or error, and the reader for its stream state.
func readEvents(t *testing.T, in string, limit, chunk int) ([]string, *Reader) {
	t.Helper()
	var got []string
	take := func(ev Event, err error) {
		var bare *LineError
		switch {
		case err == nil:
			s := fmt.Sprintf("event data=%q", ev.Data)
			if !ev.HasData {
				s = "event no data"
			}
			if ev.IDSet {
				s += fmt.Sprintf(" id=%q", ev.ID)
			}
			if ev.OtherType {
				s += " other type"
			}
			if ev.Message() {
				s += " message"
			}
			got = append(got, s)
		case errors.As(err, &bare):
			got = append(got, fmt.Sprintf("line without a colon %q", bare.Start))
		case errors.Is(err, ErrEventTooLarge):
			var e *EventTooLargeError
			require.ErrorAs(t, err, &e)
			assert.LessOrEqual(t, e.Read, limit+16, "read up to the bound and one read")
			got = append(got, "too large")
		default:
			t.Fatalf("unexpected error %v", err)
		}
	}
	if chunk == 0 {
		chunk = len(in) + 1
	}
	r := &Reader{Max: limit, BufferSize: 16}
	r.Reset(&chunked{in, chunk})
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			return got, r
		}
		take(ev, err)
		if errors.Is(err, ErrEventTooLarge) {
			return got, r
		}
	}
}

// TestEventReaderSpec holds the one SSE parser to the event stream
// interpretation of WHATWG HTML, server-sent events (the rules MCP's
// streamable HTTP transport names for its event streams, 2025-11-25 and
// 2026-07-28 basic/transports), read in chunks of every size.
func TestEventReaderSpec(t *testing.T) {
	long := strings.Repeat("x", 100)
	cases := []struct {
		name string
		in   string
		max  int // 0: none
		want []string
	}{
		// "If value starts with a U+0020 SPACE character, remove it from value."
		{"no space after the colon", "data:x\n\n", 0, []string{`event data="x" message`}},
		{"one space after the colon is removed", "data: x\n\n", 0, []string{`event data="x" message`}},
		{"only one space is removed", "data:  x\n\n", 0, []string{`event data=" x" message`}},
		{"a colon in the value stays", "data: a: b\n\n", 0, []string{`event data="a: b" message`}},
		// "Append the field value to the data buffer, then append a single
		// U+000A LINE FEED (LF) character"; at dispatch "If the data
		// buffer's last character is a U+000A LINE FEED (LF) character,
		// then remove the last character".
		{"two data lines are joined with LF", "data: a\ndata: b\n\n", 0, []string{`event data="a\nb" message`}},
		{"an empty data line", "data: a\ndata:\ndata: b\n\n", 0, []string{`event data="a\n\nb" message`}},
		// "If the line is not empty but does not contain a U+003A COLON
		// character (:) ... using the whole line as the field name, and the
		// empty string as the field value."
		{"a bare data field is an empty data line", "data: a\ndata\n\n", 0,
			[]string{`line without a colon "data"`, `event data="a\n" message`}},
		{"a bare field alone", "data\n\n", 0, []string{`line without a colon "data"`, `event data=""`}},
		{"a long bare line is named by its start", long + "\n\n", 0,
			[]string{fmt.Sprintf("line without a colon %q", long[:maxLineStart]), "event no data"}},
		// "If the line starts with a U+003A COLON character (:) Ignore the line."
		{"comments", ": hello\ndata: x\n:\n: more\n\n", 0, []string{`event data="x" message`}},
		{"comments alone are no event", ": keepalive\n\n:\n\n", 0, nil},
		{"an unknown field is ignored", "foo: bar\ndata: x\n\n", 0, []string{`event data="x" message`}},
		// "The UTF-8 decode algorithm strips one leading UTF-8 Byte Order
		// Mark (BOM), if any."
		{"a leading BOM is stripped", "\xEF\xBB\xBFdata: x\n\n", 0, []string{`event data="x" message`}},
		{"only one, at the start", "\xEF\xBB\xBF\xEF\xBB\xBFdata: x\n\ndata: y\n\xEF\xBB\xBFdata: z\n\n", 0,
			[]string{"event no data", `event data="y" message`}},
		// "Lines must be separated by either a U+000D CARRIAGE RETURN U+000A
		// LINE FEED (CRLF) character pair, a single U+000A LINE FEED (LF)
		// character, or a single U+000D CARRIAGE RETURN (CR) character."
		{"CR line ends", "data: a\rdata: b\r\r", 0, []string{`event data="a\nb" message`}},
		{"CRLF line ends", "data: a\r\ndata: b\r\n\r\n", 0, []string{`event data="a\nb" message`}},
		{"mixed line ends", "data: a\r\n\rdata: b\n\r\n\r\ndata: c\r\n\n", 0,
			[]string{`event data="a" message`, `event data="b" message`, `event data="c" message`}},
		// "If the field value does not contain U+0000 NULL, then set the
		// last event ID buffer to the field value. Otherwise, ignore the
		// field."
		{"an id", "id: 7\ndata: x\n\n", 0, []string{`event data="x" id="7" message`}},
		{"an id keeps a second space", "id:  7\ndata: x\n\n", 0, []string{`event data="x" id=" 7" message`}},
		{"an id with a NUL is ignored", "id: a\x00b\ndata: x\n\n", 0, []string{`event data="x" message`}},
		{"an empty id", "id\ndata: x\n\n", 0, []string{`line without a colon "id"`, `event data="x" id="" message`}},
		// "If the data buffer is an empty string, set the data buffer and
		// the event type buffer to the empty string and return": an event
		// without data is not dispatched; Next returns it for its id.
		{"an event without data is not dispatched", "id: 5\n\n", 0, []string{`event no data id="5"`}},
		{"a priming event is no message", "id: 1\ndata:\n\n", 0, []string{`event data="" id="1"`}},
		{"data of white space is no message", "data: \t\ndata:\n\n", 0, []string{`event data="\t\n"`}},
		// "If the field name is "event": Set the event type buffer to field
		// value."; the default type is "message".
		{"event type message", "event: message\ndata: x\n\n", 0, []string{`event data="x" message`}},
		{"another event type", "event: other\ndata: x\n\n", 0, []string{`event data="x" other type`}},
		{"a second space names another type", "event:  message\ndata: x\n\n", 0, []string{`event data="x" other type`}},
		{"the type does not outlive its event", "event: other\ndata: x\n\ndata: y\n\n", 0,
			[]string{`event data="x" other type`, `event data="y" message`}},
		// "Once the end of the file is reached, any pending data must be
		// discarded."
		{"an event cut by the end is dropped", "data: x\n\ndata: y\n", 0, []string{`event data="x" message`}},
		// The reader's bounds: one event, partial line included.
		{"an event over the bound", "data: 0123456789abcdef\n\n", 16, []string{"too large"}},
		{"a line over the bound without an end", strings.Repeat("x", 40), 16, []string{"too large"}},
		{"lines over the bound together", "data: 0123\ndata: 4567\ndata: 89ab\n\n", 16, []string{"too large"}},
		{"comments between events do not count", strings.Repeat(": 12345678\n", 8) + "data: x\n\n", 16, []string{`event data="x" message`}},
		{"an event at the bound", "data: 012345678\n\n", 17, []string{`event data="012345678" message`}},
	}
	for _, c := range cases {
		for _, chunk := range []int{0, 1, 2, 7, 1 << 20} {
			got, _ := readEvents(t, c.in, c.max, chunk)
			assert.Equal(t, c.want, got, "%s (chunks of %d; 0: whole)", c.name, chunk)
		}
	}
}

// TestEventReaderRetry: "If the field value consists of only ASCII digits,
// then interpret the field value as an integer in base ten, and set the
// event stream's reconnection time to that integer. Otherwise, ignore the
// field." The time is the stream's, set at the field, kept across a reset.
func TestEventReaderRetry(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Duration
	}{
		{"retry: 1500\n", 1500 * time.Millisecond},
		{"retry:1500\n\nretry: 15x\n\n", 1500 * time.Millisecond},
		{"retry:  1500\n\n", 0},
		{"retry: -1\n\n", 0},
		{"retry\n\n", 0},
		{"retry: 99999999999999999999\n\n", MaxRetry},
	} {
		for _, chunk := range []int{0, 1, 1 << 20} {
			_, r := readEvents(t, c.in, 0, chunk)
			assert.Equal(t, c.want, r.Retry(), "%q (chunks of %d)", c.in, chunk)
			r.Reset(r.raw)
			assert.Equal(t, c.want, r.Retry(), "kept across a reset")
		}
	}
}

// TestEventReaderWireBound: a decoded source's event may take at most
// max+WireSlack bytes on the wire, counted from the last empty line:
// comment lines without one, which the decoded bound lets pass, end there.
func TestEventReaderWireBound(t *testing.T) {
	half := strings.Repeat(":\n", (16+WireSlack)/4+1)
	for _, c := range []struct {
		in   string
		over bool
	}{
		{half + half + "data: x\n\n", true},
		{half + "\n" + half + "data: x\n\n", false},
	} {
		wire := &countingReader{r: strings.NewReader(c.in)}
		r := Reader{Max: 16, Wire: wire, BufferSize: 16}
		r.Reset(wire)
		ev, err := r.Next()
		if c.over {
			require.ErrorIs(t, err, ErrEventTooLarge, "no empty line: over the wire bound")
			_, err = r.Next()
			require.ErrorIs(t, err, ErrEventTooLarge, "and nothing more is read")
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, "x", string(ev.Data))
	}
}

// A reset starts a new stream: an event or a line under way is dropped,
// and a BOM is stripped again.
func TestEventReaderReset(t *testing.T) {
	var r Reader
	r.Reset(strings.NewReader("\xEF\xBB\xBFid: 1\ndata: x\n\ndata: cut\ndata: more"))
	ev, err := r.Next()
	require.NoError(t, err)
	assert.Equal(t, "1", ev.ID)
	_, err = r.Next()
	require.ErrorIs(t, err, io.EOF)
	n, underWay := r.Pending()
	assert.True(t, underWay)
	assert.Equal(t, len("data: cut\ndata: more"), n)
	r.Reset(strings.NewReader("\xEF\xBB\xBFdata: y\n\n"))
	n, underWay = r.Pending()
	assert.False(t, underWay)
	assert.Zero(t, n)
	ev, err = r.Next()
	require.NoError(t, err)
	assert.Equal(t, "y", string(ev.Data), "the cut event is gone, the BOM stripped")
}

// FuzzEventReaderFraming: how the stream is cut into reads never changes
// what the reader finds in it, bounded or not.
func FuzzEventReaderFraming(f *testing.F) {
	f.Add("\xEF\xBB\xBFid: 1\r\ndata: a\rdata\n: c\r\n\r\nevent: x\nretry: 5\ndata:  b\n\n", uint8(3))
	f.Add("data: "+strings.Repeat("y", 80)+"\r\r\n\n", uint8(1))
	f.Fuzz(func(t *testing.T, in string, chunk uint8) {
		for _, limit := range []int{0, 64} {
			whole, r := readEvents(t, in, limit, 0)
			split, q := readEvents(t, in, limit, int(chunk)+1)
			require.Equal(t, whole, split, "chunks of %d, bound %d", int(chunk)+1, limit)
			require.Equal(t, r.Retry(), q.Retry())
		}
	})
}

// countingReader counts the bytes read from r, as a transport counts the
// bytes on the wire.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// TestEventReaderKeepsNoLargeLine: a line longer than KeptLine, read across
// many reads, leaves no line buffer over KeptLine behind.
func TestEventReaderKeepsNoLargeLine(t *testing.T) {
	r := Reader{BufferSize: 16}
	r.Reset(strings.NewReader(": " + strings.Repeat("y", 100<<10) + "\nid: 1\n\n"))
	_, err := r.Next()
	require.NoError(t, err)
	assert.LessOrEqual(t, cap(r.line), KeptLine)
}

func (c *countingReader) N() int64 { return c.n }

// readsCounter counts the Read calls made on it.
type readsCounter struct {
	r     io.Reader
	reads int
}

func (c *readsCounter) Read(p []byte) (int, error) { c.reads++; return c.r.Read(p) }

// The zero BufferSize is the documented 4 KiB, not bufio's 16-byte minimum
// that NewReaderSize(r, 0) would give: a 3 KiB event takes one read.
func TestZeroBufferSizeReadsFourKiBAtOnce(t *testing.T) {
	src := &readsCounter{r: strings.NewReader("data: " + strings.Repeat("x", 3000) + "\n\n")}
	var r Reader
	r.Reset(src)
	ev, err := r.Next()
	require.NoError(t, err)
	assert.Len(t, ev.Data, 3000)
	assert.LessOrEqual(t, src.reads, 2, "reads of the stream")
}
