package events

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mcpsup/mcpsup/classify"
)

// MaxLineBytes bounds one line of a JSON-lines event stream read by
// [ReadJSONLines].
const MaxLineBytes = 1 << 20

// LineError is the error of [ReadJSONLines] for a line it cannot read. It
// wraps the cause ([ErrVersion], a JSON syntax error, bufio.ErrTooLong).
type LineError struct {
	Line int // 1-based
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("events: line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// ReadJSONLines reads events written one per line by [JSONLines], in order.
// Blank lines are skipped. It stops at the first bad line with a
// [*LineError], returning the events read before it; a line longer than
// [MaxLineBytes] (its line break not counted) is a bad line.
func ReadJSONLines(r io.Reader) ([]Event, error) {
	sc := bufio.NewScanner(r)
	// bufio.Scanner refuses a token that fills its buffer before the line
	// break shows: one byte more, so a line of MaxLineBytes is read.
	sc.Buffer(make([]byte, 0, 64<<10), MaxLineBytes+1)
	var out []Event
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var e Event
		if err := e.UnmarshalJSON(b); err != nil {
			return out, &LineError{Line: line, Err: err}
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return out, &LineError{Line: line + 1, Err: err}
	}
	return out, nil
}

// Timeline reads a JSON-lines event stream from r and writes its per-server
// timeline to w, as [WriteTimeline] does. On a bad line it writes nothing and
// returns the [*LineError].
func Timeline(w io.Writer, r io.Reader) error {
	evs, err := ReadJSONLines(r)
	if err != nil {
		return err
	}
	return WriteTimeline(w, evs)
}

// WriteTimeline writes a readable timeline of evs to w, one block per server
// (servers in order of first appearance, events in the order given). Each
// block starts with a header naming the server, its event count, its last
// state and generation; each event is one line:
//
//	+1.250s  #4  ready (internal)            catalog-listed; gen 1
//	+1.250s      call-failed                 tools/call "echo": rate-limited (HTTP 429, ...); delivery answered; gen 1
//
// The offset is the time since the first timed event of evs ("-" for an event
// without a time); "#n" is Seq when set; then "from -> to" (or "state
// (internal)") for a transition, the kind for any other event; then notes per
// kind (see [Summary]). It returns the first write error.
func WriteTimeline(w io.Writer, evs []Event) error {
	base := firstTime(evs)
	order, byServer := groupByServer(evs)
	ew := &errWriter{w: w}
	for i, srv := range order {
		if i > 0 {
			ew.printf("\n")
		}
		group := byServer[srv]
		state, gen := State(""), uint64(0)
		for _, e := range group {
			if e.Kind == KindTransition {
				state = e.To
			}
			gen = max(gen, e.Generation)
		}
		noun := "events"
		if len(group) == 1 {
			noun = "event"
		}
		ew.printf("== %s: %d %s", displayServer(srv), len(group), noun)
		if state != "" {
			ew.printf(", last state %s", printable(string(state)))
		}
		ew.printf(", generation %d\n", gen)
		for _, e := range group {
			ew.printf("%s\n", timelineLine(e, base))
		}
	}
	return ew.err
}

// LiveTimeline returns a [Sink] that writes each event to w as one timeline
// line as it arrives: the line [WriteTimeline] writes, prefixed by the
// server's name. Offsets count from the first timed event it sees. Write
// errors are ignored (it is meant for a terminal). It writes synchronously
// from Emit: if w can block, feed it from a [Subscription] instead. It is
// safe for concurrent use; it does not redact: wrap it with [Redacting].
func LiveTimeline(w io.Writer) Sink { return &live{w: w} }

type live struct {
	mu   sync.Mutex
	w    io.Writer
	base time.Time
}

func (l *live) Emit(e Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.base.IsZero() && !e.Time.IsZero() {
		l.base = e.Time
	}
	_, _ = fmt.Fprintf(l.w, "%-20s %s\n", displayServer(e.Server), strings.TrimLeft(timelineLine(e, l.base), " "))
}

func timelineLine(e Event, base time.Time) string {
	off := "-"
	if !e.Time.IsZero() && !base.IsZero() {
		off = fmt.Sprintf("%+.3fs", e.Time.Sub(base).Seconds())
	}
	seq := ""
	if e.Seq != 0 {
		seq = fmt.Sprintf("#%d", e.Seq)
	}
	head := string(e.Kind)
	if e.Kind == KindTransition {
		head = string(e.From) + " -> " + string(e.To)
		if e.From == e.To {
			head = string(e.From) + " (internal)"
		}
	}
	return strings.TrimRight(fmt.Sprintf("  %9s  %-4s %-32s %s", off, seq, printable(head), Summary(e)), " ")
}

// Summary returns the notes of one event for people, by kind, e.g.
// "discovery-succeeded; gen 1" for a transition, `tools/call "echo":
// rate-limited (HTTP 429); delivery answered` for a failed call, "12 tools:
// +add -sub ~mul" for a catalog change. Detail and Dropped are appended to
// every kind. It leaves out what a timeline line shows in its own columns:
// the server, the kind and a transition's states (from -> to); LiveTimeline
// and WriteTimeline write the whole line. Its text is one line with every
// control character, bidirectional control and invalid byte written as a Go
// escape: nothing a terminal acts on.
func Summary(e Event) string {
	var p []string
	add := func(format string, args ...any) { p = append(p, fmt.Sprintf(format, args...)) }
	switch e.Kind {
	case KindTransition:
		s := string(e.Trigger)
		if e.Guard != "" {
			s += " [" + e.Guard + "]"
		}
		if v := verdictSummary(e.Verdict); v != "" {
			s += ": " + v
		}
		p = append(p, s)
		if e.Generation != 0 {
			add("gen %d", e.Generation)
		}
		if e.Attempt != 0 {
			add("attempt %d", e.Attempt)
		}
		if e.Reason != "" {
			add("reason %s", e.Reason)
		}
	case KindProbeReport:
		p = append(p, listsSummary(e.Lists))
	case KindCatalogChanged:
		s := fmt.Sprintf("%d tools", e.Tools)
		tools := &ListChange{Added: e.Added, Removed: e.Removed, Changed: e.Changed, Omitted: e.Omitted}
		if ch := tools.signed(); ch != "" {
			s += ": " + ch
		}
		p = append(p, s)
		for _, l := range []struct {
			name string
			c    *ListChange
		}{{"prompts", e.Prompts}, {"resources", e.Resources}, {"resource templates", e.ResourceTemplates}} {
			if !l.c.Empty() {
				p = append(p, l.name+": "+l.c.signed())
			}
		}
	case KindCallFailed:
		s := e.Op
		if e.Name != "" {
			s += fmt.Sprintf(" %q", e.Name)
		}
		if v := verdictSummary(e.Verdict); v != "" {
			s += ": " + v
		}
		p = append(p, strings.TrimSpace(s))
		if e.Delivery != "" {
			add("delivery %s", e.Delivery)
		}
		if e.Generation != 0 {
			add("gen %d", e.Generation)
		}
	case KindRetryScheduled:
		s := fmt.Sprintf("attempt %d in %s", e.Attempt, e.Delay)
		if v := verdictSummary(e.Verdict); v != "" {
			s += " after " + v
		}
		p = append(p, s)
	case KindRateLimitWindow:
		s := fmt.Sprintf("calls fail at once for %s", e.Delay)
		if v := verdictSummary(e.Verdict); v != "" {
			s += " after " + v
		}
		p = append(p, s)
	case KindSessionOpened, KindSessionEnded:
		if e.SessionID != "" {
			p = append(p, e.SessionID)
		} else if e.Connection != "" {
			p = append(p, e.Connection) // sessionless: our own id tells it apart
		}
		if e.Generation != 0 {
			add("gen %d", e.Generation)
		}
	default:
		if v := verdictSummary(e.Verdict); v != "" {
			p = append(p, v)
		}
	}
	if e.Detail != "" {
		p = append(p, e.Detail)
	}
	if e.Dropped != 0 {
		add("(%d events dropped before this one)", e.Dropped)
	}
	return printable(strings.Join(nonEmpty(p), "; "))
}

// verdictSummary is v.String() and the JSON-RPC message (or, without an
// HTTP status, the error's text), "" for the zero verdict.
func verdictSummary(v classify.Verdict) string {
	if v == (classify.Verdict{}) {
		return ""
	}
	s := v.String()
	switch {
	case v.RPC.Present && v.RPC.Message != "":
		s += fmt.Sprintf(" %q", cut(v.RPC.Message, 80))
	case v.HTTPStatus == 0 && v.Detail != "":
		// The text is all there is. A Go error's text ends with its cause
		// ("dial tcp ...: connection refused", "exited with code 1") after
		// the method and class the verdict already names: keep the end.
		s += fmt.Sprintf(" %q", cutHead(v.Detail, 80))
	}
	return s
}

// listsSummary renders discovery outcomes, e.g. "tools present 3, prompts
// absent (method-not-found (JSON-RPC -32601))".
func listsSummary(ls []ListOutcome) string {
	var parts []string
	for _, l := range ls {
		s := l.List + " " + l.Status
		if l.Status == ListPresent || l.Status == ListDegraded || l.Items != 0 {
			s += fmt.Sprintf(" %d", l.Items)
		}
		if v := verdictSummary(l.Verdict); v != "" {
			s += " (" + v + ")"
		}
		if l.Warning != "" {
			s += ": " + l.Warning
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

func nonEmpty(in []string) []string {
	out := in[:0]
	for _, s := range in {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}

// cutHead keeps the last n bytes of s (at a rune start), after "...".
func cutHead(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return "..." + s[i:]
}

func firstTime(evs []Event) time.Time {
	for _, e := range evs {
		if !e.Time.IsZero() {
			return e.Time
		}
	}
	return time.Time{}
}

func groupByServer(evs []Event) ([]string, map[string][]Event) {
	var order []string
	by := map[string][]Event{}
	for _, e := range evs {
		if _, ok := by[e.Server]; !ok {
			order = append(order, e.Server)
		}
		by[e.Server] = append(by[e.Server], e)
	}
	return order, by
}

func displayServer(s string) string {
	if s == "" {
		return "(unnamed)"
	}
	return printable(s)
}

// printable returns s with every control character (C0, DEL, C1), every
// bidirectional control (U+202E and its kin, which reorder what a terminal
// shows) and every byte that is not UTF-8 written as a Go escape (\x1b,
// \u202e). A server names its tools and words its errors as it likes, and a
// recording file is anyone's: written raw, a line feed in a tool name forged
// a line of the timeline, and an escape sequence reached the terminal.
func printable(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case escaped(r) && r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case escaped(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// needsEscape reports whether [printable] changes s.
func needsEscape(s string) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n <= 1) || escaped(r) {
			return true
		}
		i += n
	}
	return false
}

// escaped reports whether [printable] writes r as an escape.
func escaped(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)
}

// errWriter keeps the first write error and skips writes after it.
type errWriter struct {
	w   io.Writer
	err error
}

func (ew *errWriter) printf(format string, args ...any) {
	if ew.err == nil {
		_, ew.err = fmt.Fprintf(ew.w, format, args...)
	}
}

// signed renders a list change as "+added -removed ~changed".
func (c *ListChange) signed() string {
	var ch []string
	for _, l := range []struct {
		sign  string
		names []string
	}{{"+", c.Added}, {"-", c.Removed}, {"~", c.Changed}} {
		for _, n := range l.names {
			ch = append(ch, l.sign+n)
		}
	}
	if c.Omitted > 0 {
		ch = append(ch, fmt.Sprintf("…%d more", c.Omitted))
	}
	return strings.Join(ch, " ")
}
