package events

import (
	"cmp"
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
// +add -sub ~mul" for a catalog change; Detail and Dropped close every kind.
// It leaves out the server, the kind and a transition's states, which a
// timeline shows in columns (package views). The text is one line, made
// [Printable].
func Summary(e Event) string {
	v := verdictSummary(e.Verdict)
	var p []string
	add := func(format string, args ...any) { p = append(p, fmt.Sprintf(format, args...)) }
	gen := func() {
		if e.Generation != 0 {
			add("gen %d", e.Generation)
		}
	}
	switch e.Kind {
	case KindTransition:
		p = append(p, suffix(suffix(string(e.Trigger), " [", e.Guard, "]"), ": ", v, ""))
		gen()
		if e.Attempt != 0 {
			add("attempt %d", e.Attempt)
		}
		if e.Reason != "" {
			add("reason %s", e.Reason)
		}
	case KindProbeReport:
		p = append(p, listsSummary(e.Lists))
	case KindCatalogChanged:
		tools := &ListChange{Added: e.Added, Removed: e.Removed, Changed: e.Changed, Omitted: e.Omitted}
		p = append(p, suffix(fmt.Sprintf("%d tools", e.Tools), ": ", tools.signed(), ""))
		names := [...]string{"prompts", "resources", "resource templates"}
		for i, c := range []*ListChange{e.Prompts, e.Resources, e.ResourceTemplates} {
			if !c.Empty() {
				p = append(p, names[i]+": "+c.signed())
			}
		}
	case KindCallFailed:
		s := e.Op
		if e.Name != "" {
			s += fmt.Sprintf(" %q", e.Name)
		}
		p = append(p, strings.TrimSpace(suffix(s, ": ", v, "")))
		if e.Delivery != "" {
			add("delivery %s", e.Delivery)
		}
		gen()
	case KindRetryScheduled:
		p = append(p, suffix(fmt.Sprintf("attempt %d in %s", e.Attempt, e.Delay), " after ", v, ""))
	case KindRateLimitWindow:
		p = append(p, suffix(fmt.Sprintf("calls fail at once for %s", e.Delay), " after ", v, ""))
	case KindSessionOpened, KindSessionEnded:
		p = append(p, cmp.Or(e.SessionID, e.Connection)) // sessionless: our own id tells it apart
		gen()
	case KindStreamEventDropped, KindStdoutLineDropped:
		add("%d dropped in all", e.Count)
		p = append(p, e.Why)
		if e.Bound != 0 {
			add("longer than %d bytes", e.Bound)
		}
		if e.Bytes != 0 {
			add("%d bytes", e.Bytes)
		}
		if e.RequestID != "" {
			add("to id %s, a request never sent", e.RequestID)
		}
	case KindStreamDisabled, KindStreamEnabled:
		p = append(p, e.Why)
	case KindResponseDropped:
		add("%d already in flight; %d dropped in all", e.Bound, e.Count)
	case KindServerRequestRefused:
		add("%q refused: %d already being handled; %d refused in all", e.Op, e.Bound, e.Count)
	case KindEraChanged:
		p = append(p, fmt.Sprintf("%s -> %s: %s", cmp.Or(e.EraFrom, "discover"), cmp.Or(e.EraTo, "discover"), e.EraWhy))
		if e.Op != "" {
			add("%s answered HTTP %d, JSON-RPC %d", e.Op, e.HTTPStatus, e.RPCCode)
		}
		gen()
	case KindStreamDeclined:
		p = append(p, strings.TrimSpace(fmt.Sprintf("HTTP %d %s", e.HTTPStatus, e.ContentType)))
	case KindProcessExited:
		s := fmt.Sprintf("exited with code %d", e.ExitCode)
		if e.Signal != 0 {
			s = fmt.Sprintf("ended by signal %d (%s)", e.Signal, syscall.Signal(e.Signal))
		}
		p = append(p, suffix(s, " after ", e.Stop, ""))
		e.Detail = suffix("", "stderr: ", e.Detail, "")
	case KindCallReissued:
		lost := "request " + e.RequestID
		if e.RequestID == "" {
			lost = "the request" // a transport that records no exchange
		}
		reissue := "the re-issue was not sent"
		if e.ReissuedAs != "" {
			reissue = "re-issued as request " + e.ReissuedAs
		}
		add("%s %q: %s lost with its response stream; %s", e.Op, e.Name, lost, reissue)
	case KindSessionVerified:
		s := "not answered: the session ended"
		if e.Alive {
			s = "answered: the session lives"
		}
		p = append(p, suffix(s, " (", v, ")"))
	default: // another package's kinds (the hub's): their typed facts
		p = append(p, v, string(e.Reason))
		if e.Token != 0 {
			add("token %d", e.Token)
		}
		p = append(p, e.SessionID)
		if e.Name != "" {
			add("%q", e.Name)
		}
		ch := (&ListChange{Added: e.Added, Removed: e.Removed, Changed: e.Changed, Omitted: e.Omitted}).signed()
		switch {
		case e.Bound != 0:
			add("%d %s, over %d", e.Count, e.Op, e.Bound)
		case ch != "" && e.Op != "": // a change of the list Op names, Tools long
			add("%d %s: %s", e.Tools, e.Op, ch)
		default:
			p = append(p, e.Op, ch)
		}
	}
	p = append(p, e.Detail)
	if e.Dropped != 0 {
		add("(%d events dropped before this one)", e.Dropped)
	}
	return Printable(strings.Join(slices.DeleteFunc(p, func(s string) bool { return s == "" }), "; "))
}

// suffix returns s+before+v+after, or s when v is "".
func suffix(s, before, v, after string) string {
	if v == "" {
		return s
	}
	return s + before + v + after
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
		s += fmt.Sprintf(" %q", cut(v.RPC.Message, 80, "...", false))
	case v.HTTPStatus == 0 && v.Detail != "":
		// A Go error's text ends with its cause ("...: connection
		// refused"): keep the end.
		s += fmt.Sprintf(" %q", cut(v.Detail, 80, "...", true))
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
		parts = append(parts, suffix(suffix(s, " (", verdictSummary(l.Verdict), ")"), ": ", l.Warning, ""))
	}
	return strings.Join(parts, ", ")
}

// Printable returns s with every control character (C0, DEL, C1),
// bidirectional control (U+202E ...) and byte that is not UTF-8 written as a
// Go escape (\x1b, \u202e): nothing a terminal acts on is written raw.
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
	for i, names := range [][]string{c.Added, c.Removed, c.Changed} {
		for _, n := range names {
			ch = append(ch, "+-~"[i:i+1]+n)
		}
	}
	if c.Omitted > 0 {
		ch = append(ch, fmt.Sprintf("…%d more", c.Omitted))
	}
	return strings.Join(ch, " ")
}
