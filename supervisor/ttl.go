package supervisor

import (
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/mcpsup/mcpsup/probes"
)

// DefaultMinListTTL is Config.MinListTTL's default: a list is re-fetched
// for its ttl at most every ten seconds, whatever ttlMs says.
const DefaultMinListTTL = 10 * time.Second

// maxListTTL bounds a ttlMs hint: a longer one is taken as a day.
const maxListTTL = 24 * time.Hour

// listTTLs holds one timer per list: when it fires, the list's ttlMs
// (SEP-2549) has run out and the list is re-fetched. Owned by the loop
// goroutine. Each list result re-arms its list's timer (the last page's
// hint wins), so one expiry makes one re-list, whose result arms the next.
type listTTLs struct {
	gen    uint64
	timers [probes.ResourceTemplates + 1]clockwork.Timer
	// armed numbers each timer armed (from seq): a due event names the
	// timer that posted it, so one that fired while a later result re-armed
	// its list (Stop came too late) is told from the timer now held.
	armed [probes.ResourceTemplates + 1]uint64
	seq   uint64
}

// stop stops every timer; t may be nil (no list ever had a ttl).
func (t *listTTLs) stop() {
	if t == nil {
		return
	}
	for i, tm := range t.timers {
		if tm != nil {
			tm.Stop()
			t.timers[i], t.armed[i] = nil, 0
		}
	}
}

// endSession stops the timers of the session of gen, which the loop
// released: a later session's results, which post nothing without a ttl
// (see Supervisor.hooksFor), would not stop them. t may be nil.
func (t *listTTLs) endSession(gen uint64) {
	if t != nil && t.gen == gen {
		t.stop()
	}
}

// listTTLSeen and listTTLDue are the loop's inputs: a list result of
// generation gen carried ttlMs ms, and the ttl of a list ran out.
type (
	listTTLSeen struct {
		gen  uint64
		list probes.List
		ms   int
	}
	listTTLDue struct {
		gen  uint64
		list probes.List
		seq  uint64 // the timer's number (listTTLs.armed)
	}
)

func (in listTTLSeen) take(s *Supervisor) { s.armListTTL(in.gen, in.list, in.ms) }
func (in listTTLDue) take(s *Supervisor)  { s.listTTLExpired(in) }

// armListTTL (re)arms the ttl timer of list for a result of generation gen
// whose ttlMs is ms: max(ms, Config.MinListTTL), at most maxListTTL, on
// Clock. A result without a ttl (0) stops the timer; a negative
// Config.MinListTTL never arms one.
func (s *Supervisor) armListTTL(gen uint64, list probes.List, ms int) {
	if gen != s.loop.m.Generation() || int(list) > int(probes.ResourceTemplates) {
		return // an older session's result
	}
	if s.loop.ttl == nil {
		if ms <= 0 {
			return // nothing to stop or arm
		}
		s.loop.ttl = new(listTTLs) // made for the first ttl: most servers send none
	}
	t := s.loop.ttl
	if t.gen != gen {
		t.stop()
		t.gen = gen
	}
	if old := t.timers[list]; old != nil {
		old.Stop()
		t.timers[list], t.armed[list] = nil, 0
	}
	if ms <= 0 || s.cfg.MinListTTL < 0 {
		return
	}
	d := maxListTTL
	if ms < int(maxListTTL/time.Millisecond) {
		d = time.Duration(ms) * time.Millisecond
	}
	d = max(d, s.cfg.MinListTTL)
	t.seq++
	due := listTTLDue{gen: gen, list: list, seq: t.seq}
	t.armed[list] = t.seq
	t.timers[list] = s.cfg.Clock.AfterFunc(d, func() { s.post(due) })
}

// listTTLExpired re-lists a list once its ttl ran out, on the live session
// of the due event's generation; the re-list joins the one owner of
// re-listing (discovery.go), so its gap and coalescing apply. The due event
// of a timer no longer held (stopped or re-armed after it fired) is
// dropped: the result that stopped or re-armed it decides.
func (s *Supervisor) listTTLExpired(due listTTLDue) {
	gen, list := due.gen, due.list
	t := s.loop.ttl
	if t == nil || t.gen != gen || t.armed[list] != due.seq { // list: bounded by armListTTL, which made due
		return
	}
	t.timers[list], t.armed[list] = nil, 0
	if gen != s.loop.m.Generation() || s.loop.m.State() != Ready {
		return // the next session's discovery lists it
	}
	s.wantRelist(gen, setOf(list), nil)
}
