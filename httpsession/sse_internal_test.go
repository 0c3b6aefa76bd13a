package httpsession

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/httpsession/sse"
	"github.com/mcpsup/mcpsup/session"
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
		drops    []session.DropReason
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
		{"a line without a colon", "data: " + listChanged + "\ngarbage\n\n" + good, good, []session.DropReason{session.DropMalformedLine}, 1, false},
		{"data that is not JSON", "data: {not json\n\n" + good, good, []session.DropReason{session.DropNotJSONRPC}, 1, false},
		{"JSON that is not JSON-RPC", "data: {\"a\":1}\n\n" + good, good, []session.DropReason{session.DropNotJSONRPC}, 1, false},
		{"two blank data lines are no message, as on a call's stream", "data:\ndata:\n\n" + good, good, nil, 1, false},
		{"a batch", "data: [" + listChanged + "]\n\n" + good, good, []session.DropReason{session.DropNotJSONRPC}, 1, false},
		{"a response", "data: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\n\n" + good, good, []session.DropReason{session.DropResponse}, 1, false},
		{"a message with more JSON values than the bound", "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"data\":[1,2,3,4,5,6,7,8,9]}}\n\n" + good,
			good, []session.DropReason{session.DropTooManyValues}, 1, false},
		{"a sampling request with more messages than the bound", "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"sampling/createMessage\",\"params\":{\"messages\":[{},{}]}}\n\n" + good,
			good, []session.DropReason{session.DropTooManyValues}, 1, false},
		{"a sampling request with more content blocks than the bound", "data: {\"jsonrpc\":\"2.0\",\"method\":\"sampling/createMessage\",\"params\":{\"messages\":[{\"content\":[1,1]}]}}\n\n" + good,
			good, []session.DropReason{session.DropTooManyValues}, 1, false},
		{"an oversized event ends the stream", "data: \"" + strings.Repeat("x", 300) + "\n\n" + good, "", []session.DropReason{session.DropOversized}, 0, true},
		{"an oversized line without an end", strings.Repeat("\xff", 300), "", []session.DropReason{session.DropOversized}, 0, true},
		{"garbage lines, many in a row", strings.Repeat("\x00\x01\n\n", maxDroppedRun+3), "",
			repeat(session.DropMalformedLine, maxDroppedRun), 0, true},
	}
	for _, c := range cases {
		for _, chunk := range []int{1, 7, 1 << 20} {
			b := testKeeper(t, Config{MaxJSONValues: 10, MaxMessages: 1, MaxContentBlocks: 1, Stream: StreamConfig{MaxEventBytes: 256}})
			drops := collectDrops(b)
			out := oneAttempt(t, b, &chunked{c.in, chunk})
			assert.Equal(t, c.out, asEvents(t, out), "%s (chunks of %d)", c.name, chunk)
			assert.Equal(t, c.messages, b.att.Messages, "%s (chunks of %d)", c.name, chunk)
			assert.Equal(t, c.garbage, b.att.End == EndGarbage, "%s (chunks of %d)", c.name, chunk)
			var got []session.DropReason
			for _, d := range *drops {
				got = append(got, d.Why)
				assert.LessOrEqual(t, d.Bytes, 256+chunk, "read up to max and one chunk")
			}
			assert.Equal(t, c.drops, got, "%s (chunks of %d)", c.name, chunk)
			held, _ := b.events.Pending()
			assert.LessOrEqual(t, held, 256, "no event is held past max")
		}
	}
}

