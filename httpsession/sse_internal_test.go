package httpsession

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/msgcheck"
)

const listChanged = `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`

// TestSSEFilter: only whole events carrying one JSON-RPC request or
// notification reach go-sdk, re-encoded; every other event is dropped and
// named, and the events after it still pass.
func TestSSEFilter(t *testing.T) {
	good := "data: " + listChanged + "\n\n"
	cases := []struct {
		name     string
		in       string
		out      string
		drops    []DropReason
		messages int
		garbage  bool
	}{
		{"a notification", good, good, nil, 1, false},
		{"a byte order mark at the start", "\xEF\xBB\xBF" + good, good, nil, 1, false},
		{"a request, CRLF, data over two lines", "event: message\r\ndata: {\"jsonrpc\":\"2.0\",\r\ndata:  \"id\":1,\"method\":\"ping\"}\r\n\r\n",
			"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n\n", nil, 1, false},
		{"comments and a priming event hand on nothing", ": keepalive\n\nid: 1\ndata: \nretry: 1500\n\n", "", nil, 0, false},
		{"another event type is skipped silently", "event: other\ndata: not json\n\n" + good, good, nil, 1, false},
		// WHATWG HTML, server-sent events: a CR alone ends a line; "If value
		// starts with a U+0020 SPACE character, remove it from value": one
		// space, so "event:  message" names the type " message", which is
		// not MCP's.
		{"CR line ends", "data: " + listChanged + "\r\r", good, nil, 1, false},
		{"a second space after event: names another type", "event:  message\ndata: " + listChanged + "\n\n" + good, good, nil, 1, false},
		{"a line without a colon", "data: " + listChanged + "\ngarbage\n\n" + good, good, []DropReason{DropMalformedLine}, 1, false},
		{"data that is not JSON", "data: {not json\n\n" + good, good, []DropReason{DropNotJSONRPC}, 1, false},
		{"JSON that is not JSON-RPC", "data: {\"a\":1}\n\n" + good, good, []DropReason{DropNotJSONRPC}, 1, false},
		{"two blank data lines are no message, as on a call's stream", "data:\ndata:\n\n" + good, good, nil, 1, false},
		{"a batch", "data: [" + listChanged + "]\n\n" + good, good, []DropReason{DropNotJSONRPC}, 1, false},
		{"a response", "data: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\n\n" + good, good, []DropReason{DropResponse}, 1, false},
		{"a message with more JSON values than the bound", "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"data\":[1,2,3,4,5,6,7,8,9]}}\n\n" + good,
			good, []DropReason{DropTooManyValues}, 1, false},
		{"a sampling request with more messages than the bound", "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"sampling/createMessage\",\"params\":{\"messages\":[{},{}]}}\n\n" + good,
			good, []DropReason{DropTooManyValues}, 1, false},
		{"a sampling request with more content blocks than the bound", "data: {\"jsonrpc\":\"2.0\",\"method\":\"sampling/createMessage\",\"params\":{\"messages\":[{\"content\":[1,1]}]}}\n\n" + good,
			good, []DropReason{DropTooManyValues}, 1, false},
		{"an oversized event ends the stream", "data: \"" + strings.Repeat("x", 300) + "\n\n" + good, "", []DropReason{DropOversized}, 0, true},
		{"an oversized line without an end", strings.Repeat("\xff", 300), "", []DropReason{DropOversized}, 0, true},
		{"garbage lines, many in a row", strings.Repeat("\x00\x01\n\n", maxDroppedRun+3), "",
			repeat(DropMalformedLine, maxDroppedRun), 0, true},
	}
	for _, c := range cases {
		for _, chunk := range []int{1, 7, 1 << 20} {
			f := sseFilter{events: eventReader{max: 256}, limits: msgcheck.Limits{JSONValues: 10, Messages: 1, ContentBlocks: 1}}
			var out []jsonrpc.Message
			var r filtered
			for in := []byte(c.in); len(in) > 0 && !r.garbage; {
				n := min(chunk, len(in))
				var step filtered
				out = f.push(in[:n], out, &step)
				in = in[n:]
				r.messages += step.messages
				r.drops = append(r.drops, step.drops...)
				r.garbage = step.garbage
			}
			assert.Equal(t, c.out, asEvents(t, out), "%s (chunks of %d)", c.name, chunk)
			assert.Equal(t, c.messages, r.messages, "%s (chunks of %d)", c.name, chunk)
			assert.Equal(t, c.garbage, r.garbage, "%s (chunks of %d)", c.name, chunk)
			var got []DropReason
			for _, d := range r.drops {
				got = append(got, d.Reason)
				assert.True(t, errors.Is(d, ErrStreamEvent))
				assert.LessOrEqual(t, d.Bytes, 256+chunk, "read up to max and one chunk")
			}
			assert.Equal(t, c.drops, got, "%s (chunks of %d)", c.name, chunk)
			assert.LessOrEqual(t, len(f.events.line), 256, "no event is held past max")
		}
	}
}

// asEvents writes msgs as the events they came in.
func asEvents(t *testing.T, msgs []jsonrpc.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		data, err := jsonrpc.EncodeMessage(m)
		require.NoError(t, err)
		b.WriteString("data: " + string(data) + "\n\n")
	}
	return b.String()
}

func repeat(r DropReason, n int) []DropReason {
	out := make([]DropReason, n)
	for i := range out {
		out[i] = r
	}
	return out
}

// TestSSEFilterIDsAndRetry: ids and retry fields are kept for the re-dial,
// also past a dropped event, and never handed on.
func TestSSEFilterIDsAndRetry(t *testing.T) {
	var f sseFilter
	var r filtered
	out := f.push([]byte("id: 7\ndata: "+listChanged+"\n\nid: 8\ndata: nope\n\nretry: 2s\n\nretry: 99999999999999999999\n\n"), nil, &r)
	assert.Equal(t, "data: "+listChanged+"\n\n", asEvents(t, out), "no id reaches go-sdk")
	assert.Equal(t, "8", f.lastID, "the dropped event is not asked for again")
	assert.Equal(t, maxRetryField, f.events.retry, "a value not all digits is ignored; a huge one is bounded")

	r = filtered{}
	f.push([]byte("id: 9\ndata: {\"jsonrpc\""), nil, &r)
	f.cut(&r)
	require.Len(t, r.drops, 1)
	assert.Equal(t, DropTruncated, r.drops[0].Reason)
	assert.Equal(t, "8", f.lastID, "a cut event's id is not taken")
	out = f.push([]byte("\xEF\xBB\xBFdata: "+listChanged+"\n\n"), nil, &r)
	assert.Equal(t, "data: "+listChanged+"\n\n", asEvents(t, out), "framing starts over after a cut, a BOM stripped")
	assert.Equal(t, 1500*time.Millisecond, func() time.Duration {
		f.events.retry = 0
		f.push([]byte("retry: 1500\n\n"), nil, &r)
		return f.events.retry
	}())
}

// BenchmarkSSEFilterEvent measures the standalone stream filter on one
// well-formed notification event.
func BenchmarkSSEFilterEvent(b *testing.B) {
	in := []byte("data: " + listChanged + "\n\n")
	f := sseFilter{events: eventReader{max: 1 << 20}}
	var out []jsonrpc.Message
	b.ReportAllocs()
	for b.Loop() {
		var r filtered
		out = f.push(in, out[:0], &r)
		if r.messages != 1 {
			b.Fatal("event not handed on")
		}
	}
}
