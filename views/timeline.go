package views

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/mcpsup/mcpsup/events"
)

// Timeline reads a JSON-lines event stream from r and writes its per-server
// timeline to w, as [WriteTimeline] does. On a bad line it writes nothing and
// returns the [*events.LineError].
func Timeline(w io.Writer, r io.Reader) error {
	evs, err := events.ReadJSONLines(r)
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
// kind (see [events.Summary]). It returns the first write error.
func WriteTimeline(w io.Writer, evs []events.Event) error {
	base := firstTime(evs)
	order, byServer := groupByServer(evs)
	ew := &errWriter{w: w}
	for i, srv := range order {
		if i > 0 {
			ew.printf("\n")
		}
		group := byServer[srv]
		state, gen := events.State(""), uint64(0)
		for _, e := range group {
			if e.Kind == events.KindTransition {
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
			ew.printf(", last state %s", events.Printable(string(state)))
		}
		ew.printf(", generation %d\n", gen)
		for _, e := range group {
			ew.printf("%s\n", timelineLine(e, base))
		}
	}
	return ew.err
}

// LiveTimeline returns a [events.Sink] that writes each event to w as one timeline
// line as it arrives: the line [WriteTimeline] writes, prefixed by the
// server's name. Offsets count from the first timed event it sees. Write
// errors are ignored (it is meant for a terminal). It writes synchronously
// from Emit: if w can block, feed it from a [events.Subscription] instead. It is
// safe for concurrent use; it does not redact: wrap it with [events.Redacting].
func LiveTimeline(w io.Writer) events.Sink { return &live{w: w} }

type live struct {
	mu   sync.Mutex
	w    io.Writer
	base time.Time
}

func (l *live) Emit(e events.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.base.IsZero() && !e.Time.IsZero() {
		l.base = e.Time
	}
	_, _ = fmt.Fprintf(l.w, "%-20s %s\n", displayServer(e.Server), strings.TrimLeft(timelineLine(e, l.base), " "))
}

func timelineLine(e events.Event, base time.Time) string {
	off := "-"
	if !e.Time.IsZero() && !base.IsZero() {
		off = fmt.Sprintf("%+.3fs", e.Time.Sub(base).Seconds())
	}
	seq := ""
	if e.Seq != 0 {
		seq = fmt.Sprintf("#%d", e.Seq)
	}
	head := string(e.Kind)
	if e.Kind == events.KindTransition {
		head = string(e.From) + " -> " + string(e.To)
		if e.From == e.To {
			head = string(e.From) + " (internal)"
		}
	}
	return strings.TrimRight(fmt.Sprintf("  %9s  %-4s %-32s %s", off, seq, events.Printable(head), events.Summary(e)), " ")
}

func firstTime(evs []events.Event) time.Time {
	for _, e := range evs {
		if !e.Time.IsZero() {
			return e.Time
		}
	}
	return time.Time{}
}

func groupByServer(evs []events.Event) ([]string, map[string][]events.Event) {
	var order []string
	by := map[string][]events.Event{}
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
	return events.Printable(s)
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
