package stdio

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"golang.org/x/time/rate"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/msgcheck"
	"github.com/mcpsup/mcpsup/session"
)

// stdoutFilter reads a stdio server's stdout, decoding each line that is one
// JSON-RPC message, and drops every other line (log lines, batches): stdio
// messages "are delimited by newlines" and the server "MUST NOT write
// anything to its stdout that is not a valid MCP message" (MCP 2025-11-25
// basic/transports, stdio); one that does costs that line alone.
type stdoutFilter struct {
	max int // Command.MaxLineBytes
	// dropped is called for every dropped line, Count counting from 1,
	// with the text for the log: what was wrong, quoting the line's start.
	dropped func(d session.LineDropped, detail string)
	count   atomic.Int64
	line    []byte // the line being read (copyLines' own)
	// refuse (markingConn.refuse), when set, refuses the answer a dropped
	// line held to the caller waiting for it, if any.
	refuse func(id int64, problem string)
}

// keptLine is the most a line's buffer keeps between lines.
const keptLine = 64 << 10

const maxQuoted = 120 // bytes of a dropped line the log quotes

// copyLines hands pass the message of each line of r that is one, until r
// ends. It returns r's error (nil at EOF).
func (f *stdoutFilter) copyLines(r io.Reader, pass func(jsonrpc.Message)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	line := f.line[:0]
	defer func() { f.line = line }()
	tooLong := false
	var longID int64 // the id in a too-long line's start
	longIsAnswer := false
	for {
		chunk, err := br.ReadSlice('\n')
		n := len(line) + len(chunk)
		if err == nil {
			n-- // the "\n" is not the line's
		}
		switch {
		case tooLong:
		case n > f.max:
			tooLong = true
			start := line
			if len(start) < idScan {
				start = append(start, chunk[:min(len(chunk), idScan-len(start))]...)
			}
			longID, longIsAnswer = lineID(start)
			line = line[:0]
		default:
			line = append(line, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		ended := err == nil || err == io.EOF // a line, or the last one without its "\n"
		if tooLong {
			if ended {
				problem := fmt.Sprintf("a line longer than %d bytes", f.max)
				f.drop(session.LineDropped{Why: session.DropOversized, Bound: f.max}, problem)
				if longIsAnswer && f.refuse != nil {
					f.refuse(longID, problem)
				}
			}
		} else if text := bytes.TrimSpace(line); len(text) > 0 && ended {
			if msg, why, problem := decodeLine(text); why != "" {
				f.drop(session.LineDropped{Why: why}, problem+": "+quote(text))
				if id, ok := lineID(text); ok && f.refuse != nil {
					f.refuse(id, problem)
				}
			} else {
				pass(msg)
			}
		}
		line, tooLong, longIsAnswer = line[:0], false, false
		if cap(line) > keptLine {
			line = nil // a long line's buffer goes with it
		}
		if err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}

// drop counts a dropped line and reports d, its Count set, and detail.
func (f *stdoutFilter) drop(d session.LineDropped, detail string) {
	d.Count = int(f.count.Add(1))
	if f.dropped != nil {
		f.dropped(d, detail)
	}
}

// decodeLine decodes a trimmed line that is one JSON-RPC message, else says
// why it is not, and the problem in words.
func decodeLine(line []byte) (jsonrpc.Message, session.DropReason, string) {
	switch line[0] {
	case '{':
	case '[':
		return nil, session.DropBatch, "a JSON-RPC batch (not served from MCP 2025-06-18 on)"
	default:
		return nil, session.DropNotJSONRPC, "not JSON-RPC"
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		return nil, session.DropNotJSONRPC, "not one JSON-RPC message (" + msgcheck.CutText(err.Error(), 80) + ")"
	}
	if !json.Valid(line) { // DecodeMessage reads the first value alone
		return nil, session.DropNotJSONRPC, "a JSON-RPC message with more than one JSON value on the line"
	}
	return msg, "", ""
}

func quote(line []byte) string {
	s := strings.ToValidUTF8(string(line[:min(len(line), maxQuoted)]), "?")
	if len(line) > maxQuoted {
		s += "..."
	}
	return fmt.Sprintf("%q", s)
}

// stderrLog logs a stdio server's stderr line by line, rate-bounded, and
// keeps its last bytes. copy runs on one goroutine; text is safe to call
// alongside.
type stderrLog struct {
	server string
	log    *slog.Logger
	now    func() time.Time // nil: time.Now (a process lives in real time)
	redact *events.Redactor // masks the tail where it is made; nil: patterns only

	unlogged int // lines past the rate since the last one logged

	mu   sync.Mutex
	tail []byte // at most keep bytes, the last ones
	keep int
	cut  bool // bytes were dropped before tail
}

// maxStderrLine is the most of a stderr line one log record holds, in
// bytes; it is also the read buffer's size, so a line of any length costs
// at most this much memory.
const maxStderrLine = 4 << 10

// The rate of stderr's log records, in lines (a long line is one); the
// lines past it are counted in one.
const (
	stderrLogBurst = 100 // lines logged at once
	stderrLogRate  = 20  // lines a second after the burst
)

// copy logs and keeps what r carries until it ends. Each line is one log
// record, or one count past the rate, when its newline (or r's end) comes,
// however long it is: a line longer than maxStderrLine bytes (its "\n" not
// counted) is logged as its first maxStderrLine bytes (back to a UTF-8
// character's start) and "…", with line_bytes and cut_at_bytes; the rest of
// it is kept in the tail, not logged. Memory stays bounded whatever the
// line: the read buffer and a long line's start, maxStderrLine bytes each.
func (l *stderrLog) copy(r io.Reader) {
	now := l.now
	if now == nil {
		now = time.Now
	}
	limit := rate.NewLimiter(stderrLogRate, stderrLogBurst)
	br := bufio.NewReaderSize(r, maxStderrLine)
	var start []byte // a long line's first maxStderrLine bytes, copied: chunk is the reader's buffer
	read := 0        // bytes of the line read before chunk
	for {
		chunk, err := br.ReadSlice('\n')
		l.keepBytes(chunk)
		full := errors.Is(err, bufio.ErrBufferFull)
		if read == 0 && full {
			start = append(start[:0], chunk...)
		}
		if full {
			read += len(chunk)
			continue
		}
		size := read + len(chunk)
		if err == nil {
			size-- // the "\n"
		}
		line := chunk
		if read > 0 {
			line = start
		}
		l.logLine(line, size, limit, now)
		read = 0
		if err != nil {
			l.logUnlogged()
			return
		}
	}
}

// logLine logs a line of size bytes, "\n" not counted, from its start
// (at least its first maxStderrLine bytes), or counts it when past the
// rate; an empty line is neither.
func (l *stderrLog) logLine(start []byte, size int, limit *rate.Limiter, now func() time.Time) {
	cut := size > maxStderrLine
	if cut {
		start = start[:maxStderrLine]
		for i := len(start) - 1; i >= len(start)-utf8.UTFMax; i-- {
			if utf8.RuneStart(start[i]) {
				if !utf8.FullRune(start[i:]) {
					start = start[:i] // a character the cut split
				}
				break
			}
		}
	}
	text := strings.TrimRight(string(start), "\r\n")
	switch {
	case text == "" && !cut:
	case !limit.AllowN(now(), 1):
		l.unlogged++
	case cut:
		l.logUnlogged()
		l.log.Info("mcpsup: stdio server stderr", "server", l.server, "line", strings.ToValidUTF8(text, "?")+"…",
			"line_bytes", size, "cut_at_bytes", maxStderrLine)
	default:
		l.logUnlogged()
		l.log.Info("mcpsup: stdio server stderr", "server", l.server, "line", strings.ToValidUTF8(text, "?"))
	}
}

func (l *stderrLog) logUnlogged() {
	if l.unlogged == 0 {
		return
	}
	l.log.Warn("mcpsup: stdio server stderr lines not logged: more than the rate", "server", l.server,
		"lines", l.unlogged, "burst", stderrLogBurst, "per_second", stderrLogRate)
	l.unlogged = 0
}

func (l *stderrLog) keepBytes(b []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.tail = append(l.tail, b...)
	if over := len(l.tail) - l.keep; over > 0 {
		l.tail = append(l.tail[:0], l.tail[over:]...)
		l.cut = true
	}
}

// text returns the bytes kept, masked, valid UTF-8: from the first whole
// line when the start was cut, else after "…" (so the redactor masks the end
// of a secret the cut began inside).
func (l *stderrLog) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.tail
	mid := ""
	if l.cut {
		if i := bytes.IndexByte(b, '\n'); i >= 0 && i+1 < len(b) {
			b = b[i+1:]
		} else {
			mid = "…" // in the bound: as many bytes of the start are left off
			b = b[min(len(mid), len(b)):]
		}
		for len(b) > 0 && !utf8.RuneStart(b[0]) {
			b = b[1:]
		}
	}
	return l.redact.Text(mid + strings.ToValidUTF8(string(b), "?"))
}
