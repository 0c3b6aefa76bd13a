package stdio

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/msgcheck"
	"github.com/mcpsup/mcpsup/session"
)

// TestStdoutFilterPassesOnlyJSONRPCMessages: one message per line reaches
// go-sdk; log lines, batches, JSON that is not JSON-RPC and lines past the
// bound are dropped and counted, in order, and nothing else is affected.
func TestStdoutFilterPassesOnlyJSONRPCMessages(t *testing.T) {
	const resp = `{"jsonrpc":"2.0","id":1,"result":{}}`
	const note = `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`
	in := strings.Join([]string{
		"server starting on stdio",
		resp,
		"",
		`[` + resp + `]`,
		`{"id":2}`,
		"  " + note + "\r",
		strings.Repeat("x", 100),
		`{"jsonrpc":"2.0","id":3,"result":{"text":"` + strings.Repeat("y", 300) + `"}}`,
		`{"jsonrpc":"2.0","id":4,"result":{}}`, // the last line, no newline
	}, "\n")
	var drops []session.LineDropped
	var details []string
	f := &stdoutFilter{max: 200, dropped: func(d session.LineDropped, detail string) {
		drops, details = append(drops, d), append(details, detail)
	}}
	var out bytes.Buffer
	require.NoError(t, f.copyLines(strings.NewReader(in), lines(&out)))
	assert.Equal(t, resp+"\n"+note+"\n"+`{"jsonrpc":"2.0","id":4,"result":{}}`+"\n", out.String())
	require.Len(t, drops, 5)
	assert.Equal(t, session.LineDropped{Count: 1, Why: session.DropNotJSONRPC}, drops[0], "no text of the server's in the fact")
	assert.Equal(t, `not JSON-RPC: "server starting on stdio"`, details[0], "the line's start, for the log")
	assert.Equal(t, session.DropBatch, drops[1].Why)
	assert.Contains(t, details[1], "a JSON-RPC batch")
	assert.Equal(t, session.DropNotJSONRPC, drops[2].Why)
	assert.Contains(t, details[2], "not one JSON-RPC message")
	assert.Equal(t, session.DropNotJSONRPC, drops[3].Why)
	assert.Contains(t, details[3], "not JSON-RPC")
	assert.Equal(t, session.LineDropped{Count: 5, Why: session.DropOversized, Bound: 200}, drops[4], "the bound, typed")
	assert.Equal(t, int64(5), f.count.Load())
}

// TestStdoutFilterKeepsNoLongLinesBuffer: a message near the bound passes,
// and its buffer is not held for the lines after it (a hub holds a filter
// per stdio server for each process's life); short lines keep theirs.
func TestStdoutFilterKeepsNoLongLinesBuffer(t *testing.T) {
	head, tail := `{"jsonrpc":"2.0","id":1,"result":{"t":"`, `"}}`
	long := head + strings.Repeat("x", 1<<20) + tail
	const short = `{"jsonrpc":"2.0","id":2,"result":{}}`
	f := &stdoutFilter{max: 2 << 20}
	var out bytes.Buffer
	require.NoError(t, f.copyLines(strings.NewReader(long+"\n"+short+"\n"), lines(&out)))
	require.Equal(t, long+"\n"+short+"\n", out.String())
	require.LessOrEqual(t, cap(f.line), keptLine, "the long line's buffer is kept")
	require.NoError(t, f.copyLines(strings.NewReader(short+"\n"+short+"\n"), lines(&out)))
	require.Positive(t, cap(f.line), "a short line's buffer is kept for the next")
}

// TestStdoutFilterBoundIsTheLinesBytes: a message of MaxLineBytes bytes
// passes, before a line break and as the last line without one; a byte more
// is dropped in both places.
func TestStdoutFilterBoundIsTheLinesBytes(t *testing.T) {
	const max = 64
	msg := func(n int) string {
		head, tail := `{"jsonrpc":"2.0","id":1,"result":{"t":"`, `"}}`
		return head + strings.Repeat("x", n-len(head)-len(tail)) + tail
	}
	atBound, past := msg(max), msg(max+1)
	for _, tc := range []struct{ in, out string }{
		{atBound + "\n", atBound + "\n"},
		{atBound, atBound + "\n"},
		{past + "\n", ""},
		{past, ""},
	} {
		var drops []session.LineDropped
		f := &stdoutFilter{max: max, dropped: func(d session.LineDropped, _ string) { drops = append(drops, d) }}
		var out bytes.Buffer
		require.NoError(t, f.copyLines(strings.NewReader(tc.in), lines(&out)))
		assert.Equal(t, tc.out, out.String(), "%d bytes in", len(tc.in))
		if tc.out == "" {
			assert.Equal(t, []session.LineDropped{{Count: 1, Why: session.DropOversized, Bound: max}}, drops, "%d bytes in", len(tc.in))
		} else {
			assert.Empty(t, drops)
		}
	}
}

