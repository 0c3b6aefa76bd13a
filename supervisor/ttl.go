package supervisor

import (
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/jonboulle/clockwork"

	"github.com/mcpsup/mcpsup/probes"
)

// DefaultMinListTTL is Config.Limits.MinListTTL's default.
const DefaultMinListTTL = 10 * time.Second

// maxListTTL bounds a ttlMs hint: a longer one is taken as a day.
const maxListTTL = 24 * time.Hour

// ttlJitter is the share of a ttl re-list's delay added at random
// (caching.mdx, Freshness Calculation: "MUST apply jitter and backoff");
// only added, never before the ttl ran out.
const ttlJitter = 0.2

// maxTTLRetryGap bounds the backoff of a failed ttl re-list, unless the
// list's own ttl is longer.
const maxTTLRetryGap = 5 * time.Minute

// listTTLs holds one timer per list, re-fetching it when its ttlMs
// (SEP-2549) runs out; each result re-arms it. A failed re-list keeps the
// last items (caching.mdx: "MAY serve stale responses") and is retried on
// the list's backoff. Loop goroutine.
type listTTLs struct {
	gen    uint64
	timers [probes.ResourceTemplates + 1]clockwork.Timer
	// every is max(ttlMs, MinListTTL), 0 without a ttl; retry is the
	// backoff after a failed ttl re-list.
	every [probes.ResourceTemplates + 1]time.Duration
	retry [probes.ResourceTemplates + 1]*backoff.ExponentialBackOff
	// armed numbers each timer armed (from seq), so a due event of a
	// timer re-armed since is told from the one held.
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

// endSession stops the timers of the released session of gen; t may be nil.
func (t *listTTLs) endSession(gen uint64) {
	if t != nil && t.gen == gen {
		t.stop()
	}
}

// listTTLDue is the loop's input when the ttl of a list ran out.
type listTTLDue struct {
	gen  uint64
	list probes.List
	seq  uint64 // the timer's number (listTTLs.armed)
}

func (in listTTLDue) take(s *Supervisor) { s.listTTLExpired(in) }

// armListTTL (re)arms list's timer for a result of gen with ttlMs ms:
// max(ms, MinListTTL), at most maxListTTL, jittered; ms 0 stops it.
func (s *Supervisor) armListTTL(gen uint64, list probes.List, ms int) {
	if gen != s.loop.m.Generation() {
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

// ttlRelistFailed retries each list of set whose ttl ran out after its
// backoff: from every[list] doubling up to maxTTLRetryGap (or the ttl).
func (s *Supervisor) ttlRelistFailed(gen uint64, set listSet) {
	t := s.loop.ttl
	if t == nil || t.gen != gen {
		return
	}
	for _, list := range set.lists() {
		if t.every[list] == 0 || t.timers[list] != nil {
			continue // no ttl, or its timer still runs (the failure was another re-list's)
		}
		if t.retry[list] == nil {
			t.retry[list] = backoff.NewExponentialBackOff(
				backoff.WithInitialInterval(t.every[list]),
				backoff.WithMaxInterval(max(maxTTLRetryGap, t.every[list])),
				backoff.WithMultiplier(2),
				backoff.WithRandomizationFactor(0), // armTTLTimer jitters
				backoff.WithMaxElapsedTime(0),
			)
		}
		s.armTTLTimer(gen, list, t.retry[list].NextBackOff())
	}
}

// listTTLExpired re-lists a list whose ttl ran out (through wantRelist);
// the due event of a timer no longer held is dropped.
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
