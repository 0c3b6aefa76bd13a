package wire

import (
	"fmt"
	"time"
)

// HostilityRule is the rule that marks a server GET-hostile (DESIGN.md
// failure story S5): the server, or a gateway in front of it, answers the
// standalone stream's GETs and ends them at once while POSTs work. It fires
// on Threshold consecutive standalone stream attempts that got an HTTP
// answer and failed at once (see [StreamAttempt.FailedAtOnce]: no message,
// ended within Span, not closed by the client, no sign of a gone session)
// while the last POST of the same session was answered 2xx after the last
// attempt that got no answer. An attempt that delivered a message or lived
// Span or longer resets the count, so a healthy server whose idle stream a
// proxy cuts now and then is never hostile. Events that carry no message
// (a SEP-1699 priming event: an id, empty data, a retry field; an event
// go-sdk skips) do not reset it: a stream that only primes and ends at once
// told the client nothing, and counts as failing at once. An attempt that got no HTTP
// answer at all ([EndNoAnswer]: refused, reset, DNS) is evidence that the
// server is unreachable, not hostile: it does not count, and a 2xx POST must
// come after it before the rule can fire, so an outage never marks a server
// GET-hostile. The zero value selects the defaults: Threshold 3, Span 2s
// (the same Span as [StreamConfig]).
type HostilityRule struct {
	Threshold int
	Span      time.Duration
}

// HostilityTracker applies a [HostilityRule] to one session's records. It
// is a pure value: no clock, no I/O, not safe for concurrent use. Feed it
// every [Exchange] and [StreamAttempt] of the session; start a new tracker
// for a new session.
type HostilityTracker struct {
	rule    HostilityRule
	streak  int
	postOK  bool
	hostile bool
	reason  string
}

// NewHostilityTracker returns a tracker applying r.
func NewHostilityTracker(r HostilityRule) *HostilityTracker {
	if r.Threshold <= 0 {
		r.Threshold = 3
	}
	if r.Span <= 0 {
		r.Span = 2 * time.Second
	}
	return &HostilityTracker{rule: r}
}

// ObserveExchange notes the outcome of a POST; other verbs are ignored. A
// POST answered 2xx (and readable) counts as succeeding; no answer, a non-2xx
// or a malformed answer does not.
func (h *HostilityTracker) ObserveExchange(x Exchange) {
	if x.Verb != "POST" || x.Local {
		return
	}
	h.postOK = x.Status >= 200 && x.Status < 300 && !x.Malformed
}

// ObserveAttempt notes a standalone stream attempt and reports whether the
// server became hostile with it (true once, on the attempt that crossed the
// threshold).
func (h *HostilityTracker) ObserveAttempt(a StreamAttempt) bool {
	switch {
	case a.End == EndClosed:
		return false
	case a.End == EndNoAnswer:
		// Unreachable, not hostile: wait for a POST to succeed again.
		h.postOK = false
		return false
	case !a.FailedAtOnce(h.rule.Span):
		h.streak = 0
		return false
	}
	h.streak++
	if h.hostile || h.streak < h.rule.Threshold || !h.postOK {
		return false
	}
	h.hostile = true
	h.reason = fmt.Sprintf("%d consecutive standalone stream attempts failed within %s with no message while POSTs succeeded (last: %s, HTTP %d)",
		h.streak, h.rule.Span, a.End, a.Status)
	return true
}

// Hostile reports whether the rule fired, and why.
func (h *HostilityTracker) Hostile() (bool, string) { return h.hostile, h.reason }

// Streak returns the current count of consecutive answered attempts that
// failed at once.
func (h *HostilityTracker) Streak() int { return h.streak }
