package views

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/mcpsup/mcpsup/events"
)

// WriteMermaid writes a Mermaid stateDiagram-v2 of the path each server
// took: a composite state per server holding the states it visited and an
// arrow per distinct (from, to, trigger), labelled with the trigger and a
// count past one ("call-failed x3"); the first state is the start, a last
// "closed" the end. It returns the first write error.
func WriteMermaid(w io.Writer, evs []events.Event) error {
	var b strings.Builder
	b.WriteString("stateDiagram-v2\n")
	used := map[string]bool{}
	for _, group := range byServer(evs) {
		var states []string // in order of first visit
		var edges []edge    // in order of first use
		count, last := map[edge]int{}, ""
		for _, e := range group {
			if e.Kind != events.KindTransition {
				continue
			}
			for _, s := range []string{string(e.From), string(e.To)} {
				if !slices.Contains(states, s) {
					states = append(states, s)
				}
			}
			k := edge{string(e.From), string(e.To), string(e.Trigger)}
			if count[k] == 0 {
				edges = append(edges, k)
			}
			count[k]++
			last = string(e.To)
		}
		if len(edges) == 0 {
			continue
		}
		box := uniqueID(mermaidID(group[0].Server), used)
		id := func(state string) string { return box + "__" + mermaidID(state) }
		fmt.Fprintf(&b, "    state %s {\n", box)
		for _, s := range states {
			fmt.Fprintf(&b, "        state \"%s\" as %s\n", strings.ReplaceAll(mermaidLabel(s), `"`, "'"), id(s))
		}
		fmt.Fprintf(&b, "        [*] --> %s\n", id(states[0]))
		for _, k := range edges {
			label := mermaidLabel(k.trigger)
			if n := count[k]; n > 1 {
				label += fmt.Sprintf(" x%d", n)
			}
			fmt.Fprintf(&b, "        %s --> %s: %s\n", id(k.from), id(k.to), label)
		}
		if last == "closed" {
			fmt.Fprintf(&b, "        %s --> [*]\n", id(last))
		}
		b.WriteString("    }\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

type edge struct{ from, to, trigger string }

// mermaidID makes an identifier: letters, digits and "_"; never empty, never
// starting with a digit.
func mermaidID(s string) string {
	id := strings.Map(func(r rune) rune {
		if r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			return r
		}
		return '_'
	}, s)
	if id == "" || (id[0] >= '0' && id[0] <= '9') || mermaidKeywords[strings.ToLower(id)] {
		id = "s_" + id
	}
	return id
}

var mermaidKeywords = map[string]bool{"state": true, "note": true, "end": true, "direction": true,
	"class": true, "classdef": true, "style": true, "click": true, "as": true}

func uniqueID(id string, used map[string]bool) string {
	out := id
	for i := 2; used[out]; i++ {
		out = fmt.Sprintf("%s_%d", id, i)
	}
	used[out] = true
	return out
}

// mermaidLabel keeps a transition label from ending the statement or
// starting markup, and escapes control characters.
func mermaidLabel(s string) string {
	s = strings.Map(func(r rune) rune {
		switch r {
		case ':', ';', '#', '"', '{', '}', '\n', '\r':
			return ' '
		}
		return r
	}, s)
	if s = events.Printable(strings.TrimSpace(s)); s == "" {
		return "(none)"
	}
	return s
}
