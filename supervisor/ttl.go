package supervisor

import (
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/jonboulle/clockwork"

	"github.com/mcpsup/mcpsup/probes"
)

// DefaultMinListTTL is Config.Limits.MinListTTL's default: a list is re-fetched
// for its ttl at most every ten seconds, whatever ttlMs says.
const DefaultMinListTTL = 10 * time.Second

// maxListTTL bounds a ttlMs hint: a longer one is taken as a day.
const maxListTTL = 24 * time.Hour

// ttlJitter is the share of a ttl re-list's delay added at random: a delay
// d waits d*(1+ttlJitter*u), u uniform in [0, 1). The caching page
// (server/utilities/caching.mdx, Freshness Calculation): clients that poll
// on the ttl "MUST apply jitter and backoff". Only added, so a list is
// never re-fetched before its ttl (or Config.Limits.MinListTTL) ran out.
const ttlJitter = 0.2

// maxTTLRetryGap bounds the backoff of a failed ttl re-list, unless the
// list's own ttl is longer.
const maxTTLRetryGap = 5 * time.Minute

// listTTLs holds one timer per list: when it fires, the list's ttlMs
// (SEP-2549) has run out and the list is re-fetched. Owned by the loop
// goroutine. Each list result re-arms its list's timer (the last page's
// hint wins), so one expiry makes one re-list, whose result arms the next.
// A re-list that fails leaves the list's last items served (caching.mdx:
// clients "MAY serve stale responses if errors occur during re-fetching")
// and is tried again on the list's backoff, which its next result resets.
type listTTLs struct {
	gen    uint64
	timers [probes.ResourceTemplates + 1]clockwork.Timer
	// every is a list's delay before jitter, max(ttlMs, MinListTTL), 0
	// when its last result carried no ttl; retry its backoff after a
	// failed ttl re-list, nil until one failed.
	every [probes.ResourceTemplates + 1]time.Duration
	retry [probes.ResourceTemplates + 1]*backoff.ExponentialBackOff
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
		t.every[i], t.retry[i] = 0, nil
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
// whose ttlMs is ms: max(ms, Config.Limits.MinListTTL), at most maxListTTL, plus
// up to ttlJitter of it at random, on Clock. A result without a ttl (0)
// stops the timer; a negative Config.Limits.MinListTTL never arms one. Any result
// resets the list's retry backoff.
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
	t.every[list], t.retry[list] = 0, nil
	if ms <= 0 || s.cfg.Limits.MinListTTL < 0 {
		return
	}
	d := maxListTTL
	if ms < int(maxListTTL/time.Millisecond) {
		d = time.Duration(ms) * time.Millisecond
	}
	t.every[list] = max(d, s.cfg.Limits.MinListTTL)
	s.armTTLTimer(gen, list, t.every[list])
}

// armTTLTimer arms list's timer for d plus up to ttlJitter of d at random.
func (s *Supervisor) armTTLTimer(gen uint64, list probes.List, d time.Duration) {
	t := s.loop.ttl
	d += time.Duration(float64(d) * ttlJitter * s.jitter())
	t.seq++
	due := listTTLDue{gen: gen, list: list, seq: t.seq}
	t.armed[list] = t.seq
	t.timers[list] = s.cfg.Observe.Clock.AfterFunc(d, func() { s.post(due) })
}

// ttlRelistFailed takes a re-list of set on the session of gen that
// failed: each of its lists whose ttl ran out (its timer spent, its result
// not yet in) is tried again after its backoff's next delay, from
// max(ttlMs, MinListTTL) doubling up to maxTTLRetryGap (or the ttl when
// longer), jittered like an expiry, never sooner than Config.Limits.MinListTTL.
// The retries go on while the session is ready; a result of the list
// (or the session's end) resets them.
func (s *Supervisor) ttlRelistFailed(gen uint64, set listSet) {
	t := s.loop.ttl
	if t == nil || t.gen != gen {
		return
	}
	for _, list := range set.lists() {
		if int(list) > int(probes.ResourceTemplates) || t.every[list] == 0 || t.timers[list] != nil {
			continue // no ttl, or its timer still runs (the failure was another re-list's)
		}
		if t.retry[list] == nil {
			t.retry[list] = backoff.NewExponentialBackOff(
				backoff.WithInitialInterval(t.every[list]),
				backoff.WithMaxInterval(max(maxTTLRetryGap, t.every[list])),
				backoff.WithMultiplier(2),
				backoff.WithRandomizationFactor(0), // armTTLTimer jitters
				backoff.WithMaxElapsedTime(0),
				backoff.WithClockProvider(clockAdapter{s.cfg.Observe.Clock}),
			)
		}
		s.armTTLTimer(gen, list, t.retry[list].NextBackOff())
	}
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
