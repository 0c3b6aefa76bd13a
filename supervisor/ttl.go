package supervisor

import (
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/jonboulle/clockwork"

	"github.com/mcpsup/mcpsup/probes"
)

// Bounds of the ttl re-lists (SEP-2549; caching.mdx, Freshness
// Calculation: "MUST apply jitter and backoff"): up to ttlJitter of the
// delay is added at random; a failed ttl re-list backs off up to
// maxTTLRetryGap (or the ttl).
const (
	maxListTTL     = 24 * time.Hour
	ttlJitter      = 0.2
	maxTTLRetryGap = 5 * time.Minute
)

// listTTLs holds one timer per list of the session of gen, re-fetching the
// list when its ttlMs runs out; each result re-arms it. A failed re-list
// keeps the last items (caching.mdx: "MAY serve stale responses") and is
// retried on the list's backoff. Loop goroutine.
type listTTLs struct {
	gen   uint64
	lists [probes.ResourceTemplates + 1]struct {
		timer clockwork.Timer
		every time.Duration   // max(ttlMs, MinListTTL); 0: no ttl
		retry backoff.BackOff // after a failed ttl re-list
	}
}

func (t *listTTLs) stop() {
	for l := range t.lists {
		t.reset(probes.List(l))
	}
}

func (t *listTTLs) reset(l probes.List) {
	stopAll(t.lists[l].timer)
	t.lists[l].timer, t.lists[l].every, t.lists[l].retry = nil, 0, nil
}

func (t *listTTLs) endSession(gen uint64) {
	if t.gen == gen {
		t.stop()
	}
}

// armListTTL (re)arms list's timer for a result of gen with ttlMs ms:
// max(ms, MinListTTL), at most maxListTTL, jittered; ms 0 stops it.
func (s *Supervisor) armListTTL(gen uint64, list probes.List, ms int) {
	if gen != s.loop.m.Generation() {
		return // an older session's result
	}
	t := &s.loop.ttl
	if t.gen != gen {
		t.stop()
		t.gen = gen
	}
	t.reset(list)
	if ms <= 0 || s.cfg.Limits.MinListTTL < 0 {
		return
	}
	d := time.Duration(min(ms, int(maxListTTL/time.Millisecond))) * time.Millisecond
	t.lists[list].every = max(d, s.cfg.Limits.MinListTTL)
	s.armTTLTimer(gen, list, t.lists[list].every)
}

func (s *Supervisor) armTTLTimer(gen uint64, list probes.List, d time.Duration) {
	d += time.Duration(float64(d) * ttlJitter * s.jitter())
	var tm clockwork.Timer // read on the loop, after this input
	tm = s.cfg.Observe.Clock.AfterFunc(d, func() { s.post(func(s *Supervisor) { s.listTTLExpired(gen, list, tm) }) })
	s.loop.ttl.lists[list].timer = tm
}

// ttlRelistFailed retries each list of set whose ttl ran out after its
// backoff.
func (s *Supervisor) ttlRelistFailed(gen uint64, set listSet) {
	t := &s.loop.ttl
	if t.gen != gen {
		return
	}
	for _, list := range set.lists() {
		l := &t.lists[list]
		if l.every == 0 || l.timer != nil {
			continue // no ttl, or its timer still runs (the failure was another re-list's)
		}
		if l.retry == nil { // armTTLTimer jitters
			l.retry = Backoff{InitialInterval: l.every, MaxInterval: max(maxTTLRetryGap, l.every), Multiplier: 2}.newBackOff(s.cfg.Observe.Clock)
		}
		s.armTTLTimer(gen, list, l.retry.NextBackOff())
	}
}

// listTTLExpired re-lists a list whose timer tm ran out, if still held.
func (s *Supervisor) listTTLExpired(gen uint64, list probes.List, tm clockwork.Timer) {
	t := &s.loop.ttl
	if t.gen != gen || t.lists[list].timer != tm {
		return
	}
	t.lists[list].timer = nil
	if gen == s.loop.m.Generation() && s.loop.m.State() == Ready { // else the next discovery lists it
		s.wantRelist(gen, setOf(list))
	}
}
