package supervisor

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/fsm"
	"github.com/mcpsup/mcpsup/msgcheck"
	"github.com/mcpsup/mcpsup/probes"
	seam "github.com/mcpsup/mcpsup/session"
)

// capabilitiesOf returns what the server declared; nil when unknown.
func capabilitiesOf(sess seam.Session) *mcp.ServerCapabilities {
	if ir := sess.Info().Initialize; ir != nil {
		return cmp.Or(ir.Capabilities, &mcp.ServerCapabilities{})
	}
	return nil
}

func listOutcomes(r probes.Report) []events.ListOutcome {
	out := make([]events.ListOutcome, 0, len(r.Lists))
	for _, l := range r.Lists {
		out = append(out, events.ListOutcome{List: l.List.String(), Status: l.Status.String(), Items: l.Items, Verdict: l.Verdict, Warning: l.Warning})
	}
	return out
}

// catalogLoop is the re-listing state: one re-list runs; the lists asked
// for meanwhile wait in pending, for the session of pendGen, until the run
// ends and RelistMinGap has passed.
type catalogLoop struct {
	running    bool
	runWaiters []refreshWaiter // served by the running re-list
	pending    listSet
	pendGen    uint64
	waiters    []refreshWaiter // served by the pending re-list
	last       time.Time       // the last re-list's start
	gap        clockwork.Timer // armed: the pending re-list waits for the gap
	poll       clockwork.Timer
	lastSoon   time.Time // relistSoon's last
}

// refreshWaiter is a RefreshCatalog call asked on generation gen.
type refreshWaiter struct {
	gen  uint64
	done chan error // buffered: the loop never waits for the caller
}