// TestStdoutFilterDropsAMessageWithMoreOnItsLine: go-sdk frames stdout with
// encoding/json's Decoder and ends the connection when the byte after a
// value is not a line break (mcp/transport.go newIOConnLimited), while
// jsonrpc.DecodeMessage reads the first value alone: a message with more on
// its line passed the filter and cost the session. It is dropped.
func TestStdoutFilterDropsAMessageWithMoreOnItsLine(t *testing.T) {
	const note = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`
	in := strings.Join([]string{note + " ready", note + note, note + "]", note + "\t ", note}, "\n") + "\n"
	var drops []string
	f := &stdoutFilter{max: 1 << 10, dropped: func(d session.LineDropped, detail string) {
		assert.Equal(t, session.DropNotJSONRPC, d.Why)
		drops = append(drops, detail)
	}}
	var out bytes.Buffer
	require.NoError(t, f.copyLines(strings.NewReader(in), lines(&out)))
	assert.Equal(t, note+"\n"+note+"\n", out.String(), "trailing blanks are trimmed; nothing else follows a message")
	require.Len(t, drops, 3)
	for _, d := range drops {
		assert.Contains(t, d, "more than one JSON value on the line")
	}
}

// TestStdoutFilterReadsOnWhenGoSDKIsGone: once go-sdk closed the
// connection, the process's stdout is still read to its end.
func TestStdoutFilterReadsOnWhenGoSDKIsGone(t *testing.T) {
	f := &stdoutFilter{max: 1 << 10}
	c := newMarkingConn(func(session.LineDropped, string) {}, nil, 1, msgcheck.Limits{}.WithDefaults())
	c.stdin = discard{}
	require.NoError(t, c.Close())
	r := strings.NewReader(strings.Repeat(`{"jsonrpc":"2.0","method":"notifications/message","params":{}}`+"\n", 100))
	require.NoError(t, f.copyLines(r, c.pass))
	assert.Zero(t, r.Len(), "read to the end")
}

// lines writes each message passed to out as one line.
func lines(out *bytes.Buffer) func(jsonrpc.Message) {
	return func(msg jsonrpc.Message) {
		b, _ := jsonrpc.EncodeMessage(msg)
		out.Write(append(b, '\n'))
	}
}

// TestStderrTailIsBoundedAndStartsAtALine: the tail keeps the last bytes,
// from the first whole line, as valid UTF-8; every line is logged with the
// server's name.
func TestStderrTailIsBoundedAndStartsAtALine(t *testing.T) {
	var logs bytes.Buffer
	l := &stderrLog{server: "srv", log: slog.New(slog.NewTextHandler(&logs, nil)), keep: 16}
	l.copy(strings.NewReader("first line é\nsecond\nthird\n"))
	assert.Equal(t, "second\nthird\n", l.text())
	assert.Equal(t, 3, strings.Count(logs.String(), `msg="mcpsup: stdio server stderr" server=srv`))

	short := &stderrLog{server: "srv", log: slog.New(slog.DiscardHandler), keep: 64}
	short.copy(strings.NewReader("no newline at the end"))
	assert.Equal(t, "no newline at the end", short.text())

	long := &stderrLog{server: "srv", log: slog.New(slog.NewTextHandler(&logs, nil)), keep: 8}
	logs.Reset()
	long.copy(strings.NewReader(strings.Repeat("z", maxStderrLine+10) + "\n"))
	assert.Equal(t, 1, strings.Count(logs.String(), "mcpsup: stdio server stderr"), "a long line is one record")
	assert.LessOrEqual(t, len(long.text()), 8)
	assert.Equal(t, "…zzzz\n", long.text(), "a tail inside a line says so, within the bound")
}

// TestStderrFloodIsLoggedAtTheRate: a server that floods its stderr gets
// stderrLogBurst lines logged at once and stderrLogRate a second after;
// the lines past that are counted, the count logged before the next line
// that is and when stderr ends, and the tail keeps every byte.
func TestStderrFloodIsLoggedAtTheRate(t *testing.T) {
	var logs bytes.Buffer
	t0 := time.Unix(1_700_000_000, 0)
	lines := 0
	l := &stderrLog{server: "srv", log: slog.New(slog.NewTextHandler(&logs, nil)), keep: 1 << 20,
		now: func() time.Time {
			lines++
			if lines <= 1000 {
				return t0 // 1000 lines at once
			}
			return t0.Add(time.Second) // then 10 more a second later
		}}
	var in strings.Builder
	for i := range 1010 {
		fmt.Fprintf(&in, "line %d\n", i)
	}
	l.copy(strings.NewReader(in.String()))
	out := logs.String()
	assert.Equal(t, stderrLogBurst+10, strings.Count(out, `msg="mcpsup: stdio server stderr" server=srv`),
		"the burst, then the rate's 20 a second (10 lines came)")
	assert.Equal(t, 1, strings.Count(out, "lines not logged"), "%s", out)
	assert.Contains(t, out, fmt.Sprintf("lines=%d", 1000-stderrLogBurst))
	assert.Equal(t, 1010, strings.Count(l.text(), "\n"), "the tail keeps every line")

	logs.Reset()
	lines = 0
	l2 := &stderrLog{server: "srv", log: slog.New(slog.NewTextHandler(&logs, nil)), keep: 64, now: func() time.Time { return t0 }}
	l2.copy(strings.NewReader(strings.Repeat("x\n", stderrLogBurst+5)))
	assert.Contains(t, logs.String(), "lines=5", "the count is logged when stderr ends")
}

// TestStderrLongLineCountsAsOneLine: the rate and the count of lines not
// logged count lines (DESIGN.md section 7: 100 at once, the rest counted at
// Warn), however long: a line of 200,000 bytes is one record, cut to
// maxStderrLine bytes at a character's start and "…", and one token of the
// rate; its rest is not logged. stderr was read in maxStderrLine pieces,
// each counted as a line: 5,001 lines with some this long counted 5,049.
func TestStderrLongLineCountsAsOneLine(t *testing.T) {
	var logs bytes.Buffer
	t0 := time.Unix(1_700_000_000, 0)
	l := &stderrLog{server: "srv", log: slog.New(slog.NewJSONHandler(&logs, nil)), keep: 64,
		now: func() time.Time { return t0 }} // every line at once: the burst alone is logged
	long := strings.Repeat("é", 100_000) // 200,000 bytes; maxStderrLine-1 cuts inside an "é"
	var in strings.Builder
	const lines = 5001
	for i := range lines {
		if i%1000 == 1 { // lines 1 (in the burst), 1001, ... 4001
			in.WriteString(long[1:] + "\n") // starts with é's second byte: the cut falls inside an é
		} else {
			fmt.Fprintf(&in, "line %d\n", i)
		}
	}
	l.copy(strings.NewReader(in.String()))

	infos, unlogged, cuts := 0, 0, 0
	dec := json.NewDecoder(&logs)
	for dec.More() {
		var rec struct {
			Msg   string
			Line  string
			Lines int
			Cut   int `json:"cut_at_bytes"`
			Bytes int `json:"line_bytes"`
		}
		require.NoError(t, dec.Decode(&rec))
		switch rec.Msg {
		case "mcpsup: stdio server stderr":
			infos++
			if rec.Cut != 0 {
				cuts++
				assert.Equal(t, maxStderrLine, rec.Cut)
				assert.Equal(t, len(long)-1, rec.Bytes, "the whole line's length")
				assert.LessOrEqual(t, len(rec.Line), maxStderrLine+len("…"))
				assert.True(t, strings.HasSuffix(rec.Line, "é…"), "cut at a character's start")
				assert.True(t, utf8.ValidString(rec.Line))
			}
		case "mcpsup: stdio server stderr lines not logged: more than the rate":
			unlogged += rec.Lines
		}
	}
	assert.Equal(t, stderrLogBurst, infos, "one record a line, the long one included")
	assert.Equal(t, 1, cuts, "line 1 is logged cut")
	assert.Equal(t, lines-stderrLogBurst, unlogged, "the lines past the burst, each counted once")
	assert.True(t, strings.HasSuffix(l.text(), "\nline 5000\n"), "the tail keeps the bytes")
}

// TestStderrLineAtTheBoundIsWhole: a line of maxStderrLine bytes is logged
// whole; one byte more is cut, the next line logged whole after it.
func TestStderrLineAtTheBoundIsWhole(t *testing.T) {
	var logs bytes.Buffer
	l := &stderrLog{server: "srv", log: slog.New(slog.NewTextHandler(&logs, nil)), keep: 64}
	atBound := strings.Repeat("a", maxStderrLine)
	over := strings.Repeat("b", maxStderrLine+1)
	l.copy(strings.NewReader(atBound + "\n" + over + "\n" + over + "\r\nnext\n"))
	out := logs.String()
	assert.Equal(t, 4, strings.Count(out, "mcpsup: stdio server stderr"), "%s", out)
	assert.Contains(t, out, "line="+atBound+"\n", "whole, no cut")
	assert.Equal(t, 1, strings.Count(out, "line="+over[:maxStderrLine]+"… line_bytes=4097 cut_at_bytes=4096"))
	assert.Equal(t, 1, strings.Count(out, "line="+over[:maxStderrLine]+"… line_bytes=4098 cut_at_bytes=4096"), "the \\r counted")
	assert.Contains(t, out, "line=next\n")
}

// BenchmarkStderrLongLine reads one 64 MiB stderr line: its B/op is what
// reading a long line holds (DESIGN.md section 7: 4 KiB and a 4 KiB copy of
// its start), whatever its length.
func BenchmarkStderrLongLine(b *testing.B) {
	const size = 64 << 20
	b.ReportAllocs()
	for b.Loop() {
		l := &stderrLog{server: "srv", log: slog.New(slog.DiscardHandler), keep: DefaultStderrTail}
		l.copy(io.MultiReader(io.LimitReader(repeatReader('z'), size), strings.NewReader("\nlast\n")))
		if l.text() != "last\n" {
			b.Fatal("not read to the end")
		}
	}
}

// repeatReader reads b without end.
type repeatReader byte

func (b repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

// TestLineIDReadsOnlyAResponsesStart: the id of a dropped line is read from
// its start alone: an integer "id" before "result" or "error" at the top
// level; a server's request ("method": its ids are its own, JSON-RPC 2.0
// section 4), a string id, an id past the scan or after the result, and
// "id" inside another member are none.
func TestLineIDReadsOnlyAResponsesStart(t *testing.T) {
	deep := strings.Repeat("[", 3000)
	cases := []struct {
		line string
		id   int64
		ok   bool
	}{
		{`{"jsonrpc":"2.0","id":4,"result":{"x":` + deep, 4, true},
		{`{"id":7,"jsonrpc":"2.0","error":{"code":1`, 7, true},
		{`{"jsonrpc":"2.0","x":{"id":9,"a":[1,{"id":2}]},"id":5,"result":` + deep, 5, true},
		{`{"jsonrpc":"2.0","id":3,"method":"ping","result":{}}`, 0, false},
		{`{"jsonrpc":"2.0","id":"4","result":{}}`, 0, false},
		{`{"jsonrpc":"2.0","result":{},"id":4}`, 0, false},
		{`{"jsonrpc":"2.0","x":"` + strings.Repeat("y", idScan) + `","id":4,"result":{}}`, 0, false},
		{`{"jsonrpc":"2.0","x":` + deep, 0, false},
		{`not json "id":4`, 0, false},
	}
	for _, c := range cases {
		id, ok := lineID([]byte(c.line))
		assert.Equal(t, c.ok, ok, "%.60s", c.line)
		assert.Equal(t, c.id, id, "%.60s", c.line)
	}
}

// TestStdoutFilterRefusesADroppedAnswerInPlace: a dropped line whose start
// names a request a caller waits for is followed, in what go-sdk reads, by
// the JSON-RPC error refusing that answer (code msgcheck.CodeRefused); one
// naming no such request is dropped alone.
func TestStdoutFilterRefusesADroppedAnswerInPlace(t *testing.T) {
	c := newMarkingConn(func(session.LineDropped, string) {}, nil, 1, msgcheck.Limits{}.WithDefaults())
	c.stdin = discard{}
	waiting := new(callMark)
	for n, mark := range map[int64]*callMark{4: waiting, 5: nil} {
		ctx := context.Background()
		if mark != nil {
			ctx = context.WithValue(ctx, markKey{}, mark)
		}
		id, _ := jsonrpc.MakeID(float64(n))
		require.NoError(t, c.Write(ctx, &jsonrpc.Request{ID: id, Method: "tools/call"}))
	}
	f := &stdoutFilter{max: 100, refuse: c.refuse}
	in := `{"jsonrpc":"2.0","id":4,"result":{"t":"` + strings.Repeat("x", 200) + `"}}` + "\n" +
		`{"jsonrpc":"2.0","id":5,"result":{"t":"` + strings.Repeat("x", 200) + `"}}` + "\n"
	go func() {
		_ = f.copyLines(strings.NewReader(in), c.pass)
		c.finish(io.EOF)
	}()
	var out bytes.Buffer
	for {
		msg, err := c.Read(context.Background())
		if err != nil {
			break
		}
		lines(&out)(msg)
	}
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":4,"error":{"code":-32090,"message":"mcpsup: answer refused: a line longer than 100 bytes"}}`, out.String())
	_, refused := waiting.done()
	assert.Equal(t, "a line longer than 100 bytes", refused)
	assert.Equal(t, int64(2), f.count.Load(), "both dropped")
}
