package supervisor

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/probes"
)

// onLoop runs f on the loop and returns once it ran.
func onLoop(t *testing.T, s *Supervisor, f func(*Supervisor)) {
	t.Helper()
	done := make(chan struct{})
	require.True(t, s.post(step(func(s *Supervisor) { f(s); close(done) })))
	<-done
}

// armedTTLs counts the list ttl timers the loop holds.
func armedTTLs(t *testing.T, s *Supervisor) (n int) {
	t.Helper()
	onLoop(t, s, func(s *Supervisor) {
		for _, l := range s.loop.ttl.lists {
			if l.timer != nil {
				n++
			}
		}
	})
	return n
}

// The ttl timers of a session end with it: a session that replaces it and
// sends no ttl (so its results post nothing) leaves no timer of the old
// session running.
func TestTTLTimersEndWithTheirSession(t *testing.T) {
	r := newRig(t, Config{})
	r.sup.Start()
	req := r.next()
	old := newFakeSession("s1", "a")
	req.ok(old)
	r.wait(Ready)
	req.spec.hooks.listTTL(probes.Tools, 60_000)
	require.Equal(t, 1, armedTTLs(t, r.sup), "the hint armed the timer")

	old.die(errors.New("gone"))
	next := r.next()
	next.ok(newFakeSession("s2", "a"))
	r.wait(Ready)
	require.Zero(t, armedTTLs(t, r.sup), "the old session's timer ended with it")
}

// The hints of a session's list results reach the loop as a ttl timer per
// list, the last page's hint winning: a page without a ttl after one with
// stops the timer, one with a ttl after one without arms it, and each list
// (resources/templates too) keeps its own.
func TestTTLHintsLastPageWinsPerList(t *testing.T) {
	r := newRig(t, Config{})
	r.sup.Start()
	req := r.next()
	req.ok(newFakeSession("s1", "a"))
	r.wait(Ready)
	ttl := req.spec.hooks.listTTL

	ttl(probes.Tools, 60_000)
	ttl(probes.Tools, 0) // the last page has none
	require.Zero(t, armedTTLs(t, r.sup))
	ttl(probes.Tools, 0)
	ttl(probes.Tools, 60_000) // the last page has one
	require.Equal(t, 1, armedTTLs(t, r.sup))
	ttl(probes.ResourceTemplates, 0)
	ttl(probes.ResourceTemplates, 60_000)
	require.Equal(t, 2, armedTTLs(t, r.sup), "each list has its timer")
	ttl(probes.ResourceTemplates, 0)
	require.Equal(t, 1, armedTTLs(t, r.sup), "the tools timer is not the templates'")
	ttl(probes.Tools, 0)
	require.Zero(t, armedTTLs(t, r.sup))
}

// A ttl timer that fired while a later list result re-armed its list (its
// Stop came too late) posts a due event naming itself: it is dropped, and
// the timer the later result armed stays held, so a result without a ttl
// still stops it, and nothing re-lists for the old timer.
func TestTTLDueOfAReplacedTimerIsDropped(t *testing.T) {
	r := newRig(t, Config{})
	sess := newFakeSession("s1", "a")
	r.ready(sess)
	ttl := (&held{s: r.sup, gen: 1}).listTTL // the hooks of the session of generation 1
	ttl(probes.Tools, 60_000)
	lists := sess.lists()

	onLoop(t, r.sup, func(s *Supervisor) {
		gen, fired := s.loop.ttl.gen, s.loop.ttl.lists[probes.Tools].timer
		s.armListTTL(gen, probes.Tools, 60_000)    // a later result's hint, taken first
		s.listTTLExpired(gen, probes.Tools, fired) // then the first timer's due
	})
	require.Equal(t, 1, armedTTLs(t, r.sup), "the later timer is still held")
	ttl(probes.Tools, 0)
	require.Zero(t, armedTTLs(t, r.sup), "and a result without a ttl stops it")
	require.Equal(t, lists, sess.lists(), "no re-list for a timer no longer held")
}
