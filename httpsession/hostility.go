package httpsession

import (
	"fmt"
	"time"
)

// HostilityRule is the rule that marks a server GET-hostile (DESIGN.md
// failure story S5): the server, or a gateway in front of it, answers the
// standalone stream's GETs (on a 2026-07-28 session: its
// subscriptions/listen POSTs, listen.go) and ends them at once while other
// POSTs work. It fires
// on Threshold consecutive standalone stream attempts that got an HTTP
// answer and failed at once (see [StreamAttempt.FailedAtOnce]: no message,
// ended within Span, not closed by the client, no sign of a gone session)
// while POSTs of the same session succeed: the last POST was answered 2xx,
// its answer came once the streak's first attempt had begun (by the records'
// Start and Duration, on the Transport's clock: a POST answered while that
// GET was under way counts), and it was recorded after the last outage
// attempt. It fires on the attempt that completes the streak, or, when no
// such POST had come by then, on the first one after it
// ([HostilityTracker.ObserveExchange] reports it). Span is the keeper's
// [StreamConfig.Span]: one span decides both the re-dial's backoff and the
// rule.
//
// An attempt that delivered a message, was an acknowledged listen
// ([StreamAttempt.Acknowledged]) or lived Span or longer resets the count,
// so a healthy server whose idle stream a proxy cuts now and then is never
// hostile. Events that carry no message (a SEP-1699 priming event: an
// id, empty data, a retry field; an event go-sdk skips) do not reset it: a
// stream that only primes and ends at once told the client nothing, and
// counts as failing at once.
//
// An outage attempt ([StreamAttempt.Outage]: no HTTP answer, or 408, 429 or
// a 5xx other than 501, as a gateway answers while the server behind it
// restarts) is evidence that the server is unavailable, not hostile: it does
// not count, and a 2xx POST must come after it before the rule can fire, so
// an outage, even one a gateway answers, never marks a server GET-hostile.
// An attempt whose Last-Event-ID the server could not replay
// ([StreamAttempt.ReplayRefused]) is ignored. The zero value selects the
// default: Threshold 3.
//
// The streak is the one count of failing attempts: the [Transport] keeps one
// tracker per session, and its [StreamSwitch] turns the stream off when the
// rule fires (in [StreamAuto] mode).
type HostilityRule struct {
	Threshold int
}

func (r HostilityRule) withDefaults() HostilityRule {
	if r.Threshold <= 0 {
		r.Threshold = 3
	}
	return r
}

// HostilityTracker applies a [HostilityRule] to one session's records. It
// is a pure value: no clock, no I/O, not safe for concurrent use. Feed it
// every [Exchange] and [StreamAttempt] of the session; start a new tracker
// for a new session.
type HostilityTracker struct {
	rule   HostilityRule
	span   time.Duration
	streak int
	first  time.Time // Start of the streak's first attempt
	// lastEnd and lastStatus are the streak's last attempt's, for the
	// reason (not the whole attempt: a tracker is held per session).
	lastEnd    StreamEnd
	lastStatus int
	postOK     bool      // the last POST succeeded
	postAt     time.Time // when the last POST was answered
	outage     bool      // an outage attempt came after the last POST
	hostile    bool
	reason     string
}

// NewHostilityTracker returns a tracker applying r with span (0: 2s, the
// default [StreamConfig.Span]).
func NewHostilityTracker(r HostilityRule, span time.Duration) *HostilityTracker {
	if span <= 0 {
		span = 2 * time.Second
	}
	return &HostilityTracker{rule: r.withDefaults(), span: span}
}

// ObserveExchange notes the outcome of a POST; other verbs, and the POSTs
// of a 2026-07-28 subscriptions/listen stream (stream attempts), are ignored. A
// POST answered 2xx (and readable) counts as succeeding; no answer, a
// non-2xx or a malformed answer does not. It reports whether the server
// became hostile with it (true once): when the streak reached Threshold
// before a POST that counts, that POST decides, so a keeper that stopped
// re-dialing does not keep the rule from firing.
func (h *HostilityTracker) ObserveExchange(x Exchange) bool {
	if x.Verb != "POST" || x.Local || x.Method == MethodListen {
		return false // a listen stream's POST is a stream attempt, not a request that succeeded
	}
	h.postOK = x.Status >= 200 && x.Status < 300 && !x.Malformed
	h.postAt = x.Start.Add(x.Duration)
	h.outage = false
	return h.fire("a POST succeeded after them")
}

// ObserveAttempt notes a standalone stream attempt and reports whether the
// server became hostile with it (true once, on the attempt that crossed the
// threshold, or on the first POST after it; see [ObserveExchange]).
func (h *HostilityTracker) ObserveAttempt(a StreamAttempt) bool {
	switch {
	case a.End == EndClosed, a.ReplayRefused:
		return false
	case a.Outage():
		// Unavailable, not hostile: wait for a POST to succeed again.
		h.outage = true
		return false
	case !a.FailedAtOnce(h.span):
		h.streak = 0
		return false
	}
	if h.streak == 0 {
		h.first = a.Start // a POST must succeed once this attempt began
	}
	h.streak++
	h.lastEnd, h.lastStatus = a.End, a.Status
	return h.fire("POSTs succeeded")
}

// fire applies the rule once.
func (h *HostilityTracker) fire(why string) bool {
	if h.hostile || h.streak < h.rule.Threshold || !h.postOK || h.outage || h.postAt.Before(h.first) {
		return false
	}
	h.hostile = true
	h.reason = fmt.Sprintf("%d consecutive standalone stream attempts failed within %s with no message while %s (last: %s, HTTP %d)",
		h.streak, h.span, why, h.lastEnd, h.lastStatus)
	return true
}

// Hostile reports whether the rule fired, and why.
func (h *HostilityTracker) Hostile() (bool, string) { return h.hostile, h.reason }

// Reset starts over, as for a new session: the stream was held and is
// dialed again.
func (h *HostilityTracker) Reset() { *h = HostilityTracker{rule: h.rule, span: h.span} }

// Streak returns the current count of consecutive answered attempts that
// failed at once.
func (h *HostilityTracker) Streak() int { return h.streak }
