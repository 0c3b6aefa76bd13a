package views

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpsup/mcpsup/events"
)

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
	var b strings.Builder
	for i, group := range byServer(evs) {
		if i > 0 {
			b.WriteString("\n")
		}
		state, gen := events.State(""), uint64(0)
		for _, e := range group {
			if e.Kind == events.KindTransition {
				state = e.To
			}
			gen = max(gen, e.Generation)
		}
		fmt.Fprintf(&b, "== %s: %d event", displayServer(group[0].Server), len(group))
		if len(group) > 1 {
			b.WriteString("s")
		}
		if state != "" {
			b.WriteString(", last state " + events.Printable(string(state)))
		}
		fmt.Fprintf(&b, ", generation %d\n", gen)
		for _, e := range group {
			b.WriteString(timelineLine(e, base) + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// LiveTimeline returns a [events.Sink] that writes each event to w as the
// line [WriteTimeline] writes, prefixed by the server's name, from Emit (if
// w can block, feed it from a [events.Subscription]). Offsets count from the
// first timed event it sees; write errors are ignored. It is safe for
// concurrent use; it does not redact.
func LiveTimeline(w io.Writer) events.Sink {
	var mu sync.Mutex
	var base time.Time
	return events.SinkFunc(func(e events.Event) {
		mu.Lock()
		defer mu.Unlock()
		if base.IsZero() {
			base = e.Time
		}
		_, _ = fmt.Fprintf(w, "%-20s %s\n", displayServer(e.Server), strings.TrimLeft(timelineLine(e, base), " "))
	})
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
	if i := slices.IndexFunc(evs, func(e events.Event) bool { return !e.Time.IsZero() }); i >= 0 {
		return evs[i].Time
	}
	return time.Time{}
}

// byServer groups evs by server, servers in order of first appearance.
func byServer(evs []events.Event) [][]events.Event {
	var groups [][]events.Event
	index := map[string]int{}
	for _, e := range evs {
		i, ok := index[e.Server]
		if !ok {
			i = len(groups)
			index[e.Server] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], e)
	}
	return groups
}

func displayServer(s string) string {
	if s == "" {
		return "(unnamed)"
	}
	return events.Printable(s)
}
