package httpsession

import (
	"cmp"
	"fmt"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/mcpsup/mcpsup/session"
)

// StreamDecision is the standalone stream decision of a [StreamSwitch]
// (failure story S5): Off (GET-hostile: no session dials the stream until
// Until), Why ("" for the initial "on"), Since (when taken, on the switch's
// clock; zero for the initial "on") and Until (when an Off decision ends;
// zero when on).
type StreamDecision = session.StreamDecided

// SwitchConfig configures a [StreamSwitch]. The zero value is a
// [StreamAuto] switch with the default rule on the real clock.
type SwitchConfig struct {
	// Mode: [StreamOn] dials the stream and never turns it off; [StreamOff]
	// never opens it; [StreamAuto] dials it and turns it off when Rule fires.
	Mode StreamMode
	// Rule marks a server GET-hostile (see [HostilityRule]).
	Rule HostilityRule
	// Memory is how long a GET-hostile decision lasts. Default 24h.
	Memory time.Duration
	// Remembered is a decision persisted by an earlier switch (its Off and
	// Since): an Off one whose Since lies within Memory before now is kept,
	// in StreamAuto mode only, until Since+Memory; any other is forgotten.
	Remembered StreamDecision
	// Clock times decisions and their end; nil means the real clock.
	Clock clockwork.Clock
	// OnStream, when set, is called with every change of the decision, from
	// the goroutine that observed it (a keeper, a request, the clock's
	// timer), outside the switch's lock; it must not block.
	OnStream func(StreamDecision)
}

// StreamSwitch owns the standalone stream decision of one server across its
// sessions (decision record 0011): hand the same switch to every session
// ([Config.Switch]); each keeper holds its stream while the decision is
// Off and dials again when it ends. Safe for concurrent use.
type StreamSwitch struct {
	cfg SwitchConfig // defaults applied

	mu       sync.Mutex
	decision StreamDecision
	changed  chan struct{} // closed and replaced when the decision changes
	timer    clockwork.Timer
	closed   bool
}

// NewStreamSwitch returns a switch configured by cfg.
func NewStreamSwitch(cfg SwitchConfig) *StreamSwitch {
	cfg.Memory = cmp.Or(max(cfg.Memory, 0), 24*time.Hour)
	cfg.Clock = cmp.Or(cfg.Clock, clockwork.NewRealClock())
	cfg.Rule = cfg.Rule.withDefaults()
	s := &StreamSwitch{cfg: cfg, changed: make(chan struct{})}
	if r := cfg.Remembered; r.Off && cfg.Mode == StreamAuto {
		if age := cfg.Clock.Since(r.Since); age >= 0 && age < cfg.Memory {
			s.decision = StreamDecision{Off: true, Why: session.StreamRemembered, Since: r.Since, Until: r.Since.Add(cfg.Memory)}
			s.timer = cfg.Clock.AfterFunc(cfg.Memory-age, s.reenable)
		}
	}
	return s
}

// Mode returns the switch's mode.
func (s *StreamSwitch) Mode() StreamMode { return s.cfg.Mode }

// Decision returns the current GET-hostile decision.
func (s *StreamSwitch) Decision() StreamDecision {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.decision
}

// Close stops the timer that ends an Off decision; the decision stays. It
// is idempotent.
func (s *StreamSwitch) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.timer != nil {
		s.timer.Stop()
	}
}

// state reports whether keepers must hold their stream, and a channel
// closed when the decision changes.
func (s *StreamSwitch) state() (hold bool, changed <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg.Mode == StreamOff || s.decision.Off, s.changed
}

// hostile applies the rule's finding: in StreamAuto mode the stream is off
// for Memory.
func (s *StreamSwitch) hostile() {
	now := s.cfg.Clock.Now()
	s.set(func() bool { return s.cfg.Mode == StreamAuto && !s.decision.Off },
		StreamDecision{Off: true, Why: session.StreamHostile, Since: now, Until: now.Add(s.cfg.Memory)})
}

// reenable ends an Off decision once Memory has passed.
func (s *StreamSwitch) reenable() {
	s.set(func() bool { return s.decision.Off }, StreamDecision{Why: session.StreamExpired, Since: s.cfg.Clock.Now()})
}

