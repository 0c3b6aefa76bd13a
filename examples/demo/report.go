package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/mcpsup/mcpsup/events"
)

// result is how one story ended: the table row and the expectations checked.
type result struct {
	story    string
	state    string
	tools    string
	sessions string
	extra    string
	stream   string
	checks   []check
	err      error // the story could not run to its end
}

// check is one expectation of DESIGN.md and whether it held.
type check struct {
	what string
	ok   bool
	got  string
}

// expect records an expectation. The text of what was found may quote
// go-sdk errors, which print raw session ids: it is redacted like events.
func (r *result) expect(ok bool, what string, got string, args ...any) {
	var redact events.Redactor
	r.checks = append(r.checks, check{what: what, ok: ok, got: redact.Text(fmt.Sprintf(got, args...))})
}

// met reports whether the story ran to its end and every expectation held.
func (r *result) met() bool {
	if r.err != nil {
		return false
	}
	for _, c := range r.checks {
		if !c.ok {
			return false
		}
	}
	return true
}

// writeTable prints one row per story.
func writeTable(w io.Writer, rs []result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "story\tstate at its end\ttools\tsessions opened\textra requests per failed call\tstandalone stream\tresult")
	for _, r := range rs {
		verdict := fmt.Sprintf("ok (%d checks)", len(r.checks))
		if !r.met() {
			verdict = "FAILED"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.story, dash(r.state), dash(r.tools), dash(r.sessions), dash(r.extra), dash(r.stream), verdict)
	}
	_ = tw.Flush()
	fmt.Fprintln(w, "extra requests: requests the gateway saw between a failed call and the next successful one,")
	fmt.Fprintln(w, "other than the tools/call requests themselves and standalone stream GETs.")
}

// writeChecks lists every expectation of every story.
func writeChecks(w io.Writer, rs []result) {
	for _, r := range rs {
		fmt.Fprintf(w, "\n%s\n", r.story)
		for _, c := range r.checks {
			mark := "ok  "
			if !c.ok {
				mark = "FAIL"
			}
			fmt.Fprintf(w, "  %s %s (got %s)\n", mark, c.what, c.got)
		}
	}
}

// writeFailures prints every expectation that did not hold and returns how
// many stories failed.
func writeFailures(w io.Writer, rs []result) int {
	failed := 0
	for _, r := range rs {
		if r.met() {
			continue
		}
		failed++
		if r.err != nil {
			var redact events.Redactor
			fmt.Fprintf(w, "FAIL %s: did not run to its end: %s\n", r.story, redact.Text(r.err.Error()))
		}
		for _, c := range r.checks {
			if !c.ok {
				fmt.Fprintf(w, "FAIL %s: expected %s; got %s\n", r.story, c.what, c.got)
			}
		}
	}
	if failed == 0 {
		fmt.Fprintf(w, "\nall %d stories ended as docs/DESIGN.md requires\n", len(rs))
		fmt.Fprintln(w, "(S3, cyclic error chains, is the classifier's: go test ./classify -run TestFailureStories/S3)")
	} else {
		fmt.Fprintf(w, "\n%d of %d stories did not end as docs/DESIGN.md requires\n", failed, len(rs))
	}
	return failed
}

func dash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "-"
	}
	return s
}

// lockedWriter serialises writes from the supervisors' goroutines and the
// stories' own lines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