// RefreshCatalog re-lists what the server declared on the live session,
// past go-sdk's list cache, and returns once the result is published; while
// the connection recovers it waits for the next published catalog. It
// returns the *probes.ListError of a failed `tools/list` (the catalog
// kept), ctx's error, or a *StateError wrapping ErrNotReady or ErrClosed.
func (s *Supervisor) RefreshCatalog(ctx context.Context) error {
	done := make(chan error, 1)
	for posted := false; ; {
		s.mu.Lock()
		err, ch := s.refusalLocked(), s.changedLocked()
		s.mu.Unlock()
		if err != nil {
			return err
		}
		if !posted { // refused once the stop began: the refusal follows
			posted = s.post(func(s *Supervisor) { s.refresh(done) })
			continue
		}
		select {
		case err := <-done:
			return err
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (s *Supervisor) refresh(done chan error) {
	gen := s.loop.m.Generation()
	if s.held(gen) == nil {
		gen-- // no session of gen yet: its publish serves the waiter
	}
	s.loop.cat.waiters = append(s.loop.cat.waiters, refreshWaiter{gen: gen, done: done})
	s.relistDeclared(gen)
}

// relistDeclared asks for every list the session of gen declared.
func (s *Supervisor) relistDeclared(gen uint64) {
	if h := s.held(gen); h != nil {
		s.wantRelist(gen, declaredLists(h.sess))
	}
}

// wantRelist asks for the lists of set on the session of gen, if current.
func (s *Supervisor) wantRelist(gen uint64, set listSet) {
	c := &s.loop.cat
	if gen != s.loop.m.Generation() || s.held(gen) == nil {
		return
	}
	if c.pendGen != gen {
		c.pending, c.pendGen = 0, gen
	}
	c.pending |= set
	s.kickRelist()
}

// kickRelist starts the pending re-list when nothing runs, the session is
// ready and the gap has passed.
func (s *Supervisor) kickRelist() {
	c := &s.loop.cat
	if c.running || c.pending == 0 || c.gap != nil {
		return
	}
	gen := c.pendGen
	h := s.held(gen)
	if gen != s.loop.m.Generation() || s.loop.m.State() != Ready || h == nil {
		return // a list_changed during discovery: the discovery's publish kicks
	}
	now := s.cfg.Observe.Clock.Now()
	if wait := c.last.Add(s.cfg.Limits.RelistMinGap).Sub(now); !c.last.IsZero() && wait > 0 {
		c.gap = s.cfg.Observe.Clock.AfterFunc(wait, func() {
			s.post(func(s *Supervisor) { s.loop.cat.gap = nil; s.kickRelist() })
		})
		return
	}
	set := c.pending
	c.running, c.runWaiters = true, c.waiters
	c.pending, c.waiters, c.last = 0, nil, now
	s.cmds.Go(func() {
		cat, err := s.listSome(h, set)
		s.post(func(s *Supervisor) { s.relisted(gen, set, cat, err) })
	})
}

// listSome lists set on h; it ends when h is released, as its calls do.
func (s *Supervisor) listSome(h *held, set listSet) (probes.Catalog, error) {
	ctx, cancel := s.cmdContext(s.cfg.Recovery.DiscoveryTimeout)
	defer cancel()
	defer context.AfterFunc(h.calls(), cancel)()
	return probes.ListOnly(ctx, h.sess, set.lists(), s.probeOptions())
}

func (s *Supervisor) relisted(gen uint64, set listSet, cat probes.Catalog, err error) {
	c := &s.loop.cat
	c.running = false
	waiters := c.runWaiters
	c.runWaiters = nil
	switch {
	case gen != s.loop.m.Generation() || s.loop.m.State() != Ready:
		c.waiters = append(c.waiters, waiters...) // the successor's discovery serves them
		if s.loop.m.State() == Ready {
			s.serveOlderWaiters(s.loop.m.Generation())
		}
	case err != nil:
		s.cfg.Observe.Logger.Warn("mcpsup: re-listing the catalog failed", "server", s.cfg.Name, "err", err)
		for _, w := range waiters {
			w.done <- fmt.Errorf("mcpsup: re-listing the catalog: %w", err)
		}
		s.ttlRelistFailed(gen, set)
		s.armPoll(gen)
	default:
		s.ttlRelistFailed(gen, listsWhere(cat.Report, func(l probes.ListReport) bool { return l.Status == probes.Degraded || l.Status == probes.Failed }))
		s.loop.found = &Catalog{Offer: relistedOffer(s.Catalog().Offer, cat), Generation: gen}
		s.step(fsm.Trigger{Kind: events.TriggerCatalogListed, Generation: gen})
		s.loop.found = nil // published, or refused as stale
		for _, w := range waiters {
			w.done <- nil
		}
	}
	s.kickRelist()
}

// published follows the publish of the catalog of gen.
func (s *Supervisor) published(gen uint64) {
	c := &s.loop.cat
	s.serveOlderWaiters(gen)
	if c.pendGen < gen {
		c.pending = 0 // an older session's wishes: this discovery listed everything
	}
	s.kickRelist()
	s.armPoll(gen)
}

// serveOlderWaiters answers the refreshes asked on a session older than gen.
func (s *Supervisor) serveOlderWaiters(gen uint64) {
	c := &s.loop.cat
	c.waiters = slices.DeleteFunc(c.waiters, func(w refreshWaiter) bool {
		if w.gen < gen {
			w.done <- nil // buffered
		}
		return w.gen < gen
	})
}

// armPoll arms the next poll of the session of gen when it is polled.
func (s *Supervisor) armPoll(gen uint64) {
	c := &s.loop.cat
	stopAll(c.poll)
	c.poll = nil
	if s.cfg.Limits.CatalogPollInterval < 0 || !s.polled(gen) {
		return
	}
	c.poll = s.cfg.Observe.Clock.AfterFunc(s.cfg.Limits.CatalogPollInterval, func() { s.post(func(s *Supervisor) { s.pollNow(gen) }) })
}

// polled reports whether the session of gen is polled: the stream is off
// or declined, or a 2025-era session has no id (so no stream).
func (s *Supervisor) polled(gen uint64) bool {
	if s.cfg.Command != nil {
		return false // a stdio server's list_changed always reaches us
	}
	if s.cfg.Stream.Policy == StreamOff || s.streams.StreamDecision().Off {
		return true
	}
	h := s.held(gen)
	if h == nil {
		return false
	}
	info := h.sess.Info()
	return info.ID == "" && !msgcheck.ModernVersion(info.ProtocolVersion) || h.declined.Load()
}

// pollNow re-lists a live, polled session (else the next publish arms the
// poll again).
func (s *Supervisor) pollNow(gen uint64) {
	s.loop.cat.poll = nil
	if s.loop.m.State() == Ready && s.polled(gen) {
		s.relistDeclared(gen)
	}
}

// relistGap spaces the re-lists no notification asked for (relistSoon).
const relistGap = 30 * time.Second

// relistSoon re-lists when a change may have gone unnoticed: the stream
// was down, a call named a tool the catalog lacks, a HeaderMismatch.
func (s *Supervisor) relistSoon(gen uint64) {
	now, last := s.cfg.Observe.Clock.Now(), s.loop.cat.lastSoon
	if s.held(gen) == nil || gen != s.loop.m.Generation() || !last.IsZero() && now.Sub(last) < relistGap {
		return
	}
	s.loop.cat.lastSoon = now
	s.relistDeclared(gen)
}
