package soak_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/supervisor"
)

// Bounds of the end phase; none is reached when the invariants hold.
const (
	settleTimeout = 15 * time.Second // every supervisor reaches ready
	closeTimeout  = 15 * time.Second // every Close returns
)

// TestSoak runs supervisors against servers whose faults change at random
// while callers run tool calls, and checks the invariants of the package
// doc continuously and at the end.
func TestSoak(t *testing.T) {
	set := loadSettings(t)
	t.Logf("soak: seed %d (replay: -soak.seed=%d), faults for %s, %d supervisors, %d callers each",
		set.seed, set.seed, set.duration, set.supervisors, set.callers)
	ck := newChecker(t, set.seed)
	defer ck.seal()

	rigs := make([]*rig, set.supervisors)
	for i := range rigs {
		rigs[i] = newRig(t, i, set.seed)
	}
	for _, r := range rigs {
		r.sup.Start()
	}

	soakCtx, endSoak := context.WithTimeout(context.Background(), set.duration)
	defer endSoak()
	watchCtx, endWatch := context.WithCancel(context.Background())
	defer endWatch()
	var chaosWG, callersWG, watchWG sync.WaitGroup
	for i, r := range rigs {
		chaosWG.Go(func() { r.chaos.run(soakCtx) })
		watchWG.Go(func() { r.watch(watchCtx, ck) })
		for c := range set.callers {
			rng := rand.New(rand.NewPCG(set.seed, uint64(1000*(i+1)+c)))
			callersWG.Go(func() { r.caller(soakCtx, ck, set, c, rng) })
		}
	}

	// Faults stop with the soak; every rule is removed.
	chaosWG.Wait()

	// Every call returns by its deadline plus the grace.
	if !waitBounded(&callersWG, maxCallTimeout+set.grace) {
		for _, r := range rigs {
			if h := r.hung(); len(h) > 0 {
				ck.fail("call hung past its deadline", "%s (state %s): calls still running: %s", r.name, r.sup.State(), strings.Join(h, ", "))
			}
		}
	}
	endWatch()
	watchWG.Wait()

	settle(t, ck, rigs)
	closeAll(ck, rigs, &callersWG)

	for _, r := range rigs {
		r.checkInvocations(ck)
	}
	summary(t, set, rigs)
}

// settle lets every supervisor reach ready with no fault injected and checks
// the final invariants: the catalog, one more call, the stale recoveries
// and the session bound.
func settle(t *testing.T, ck *checker, rigs []*rig) {
	ctx, cancel := context.WithTimeout(context.Background(), settleTimeout)
	defer cancel()
	for _, r := range rigs {
		if err := r.sup.WaitForState(ctx, supervisor.Ready); err != nil {
			reason, v := r.sup.Failure()
			ck.fail("not ready after the faults stopped", "%s: %v: state %s, reason %q, verdict %s", r.name, err, r.sup.State(), reason, v)
			continue
		}
		r.checkCatalog(ck, "after the faults stopped")
		if cat := r.sup.Catalog(); cat.Generation != r.sup.Generation() {
			ck.fail("catalog differs from the server", "%s: ready on generation %d with a catalog from generation %d", r.name, r.sup.Generation(), cat.Generation)
		}
		r.finalCall(ctx, ck)
	}
	for _, r := range rigs {
		n := r.staleRecoveries()
		if n > 1 || (n > 0 && !r.mode.resumed()) {
			ck.fail("more than one stale recovery per resume", "%s (%s): %d stale recoveries", r.name, r.mode, n)
		}
		if r.mode == blindStale || r.mode == knownStale {
			if n != 1 {
				// A fault may end the attached session before its listing
				// fails; the machine must still recover once, at most.
				t.Logf("%s (%s): %d stale recoveries", r.name, r.mode, n)
			}
		}
		ends := r.setupFaults + r.chaos.tally().sessionEnds
		if opened := r.sup.SessionsOpened(); opened > 1+ends {
			ck.fail("more sessions than session-ending faults", "%s (%s): %d sessions opened, %d session-ending faults injected (bound %d)",
				r.name, r.mode, opened, ends, 1+ends)
		}
	}
}

