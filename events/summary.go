package events

import (
	"fmt"
	"slices"
	"strings"
	"syscall"
	"unicode"
	"unicode/utf8"

	"github.com/mcpsup/mcpsup/classify"
)

// Summary returns the notes of one event for people, by kind, e.g.
// "discovery-succeeded; gen 1" for a transition, `tools/call "echo":
// rate-limited (HTTP 429); delivery answered` for a failed call, "12 tools:
// +add -sub ~mul" for a catalog change. Detail and Dropped are appended to
// every kind. It leaves out what a timeline line shows in its own columns:
// the server, the kind and a transition's states (from -> to); views.LiveTimeline
// and views.WriteTimeline write the whole line. Its text is one line with every
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
	case KindStreamEventDropped, KindStdoutLineDropped:
		add("%d dropped in all", e.Count)
	case KindResponseDropped:
		add("%d already in flight; %d dropped in all", e.Bound, e.Count)
	case KindServerRequestRefused:
		add("%q refused: %d already being handled; %d refused in all", e.Op, e.Bound, e.Count)
	case KindStreamDeclined:
		p = append(p, strings.TrimSpace(fmt.Sprintf("HTTP %d %s", e.HTTPStatus, e.ContentType)))
	case KindProcessExited:
		s := fmt.Sprintf("exited with code %d", e.ExitCode)
		if e.Signal != 0 {
			s = fmt.Sprintf("ended by signal %d (%s)", e.Signal, syscall.Signal(e.Signal))
		}
		if e.Stop != "" {
			s += " after " + e.Stop
		}
		p = append(p, s)
		if e.Detail != "" {
			e.Detail = "stderr: " + e.Detail
		}
	case KindCallReissued:
		lost := "request " + e.RequestID
		if e.RequestID == "" {
			lost = "the request" // a transport that records no exchange
		}
		s := fmt.Sprintf("%s %q: %s lost with its response stream; ", e.Op, e.Name, lost)
		if e.ReissuedAs == "" {
			s += "the re-issue was not sent"
		} else {
			s += "re-issued as request " + e.ReissuedAs
		}
		p = append(p, s)
	case KindSessionVerified:
		s := "not answered: the session ended"
		if e.Alive {
			s = "answered: the session lives"
		}
		if v := verdictSummary(e.Verdict); v != "" {
			s += " (" + v + ")"
		}
		p = append(p, s)
	default:
		if v := verdictSummary(e.Verdict); v != "" {
			p = append(p, v)
		}
		// A change of another kind's list (the hub's merged catalog): Tools
		// counts the list Op names.
		if ch := (&ListChange{Added: e.Added, Removed: e.Removed, Changed: e.Changed, Omitted: e.Omitted}).signed(); ch != "" {
			p = append(p, fmt.Sprintf("%d %s: %s", e.Tools, e.Op, ch))
		}
	}
	if e.Detail != "" {
		p = append(p, e.Detail)
	}
	if e.Dropped != 0 {
		add("(%d events dropped before this one)", e.Dropped)
	}
	return Printable(strings.Join(slices.DeleteFunc(p, func(s string) bool { return s == "" }), "; "))
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

// Printable returns s with every control character (C0, DEL, C1), every
// bidirectional control (U+202E and its kin, which reorder what a terminal
// shows) and every byte that is not UTF-8 written as a Go escape (\x1b,
// \u202e): a server names its tools and words its errors as it likes, and
// a recording file is anyone's; nothing a terminal acts on is written raw.
func Printable(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		escaped := unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case escaped && r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case escaped:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// signed renders a list change as "+added -removed ~changed"; "" for nil.
func (c *ListChange) signed() string {
	if c == nil {
		return ""
	}
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
