package httpsession

import (
	"sync"
	"time"

	"github.com/jonboulle/clockwork"
)

// StreamDecision is the standalone stream decision of a [StreamSwitch]:
// whether the server was found GET-hostile (DESIGN.md failure story S5), and
// for how long the stream stays off.
type StreamDecision struct {
	// Off reports a GET-hostile server: no session of the switch dials the
	// stream until Until.
	Off bool
	// Why says what decided: the rule that fired, "remembered" for a
	// persisted decision, or why the stream is on again.
	Why string
	// Since is when the decision was taken (for a persisted one, when it was
	// first taken), on the switch's clock; zero for the initial "on".
	Since time.Time
	// Until is when an Off decision ends and the stream is tried again;
	// zero when On.
	Until time.Time
}

// SwitchConfig configures a [StreamSwitch]. The zero value is a switch in
// [StreamAuto] mode with the default rule on the real clock.
type SwitchConfig struct {
	// Mode: [StreamOn] dials the stream and never turns it off (it is still
	// never fatal to a session); [StreamOff] never opens it
	// (StreamableClientTransport.DisableStandaloneSSE); [StreamAuto] dials
	// it and turns it off when Rule fires.
	Mode StreamMode
	// Rule marks a server GET-hostile (see [HostilityRule]).
	Rule HostilityRule
	// Memory is how long a GET-hostile decision lasts before the stream is
	// tried again. Default 24h.
	Memory time.Duration
	// Remembered is a decision persisted by an earlier switch: an Off
	// decision whose Since lies within Memory before now (not in the
	// future) is kept, in StreamAuto mode only, until Since+Memory; any
	// other is forgotten.
	Remembered StreamDecision
	// Clock times decisions and their end; nil means the real clock.
	Clock clockwork.Clock
	// OnStream, when set, is called with every change of the decision: Off
	// when the rule fires, On when Memory has passed. It is called from the
	// goroutine that observed the change (a stream keeper, a request, the
	// clock's timer), outside the switch's lock, and must not block.
	OnStream func(StreamDecision)
}

// StreamSwitch owns the standalone stream decision of one server, across
// its sessions: the on/off/auto mode, the GET-hostile decision and its end
// after [SwitchConfig.Memory]. Hand the same switch to every session
// ([Config.Switch]) so that each new session inherits the decision; the
// stream keeper of every session holds its stream (no GET on the wire, the
// session unaffected) while the decision is Off, and dials again when it
// ends. Its methods are safe for concurrent use.
type StreamSwitch struct {
	cfg   switchSettings
	clock clockwork.Clock

	mu       sync.Mutex
	decision StreamDecision
	changed  chan struct{} // closed and replaced when the decision changes
	timer    clockwork.Timer
	closed   bool
}

// switchSettings are the fields of a SwitchConfig a switch keeps (not the
// remembered decision, read once, nor the clock, kept apart): one switch is
// held per supervisor.
type switchSettings struct {
	Mode     StreamMode
	Rule     HostilityRule
	Memory   time.Duration
	OnStream func(StreamDecision)
}

// NewStreamSwitch returns a switch configured by cfg.
func NewStreamSwitch(cfg SwitchConfig) *StreamSwitch {
	if cfg.Memory <= 0 {
		cfg.Memory = 24 * time.Hour
	}
	cfg.Rule = cfg.Rule.withDefaults()
	s := &StreamSwitch{
		cfg:   switchSettings{Mode: cfg.Mode, Rule: cfg.Rule, Memory: cfg.Memory, OnStream: cfg.OnStream},
		clock: cfg.Clock, changed: make(chan struct{}),
	}
	if s.clock == nil {
		s.clock = clockwork.NewRealClock()
	}
	if r := cfg.Remembered; r.Off && cfg.Mode == StreamAuto {
		if age := s.clock.Since(r.Since); age >= 0 && age < cfg.Memory {
			s.decision = StreamDecision{Off: true, Why: "remembered: " + r.Why, Since: r.Since, Until: r.Since.Add(cfg.Memory)}
			s.timer = s.clock.AfterFunc(cfg.Memory-age, s.reenable)
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

// Close stops the timer that ends an Off decision; the decision stays as it
// is. It is idempotent.
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
// for Memory. Otherwise, or when it is off already, nothing changes.
func (s *StreamSwitch) hostile(why string) {
	s.mu.Lock()
	if s.cfg.Mode != StreamAuto || s.decision.Off || s.closed {
		s.mu.Unlock()
		return
	}
	now := s.clock.Now()
	d := StreamDecision{Off: true, Why: why, Since: now, Until: now.Add(s.cfg.Memory)}
	s.set(d)
	s.timer = s.clock.AfterFunc(s.cfg.Memory, s.reenable)
	s.mu.Unlock()
	s.report(d)
}

// reenable ends an Off decision once Memory has passed.
func (s *StreamSwitch) reenable() {
	s.mu.Lock()
	if !s.decision.Off || s.closed {
		s.mu.Unlock()
		return
	}
	d := StreamDecision{Why: "the GET-hostile decision expired", Since: s.clock.Now()}
	s.set(d)
	s.mu.Unlock()
	s.report(d)
}

// set changes the decision and wakes the keepers. Under mu.
func (s *StreamSwitch) set(d StreamDecision) {
	s.decision = d
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *StreamSwitch) report(d StreamDecision) {
	if s.cfg.OnStream != nil {
		s.cfg.OnStream(d)
	}
}