// finalCall makes one call after the faults stopped. It must succeed, or
// fail only because the session had died unnoticed (an expiry or a restart
// whose 404 the call met first) or because a 429's rate-limit window is
// still open, and then succeed.
func (r *rig) finalCall(ctx context.Context, ck *checker) {
	expiredOnce := false
	for attempt := 1; attempt <= 3; attempt++ {
		id := fmt.Sprintf("%s/final/%d", r.name, attempt)
		rec := r.calls.begin(id, time.Now().Add(settleTimeout))
		res, err := r.sup.CallTool(withCallID(ctx, id), &mcp.CallToolParams{Name: mcptest.RecordTool, Arguments: mcptest.IDArgs{ID: id}})
		var ce *supervisor.CallError
		r.calls.end(rec, classOf(err), errors.As(err, &ce) && ce.Delivery == supervisor.NotSent, err)
		switch {
		case err == nil:
			r.checkResult(ck, id, res)
			return
		case errors.Is(err, supervisor.ErrRateLimited) && ce.RetryAfter() > 0:
			// The window the last 429 opened: wait it out, as a host would.
			if !waitFor(ctx, ce.RetryAfter()) {
				ck.fail("final call failed", "%s: the rate-limit window outlived the settle time", r.name)
				return
			}
		case !expiredOnce && ce != nil && (ce.Verdict.Class == classify.SessionExpired || ce.Verdict.Class == classify.Transport):
			expiredOnce = true
		default:
			ck.fail("final call failed", "%s: attempt %d: %v", r.name, attempt, err)
			return
		}
	}
	ck.fail("final call failed", "%s: no success in 3 attempts", r.name)
}

// waitFor waits d or until ctx ends; it reports whether d passed.
func waitFor(ctx context.Context, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// closeAll closes every supervisor at once and checks that each Close
// returns and leaves the supervisor closed; then the callers must be done.
func closeAll(ck *checker, rigs []*rig, callers *sync.WaitGroup) {
	var wg sync.WaitGroup
	for _, r := range rigs {
		wg.Go(func() {
			if err := r.sup.Close(); err != nil {
				ck.fail("close", "%s: Close: %v", r.name, err)
			}
			if st := r.sup.State(); st != supervisor.Closed {
				ck.fail("close", "%s: state %s after Close", r.name, st)
			}
		})
	}
	if !waitBounded(&wg, closeTimeout) {
		ck.fail("close", "a Close did not return within %s", closeTimeout)
		ck.seal() // goroutines still running must not report after the test
	}
	if !waitBounded(callers, closeTimeout) {
		ck.fail("call hung past its deadline", "calls still running after every Close returned")
		ck.seal()
	}
}

// waitBounded waits for wg at most d and reports whether it finished.
func waitBounded(wg *sync.WaitGroup, d time.Duration) bool {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-done:
		return true
	case <-timer.C:
		return false
	}
}

// summary logs calls by outcome, sessions and faults, per supervisor and in
// all.
func summary(t *testing.T, set settings, rigs []*rig) {
	allFailed := map[string]int{}
	var ok, sessions, rules, fires, instant, ends int
	byKind := map[string]int{}
	for _, r := range rigs {
		failed := map[string]int{}
		classCounts(failed, r.calls)
		classCounts(allFailed, r.calls)
		r.calls.mu.Lock()
		rok := r.calls.ok
		r.calls.mu.Unlock()
		ta := r.chaos.tally()
		rr, rf, ri := ta.total()
		ok += rok
		sessions += r.sup.SessionsOpened()
		rules, fires, instant, ends = rules+rr, fires+rf, instant+ri, ends+ta.sessionEnds+r.setupFaults
		for k := range numKinds {
			if n := ta.fired[k] + ta.instant[k]; n > 0 {
				byKind[k.String()] += n
			}
		}
		t.Logf("%s (%s, %s, stream %s): calls ok=%d failed{%s}; sessions opened %d <= 1+%d; stale recoveries %d; rules %d, fires %d, expiries/restarts %d",
			r.name, r.srv.Mode(), r.mode, r.stream, rok, formatCounts(failed), r.sup.SessionsOpened(), ta.sessionEnds+r.setupFaults,
			r.staleRecoveries(), rr, rf, ri)
	}
	nFailed := 0
	for _, n := range allFailed {
		nFailed += n
	}
	t.Logf("soak summary (seed %d, %s): calls ok=%d failed=%d {%s}; sessions opened %d; faults injected: %d rules acting on %d requests + %d expiries/restarts, %d able to end a session; by kind {%s}",
		set.seed, set.duration, ok, nFailed, formatCounts(allFailed), sessions, rules, fires, instant, ends, formatCounts(byKind))
	samples := map[string][]string{}
	for _, r := range rigs {
		r.calls.mu.Lock()
		for k, texts := range r.calls.samples {
			for _, text := range texts {
				if len(samples[k]) < maxSamples && !slices.Contains(samples[k], text) {
					samples[k] = append(samples[k], text)
				}
			}
		}
		r.calls.mu.Unlock()
	}
	// The failures no fault explains on its own, for people to read.
	for _, k := range []string{"unknown", "untyped", "protocol", "not-ready-idle", "not-ready-failed"} {
		for _, text := range samples[k] {
			t.Logf("sample %s failure: %s", k, text)
		}
	}
}
