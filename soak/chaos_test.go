package soak_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/mcpsup/mcpsup/mcptest"
)

// Rule changes happen every minChange to maxChange.
const (
	minChange = 50 * time.Millisecond
	maxChange = 400 * time.Millisecond
	// maxActive bounds the rules installed at once.
	maxActive = 2
)

// chaos changes one server's faults at random, from its own seeded
// generator, until its context ends.
type chaos struct {
	srv *mcptest.Server
	rng *rand.Rand // chaos goroutine only

	mu        sync.Mutex
	faults    map[mcptest.RuleID]fault // every rule ever installed
	active    []mcptest.RuleID
	installed [numKinds]int // rules installed, by kind
	instant   [numKinds]int // expiries and restarts that ended something
	epoch     chan struct{} // closed and replaced on every change
	// sessionless: a 2026-07-28 server; rules aim at that era's handshake
	// and push stream (fault.rule).
	sessionless bool
	stopped     bool
}

func newChaos(srv *mcptest.Server, rng *rand.Rand) *chaos {
	return &chaos{srv: srv, rng: rng, faults: map[mcptest.RuleID]fault{}, epoch: make(chan struct{}),
		sessionless: srv.Mode() == mcptest.Sessionless2026}
}

// run changes the faults until ctx ends, then removes every rule.
func (c *chaos) run(ctx context.Context) {
	defer c.stop()
	timer := time.NewTimer(between(c.rng, minChange, maxChange))
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		c.change()
		timer.Reset(between(c.rng, minChange, maxChange))
	}
}

// change applies one random change and starts a new epoch.
func (c *chaos) change() {
	switch p := c.rng.IntN(100); {
	case p < 20:
		c.removeAll()
	case p < 28:
		if len(c.active) > 0 {
			c.remove(c.active[c.rng.IntN(len(c.active))])
		}
	case p < 31:
		ids := c.srv.SessionIDs()
		if len(ids) > 0 && c.srv.ExpireSession(ids[c.rng.IntN(len(ids))]) {
			c.count(kExpireOne, 1)
		}
	case p < 34:
		c.count(kExpireAll, c.srv.ExpireAll())
	case p < 38:
		if c.srv.Restart() == nil {
			c.count(kRestart, 1)
		}
	default:
		c.add()
	}
	c.mu.Lock()
	close(c.epoch)
	c.epoch = make(chan struct{})
	c.mu.Unlock()
}

func (c *chaos) count(k kind, n int) {
	c.mu.Lock()
	c.instant[k] += n
	c.mu.Unlock()
}

// add installs a random rule, dropping the oldest beyond maxActive.
func (c *chaos) add() {
	if len(c.active) >= maxActive {
		c.remove(c.active[0])
	}
	k := ruleKinds[c.rng.IntN(len(ruleKinds))]
	ts := targetsOf(k)
	f := fault{kind: k, target: ts[c.rng.IntN(len(ts))]}
	r := f.rule(c.rng, c.sessionless)
	c.mu.Lock()
	defer c.mu.Unlock()
	id := c.srv.Gateway().Add(r)
	c.faults[id] = f
	c.installed[k]++
	c.active = append(c.active, id)
}

func (c *chaos) remove(id mcptest.RuleID) {
	c.srv.Gateway().Remove(id)
	c.active = slices.DeleteFunc(c.active, func(a mcptest.RuleID) bool { return a == id })
}

func (c *chaos) removeAll() {
	for _, id := range c.active {
		c.srv.Gateway().Remove(id)
	}
	c.active = nil
}

// stop removes every rule and ends the last epoch for good.
func (c *chaos) stop() {
	c.removeAll()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopped = true
	close(c.epoch)
}

// changed returns a channel closed at the next change (or at once after
// stop).
func (c *chaos) changed() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.epoch
}

// tally is what the chaos did, read from the gateway's log.
type tally struct {
	installed   [numKinds]int // rules installed
	fired       [numKinds]int // requests a rule acted on
	instant     [numKinds]int // expiries and restarts
	sessionEnds int           // injected faults that can end a session
}

func (t tally) total() (rules, fires, instant int) {
	for k := range numKinds {
		rules += t.installed[k]
		fires += t.fired[k]
		instant += t.instant[k]
	}
	return rules, fires, instant
}

// tally counts, from the request log, every request a rule acted on, and
// which of them could end a session (fault.endsSession), plus every expiry
// and restart.
func (c *chaos) tally() tally {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := tally{installed: c.installed, instant: c.instant}
	for k := range numKinds {
		t.sessionEnds += c.instant[k]
	}
	for _, e := range c.srv.Log().Entries() {
		f, ok := c.faults[e.Rule]
		if e.Rule == 0 || !ok {
			continue
		}
		t.fired[f.kind]++
		if f.endsSession() {
			t.sessionEnds++
		}
	}
	return t
}