// set takes d when ok, under the lock, says so and the switch is open, wakes
// the keepers and reports d.
func (s *StreamSwitch) set(ok func() bool, d StreamDecision) {
	s.mu.Lock()
	if s.closed || !ok() {
		s.mu.Unlock()
		return
	}
	s.decision = d
	close(s.changed)
	s.changed = make(chan struct{})
	if d.Off {
		s.timer = s.cfg.Clock.AfterFunc(s.cfg.Memory, s.reenable)
	}
	s.mu.Unlock()
	if s.cfg.OnStream != nil {
		s.cfg.OnStream(d)
	}
}

// HostilityRule marks a server GET-hostile (decision record 0011):
// Threshold attempts in a row [StreamAttempt.FailedAtOnce] while the
// session's last POST, answered after the streak began and after the last
// [StreamAttempt.Outage], succeeded. The zero value is Threshold 3.
type HostilityRule struct {
	Threshold int
}

func (r HostilityRule) withDefaults() HostilityRule {
	r.Threshold = cmp.Or(max(r.Threshold, 0), 3)
	return r
}

// HostilityTracker applies a [HostilityRule] to one session's every
// [Exchange] and [StreamAttempt]. No clock, no I/O; not safe for concurrent
// use.
type HostilityTracker struct {
	rule    HostilityRule
	span    time.Duration
	streak  int
	first   time.Time // Start of the streak's first attempt
	lastEnd StreamEnd // the streak's last attempt's end and status
	lastSt  int
	postOK  bool      // the last POST succeeded
	postAt  time.Time // when the last POST was answered
	outage  bool      // an outage attempt came after the last POST
	reason  string    // why the rule fired; "": it did not
}

// NewHostilityTracker returns a tracker applying r with span (0: 2s, the
// default [StreamConfig.Span]).
func NewHostilityTracker(r HostilityRule, span time.Duration) *HostilityTracker {
	return &HostilityTracker{rule: r.withDefaults(), span: cmp.Or(max(span, 0), 2*time.Second)}
}

// ObserveExchange notes the outcome of a POST (other verbs, and a listen's
// POSTs, which are stream attempts, are ignored): answered 2xx and readable
// is success. It reports whether the server became hostile with it (once).
func (h *HostilityTracker) ObserveExchange(x Exchange) bool {
	if x.Verb != "POST" || x.Local || x.Method == MethodListen {
		return false
	}
	h.postOK = x.Status >= 200 && x.Status < 300 && !x.Malformed
	h.postAt = x.Start.Add(x.Duration)
	h.outage = false
	return h.fire("a POST succeeded after them")
}

// ObserveAttempt notes a stream attempt and reports whether the server
// became hostile with it (once).
func (h *HostilityTracker) ObserveAttempt(a StreamAttempt) bool {
	switch {
	case a.End == EndClosed, a.ReplayRefused:
		return false
	case a.Outage():
		h.outage = true // unavailable, not hostile: wait for a POST to succeed again
		return false
	case !a.FailedAtOnce(h.span):
		h.streak = 0
		return false
	}
	if h.streak == 0 {
		h.first = a.Start
	}
	h.streak++
	h.lastEnd, h.lastSt = a.End, a.Status
	return h.fire("POSTs succeeded")
}

func (h *HostilityTracker) fire(why string) bool {
	if h.reason != "" || h.streak < h.rule.Threshold || !h.postOK || h.outage || h.postAt.Before(h.first) {
		return false
	}
	h.reason = fmt.Sprintf("%d consecutive standalone stream attempts failed within %s with no message while %s (last: %s, HTTP %d)",
		h.streak, h.span, why, h.lastEnd, h.lastSt)
	return true
}

// Hostile reports whether the rule fired, and why.
func (h *HostilityTracker) Hostile() (bool, string) { return h.reason != "", h.reason }

// Reset starts over, as for a new session.
func (h *HostilityTracker) Reset() { *h = HostilityTracker{rule: h.rule, span: h.span} }

// Streak returns the count of consecutive answered attempts that failed at
// once.
func (h *HostilityTracker) Streak() int { return h.streak }
