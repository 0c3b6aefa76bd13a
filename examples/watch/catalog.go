package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/supervisor"
)

// reportCatalogs lists the catalog each time the supervisor becomes ready,
// until ctx ends.
func reportCatalogs(ctx context.Context, sup *supervisor.Supervisor, out io.Writer) {
	for {
		if err := sup.WaitForState(ctx, supervisor.Ready); err != nil {
			return
		}
		writeCatalog(out, sup.Catalog())
		if !sup.WaitForStateChange(ctx, supervisor.Ready) {
			return
		}
	}
}

// writeCatalog prints the catalog, one item a line, in the server's order.
func writeCatalog(w io.Writer, c supervisor.Catalog) {
	var b strings.Builder
	fmt.Fprintf(&b, "ready: catalog of generation %d: %d tools, %d resources, %d prompts, %d resource templates\n",
		c.Generation, len(c.Tools), len(c.Resources), len(c.Prompts), len(c.ResourceTemplates))
	for _, t := range c.Tools {
		fmt.Fprintf(&b, "  tool      %-24s %s\n", t.Name, firstLine(t.Description))
	}
	for _, r := range c.Resources {
		fmt.Fprintf(&b, "  resource  %-24s %s\n", r.URI, firstLine(r.Description))
	}
	for _, p := range c.Prompts {
		fmt.Fprintf(&b, "  prompt    %-24s %s\n", p.Name, firstLine(p.Description))
	}
	for _, t := range c.ResourceTemplates {
		fmt.Fprintf(&b, "  template  %-24s %s\n", t.URITemplate, firstLine(t.Description))
	}
	_, _ = io.WriteString(w, b.String())
}

// firstLine is the first line of a description, cut to 72 bytes.
func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 72 {
		s = strings.ToValidUTF8(s[:72], "") + "..."
	}
	return s
}

// sessionLabel names a session in output: its short hash, never the id.
func sessionLabel(id string) string {
	if id == "" {
		return "(sessionless)"
	}
	return events.HashSessionID(id)
}