// TestSSEDropFactIsTyped: a dropped event's fact names what was wrong by
// session.DropReason, its size and the bound it broke; the server's bytes
// (a line's start, a decoder's error) reach only the log record.
func TestSSEDropFactIsTyped(t *testing.T) {
	var logs strings.Builder
	b := testKeeper(t, Config{Stream: StreamConfig{MaxEventBytes: 256},
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	var facts []session.Fact
	b.c.on.observe = func(f session.Fact) { facts = append(facts, f) }
	oneAttempt(t, b, strings.NewReader("data: {}\nsecret-of-the-server\n\ndata: \""+strings.Repeat("x", 300)+"\n\n"))
	require.Len(t, facts, 2)
	assert.Equal(t, session.EventDropped{Count: 1, Why: session.DropMalformedLine, Bytes: 31}, facts[0], "the event: its two lines and the blank one")
	oversized := facts[1].(session.EventDropped)
	assert.Equal(t, session.DropOversized, oversized.Why)
	assert.Equal(t, 2, oversized.Count)
	assert.Equal(t, 256, oversized.Bound)
	assert.Greater(t, oversized.Bytes, 256)
	assert.Contains(t, logs.String(), "secret-of-the-server", "the line's start is logged")
}

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

// testKeeper returns a keeper of a Transport configured by cfg.
func testKeeper(t testing.TB, cfg Config) *streamBody {
	t.Helper()
	return newStreamBody(wireConn(cfg, "http://127.0.0.1/", nil), context.Background())
}

// stopAfterOne is a keeper that makes no attempt of its own.
type stopAfterOne struct{ *streamBody }

func (stopAfterOne) redial() (jsonrpc.Message, bool) { return nil, true }

// oneAttempt runs one attempt of keeper b on body and returns the messages
// it handed on.
func oneAttempt(t testing.TB, b *streamBody, body io.Reader) []jsonrpc.Message {
	require.NoError(t, b.open(&http.Response{Header: http.Header{}, Body: io.NopCloser(body)}))
	var out []jsonrpc.Message
	for {
		msg, done := b.next(stopAfterOne{b})
		if done {
			return out
		}
		out = append(out, msg)
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

func repeat(r session.DropReason, n int) []session.DropReason {
	out := make([]session.DropReason, n)
	for i := range out {
		out[i] = r
	}
	return out
}

// TestSSEFilterIDsAndRetry: ids and retry fields are kept for the re-dial,
// also past a dropped event, and never handed on.
func TestSSEFilterIDsAndRetry(t *testing.T) {
	b := testKeeper(t, Config{})
	drops := collectDrops(b)
	out := oneAttempt(t, b, strings.NewReader("id: 7\ndata: "+listChanged+"\n\nid: 8\ndata: nope\n\nretry: 2s\n\nretry: 99999999999999999999\n\n"+
		"id: 9\ndata: {\"jsonrpc\""))
	assert.Equal(t, "data: "+listChanged+"\n\n", asEvents(t, out), "no id reaches go-sdk")
	assert.Equal(t, "8", b.lastID, "the dropped event is not asked for again; a cut event's id is not taken")
	assert.Equal(t, sse.MaxRetry, b.events.Retry(), "a value not all digits is ignored; a huge one is bounded")
	require.Len(t, *drops, 2)
	assert.Equal(t, session.DropNotJSONRPC, (*drops)[0].Why)
	assert.Equal(t, session.DropTruncated, (*drops)[1].Why)
	out = oneAttempt(t, b, strings.NewReader("\xEF\xBB\xBFdata: "+listChanged+"\n\nretry: 1500\n\n"))
	assert.Equal(t, "data: "+listChanged+"\n\n", asEvents(t, out), "framing starts over after a cut, a BOM stripped")
	assert.Equal(t, 1500*time.Millisecond, b.events.Retry())
}

// BenchmarkSSEFilterEvent measures the standalone stream keeper on one
// well-formed notification event.
func BenchmarkSSEFilterEvent(b *testing.B) {
	in := "data: " + listChanged + "\n\n"
	k := testKeeper(b, Config{})
	b.ReportAllocs()
	for b.Loop() {
		if len(oneAttempt(b, k, strings.NewReader(in))) != 1 {
			b.Fatal("event not handed on")
		}
	}
}

// collectDrops gathers the EventDropped facts b's session reports.
func collectDrops(b *streamBody) *[]session.EventDropped {
	var drops []session.EventDropped
	b.c.on.observe = func(f session.Fact) {
		if d, ok := f.(session.EventDropped); ok {
			drops = append(drops, d)
		}
	}
	return &drops
}
