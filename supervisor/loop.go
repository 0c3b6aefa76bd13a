package supervisor

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/fsm"
	"github.com/mcpsup/mcpsup/httpsession"
	"github.com/mcpsup/mcpsup/msgcheck"
	"github.com/mcpsup/mcpsup/probes"
	seam "github.com/mcpsup/mcpsup/session"
)

// loopState is owned by the loop goroutine.
type loopState struct {
	m        *fsm.Machine
	sessions []*held  // one, two while replacing
	found    *Catalog // discovered, not yet published
	// partial holds what the failed listings of its session settled
	// (settled): a retry on that session lists only the rest.
	partial  *Catalog
	settled  listSet
	bo       backoff.BackOff
	retry    clockwork.Timer
	cooldown clockwork.Timer // a churn failure's
	seq      uint64
	cat      catalogLoop
	ttl      listTTLs
	stepping bool // a step runs: triggers it produces wait in queue
	queue    []fsm.Trigger
	batch    []events.Event // held until the state they announce is published
}

// held returns the held session of gen, or nil.
func (s *Supervisor) held(gen uint64) *held {
	if i := slices.IndexFunc(s.loop.sessions, func(h *held) bool { return h.gen == gen }); i >= 0 {
		return s.loop.sessions[i]
	}
	return nil
}

// stopAll stops the timers that are not nil.
func stopAll(timers ...clockwork.Timer) {
	for _, t := range timers {
		if t != nil {
			t.Stop()
		}
	}
}

// armStep (re)arms *t to feed the machine tr after d.
func (s *Supervisor) armStep(t *clockwork.Timer, d time.Duration, tr fsm.Trigger) {
	stopAll(*t)
	*t = s.cfg.Observe.Clock.AfterFunc(d, func() { s.post(func(s *Supervisor) { s.step(tr) }) })
}

// step feeds t to the machine and executes what it returns; a step asked
// for while another runs is taken right after it.
func (s *Supervisor) step(t fsm.Trigger) {
	s.loop.queue = append(s.loop.queue, t)
	if s.loop.stepping {
		return
	}
	s.loop.stepping = true
	for i := 0; i < len(s.loop.queue); i++ {
		s.take(s.loop.queue[i])
	}
	s.loop.queue = nil
	s.loop.stepping = false
}

// take runs one step: the transition, its commands, the new snapshot.
func (s *Supervisor) take(t fsm.Trigger) {
	t.Now = s.cfg.Observe.Clock.Now()
	t.Verdict = s.redact.Verdict(t.Verdict) // the machine keeps it: StateError, Failure, events
	out, err := s.loop.m.Step(t)
	if err != nil { // a late result of an old session (fsm.ErrStaleGeneration), or a bug
		s.cfg.Observe.Logger.Debug("mcpsup: trigger not taken", "server", s.cfg.Name, "trigger", t.Kind, "err", err)
		return
	}
	if out.Transitioned() {
		s.emitEvent(out.Event)
		if m := s.loop.m; m.Reason() == events.ReasonChurn { // (re)arm the cool-down
			s.armStep(&s.loop.cooldown, s.cfg.Recovery.ChurnCooldown, fsm.Trigger{Kind: events.TriggerChurnCooled, Generation: m.Generation()})
		}
	}
	// Commands that only change what the host sees run before the new state
	// is published (a call woken by ready finds its catalog); commands that
	// start I/O run after (a result never overtakes the state it answers).
	for _, c := range out.Commands {
		if !startsIO(c.Kind) {
			s.exec(c)
		}
	}
	m := s.loop.m
	s.setSnapshot(func(sn *snapshot) {
		sn.state = m.State()
		sn.reason = m.Reason()
		sn.verdict = m.Verdict()
		sn.gen = m.Generation()
		sn.live = nil
		if sn.state == Ready {
			sn.live = s.held(sn.gen)
		}
	})
	s.flushEvents() // state read on an event is never older than the event

	for _, c := range out.Commands {
		if startsIO(c.Kind) {
			s.exec(c)
		}
	}
	s.keepSessionIDs()
}

// startsIO reports commands that run I/O or may feed the machine a trigger.
func startsIO(k fsm.CommandKind) bool {
	switch k {
	case fsm.Dial, fsm.Attach, fsm.Probe, fsm.ListDeclared, fsm.ScheduleRetry:
		return true
	}
	return false
}

// exec runs one command; I/O results come back through post.
func (s *Supervisor) exec(c fsm.Command) {
	switch c.Kind {
	case fsm.Dial, fsm.Attach:
		s.open(c)
	case fsm.Probe, fsm.ListDeclared:
		s.discover(c)
	case fsm.PublishCatalog:
		s.publish(c.Generation)
	case fsm.ScheduleRetry:
		s.scheduleRetry(c)
	case fsm.ClearSession:
		s.setSnapshot(func(sn *snapshot) { sn.resume = nil })
	case fsm.CloseSession:
		s.releaseSession(c.Generation, false, "closed", classify.Verdict{})
	case fsm.DetachSession:
		s.releaseSession(c.Generation, true, "detached", classify.Verdict{})
	}
}

// open dials or attaches a session for command c.
func (s *Supervisor) open(c fsm.Command) {
	spec := dialSpec{gen: c.Generation}
	if c.Kind == fsm.Attach {
		spec.resume = s.ResumeState()
		if spec.resume == nil { // nothing left to attach: the machine dials
			s.step(fsm.Trigger{Kind: events.TriggerAttachRefused, Generation: c.Generation})
			return
		}
	}
	spec.hooks = &held{s: s, gen: c.Generation}
	kind := c.Kind
	s.cmds.Go(func() {
		ctx, cancel := s.cmdContext(s.cfg.Recovery.DiscoveryTimeout)
		defer cancel()
		if kind == fsm.Attach {
			s.detachedBefore(ctx, spec.resume.SessionID)
		}
		opened, err := s.dial.Open(ctx, spec)
		var sess seam.Endable
		if err == nil {
			sess = seam.Verify(opened, seam.VerifyConfig{Timeout: s.cfg.Recovery.ProbeTimeout, KeepAlive: s.cfg.Recovery.KeepAlive,
				Clock: s.cfg.Observe.Clock, Logger: s.cfg.Observe.Logger, Observe: spec.hooks.observe})
		}
		verdict := classify.Classify(s.life, err)
		if !s.post(func(s *Supervisor) { s.opened(kind, spec, sess, verdict) }) && sess != nil {
			spec.hooks.sess = sess // opened too late for the loop
			spec.hooks.endCalls()
			s.endSession(spec.hooks, kind == fsm.Attach || s.detaching.Load())
		}
	})
}

// opened takes the result of a Dial or Attach.
func (s *Supervisor) opened(kind fsm.CommandKind, spec dialSpec, sess seam.Endable, v classify.Verdict) {
	failed, succeeded := events.TriggerHandshakeFailed, events.TriggerHandshakeSucceeded
	if kind == fsm.Attach {
		failed, succeeded = events.TriggerAttachRefused, events.TriggerAttached
	}
	if sess == nil {
		s.step(fsm.Trigger{Kind: failed, Generation: spec.gen, Verdict: v})
		return
	}
	if spec.gen != s.loop.m.Generation() || s.loop.m.State() == Closed {
		// Too late. A resumed session is only detached (the host may still
		// want it), as is any when detaching.
		spec.hooks.sess = sess
		spec.hooks.endCalls()
		s.endSession(spec.hooks, kind == fsm.Attach || s.detaching.Load())
		return
	}
	h := spec.hooks
	h.conn, h.sess = fmt.Sprintf("conn:%08x", rand.Uint32()), sess // conn tells sessionless sessions apart
	s.loop.sessions = append(s.loop.sessions, h)
	id := sess.Info().ID
	s.redact.AddSessionID(id)
	s.setSnapshot(func(sn *snapshot) {
		sn.sessionsUp++
		if s.cfg.Command == nil { // a process has nothing to resume
			sn.resume = s.resumeFor(sess, sn.resume)
		}
	})
	s.emitEvent(events.Event{Kind: events.KindSessionOpened, Generation: spec.gen, SessionID: eventSessionID(id), Connection: h.conn})
	// The only route by which the loop learns the session died.
	sess.AfterEnd(func() {
		s.post(func(s *Supervisor) { s.ended(spec.gen, sess) })
	})
	s.step(fsm.Trigger{Kind: succeeded, Generation: spec.gen})
}

// resumeFor returns the resume state for a live session.
func (s *Supervisor) resumeFor(sess seam.Session, prev *ResumeState) *ResumeState {
	info := sess.Info()
	rs := &ResumeState{Version: ResumeStateVersion, Endpoint: s.cfg.Endpoint,
		ResumeState: httpsession.ResumeState{SessionID: info.ID, ProtocolVersion: info.ProtocolVersion, InitializeResult: info.Initialize}}
	if prev != nil && rs.InitializeResult == nil && prev.SessionID == rs.SessionID {
		rs.InitializeResult = prev.InitializeResult
	}
	return rs
}

// ended takes the end of a session: one that ended by itself is released
// without DELETE and the machine hears it died, with its cause's verdict.
func (s *Supervisor) ended(gen uint64, sess seam.Session) {
	if h := s.held(gen); h == nil || h.sess != sess || !endedOnItsOwn(sess) {
		return // we ended it ourselves
	}
	v := classify.Error(sess.Err())
	s.releaseSession(gen, true, "ended by itself", v)
	s.step(fsm.Trigger{Kind: events.TriggerSessionDied, Generation: gen, Verdict: v})
}

// endedOnItsOwn reports whether sess ended, and not by its owner's Close or
// Detach.
func endedOnItsOwn(sess seam.Session) bool {
	err := sess.Err()
	return err != nil && !errors.Is(err, seam.ErrClosed) && !errors.Is(err, seam.ErrDetached)
}

// releaseSession forgets the held session of gen, says so in an event, and
// ends it (without DELETE when detach).
func (s *Supervisor) releaseSession(gen uint64, detach bool, detail string, v classify.Verdict) {
	h := s.held(gen)
	if h == nil {
		return
	}
	// Its calls may take the answers on their way for releaseGrace, unless
	// closing.
	if s.callLife.Err() == nil {
		s.cfg.Observe.Clock.AfterFunc(releaseGrace, h.endCalls)
	}
	s.loop.sessions = slices.DeleteFunc(s.loop.sessions, func(o *held) bool { return o == h })
	s.loop.ttl.endSession(gen)
	sess := h.sess
	s.emitEvent(events.Event{Kind: events.KindSessionEnded, Generation: gen, SessionID: eventSessionID(sess.Info().ID), Connection: h.conn, Verdict: v, Detail: detail})
	s.endSession(h, detach)
}

// releaseGrace is how long a released session's calls live on.
const releaseGrace = time.Second

// endSession closes or detaches h.sess on a background goroutine, its
// client out of the roots' set first; its calls have ended or will
// (h.calls).
func (s *Supervisor) endSession(h *held, detach bool) {
	s.roots.detach(h.client)
	sess := h.sess
	id, done := sess.Info().ID, make(chan struct{})
	if detach && id != "" {
		s.ending.Store(id, done)
	}
	s.bg.Go(func() {
		if detach {
			_ = sess.Detach()
		} else {
			_ = sess.Close()
		}
		s.ending.CompareAndDelete(id, done)
		close(done)
	})
}

// detachedBefore waits, bounded by ctx, for the detach of an earlier go-sdk
// session of id (Supervisor.ending).
func (s *Supervisor) detachedBefore(ctx context.Context, id string) {
	if done, ok := s.ending.Load(id); ok {
		select {
		case <-done.(chan struct{}):
		case <-ctx.Done():
		}
	}
}

// discover runs the blind probes or the declared listing.
func (s *Supervisor) discover(c fsm.Command) {
	h := s.held(c.Generation)
	if h == nil {
		s.step(fsm.Trigger{Kind: events.TriggerDiscoveryFailed, Generation: c.Generation,
			Verdict: classify.Verdict{Class: classify.Transport, Detail: "session gone before discovery"}})
		return
	}
	sess := h.sess
	blind, p := c.Kind == fsm.Probe, s.loop.partial
	retry := p != nil && p.Generation == c.Generation && !blind
	set := declaredLists(sess) &^ s.loop.settled
	s.cmds.Go(func() {
		ctx, cancel := s.cmdContext(s.cfg.Recovery.DiscoveryTimeout)
		defer cancel()
		var cat probes.Catalog
		var err error
		switch {
		case retry: // only what did not settle
			cat, err = s.listSome(h, set)
			cat.Offer = relistedOffer(p.Offer, cat)
		case blind:
			cat, err = probes.ProbeBlind(ctx, sess, s.probeOptions())
		default:
			cat, err = probes.ListDeclared(ctx, sess, capabilitiesOf(sess), s.probeOptions())
		}
		s.post(func(s *Supervisor) { s.discovered(c.Generation, cat, err) })
	})
}

func (s *Supervisor) probeOptions() probes.Options {
	return probes.Options{ProbeTimeout: s.cfg.Recovery.ProbeTimeout, MaxPages: s.cfg.Limits.MaxPages, MaxItems: s.cfg.Limits.MaxItems,
		Logger: s.cfg.Observe.Logger}
}

// discovered takes the result of a discovery.
func (s *Supervisor) discovered(gen uint64, cat probes.Catalog, err error) {
	s.emitEvent(events.Event{Kind: events.KindProbeReport, Generation: gen, Lists: listOutcomes(cat.Report)})
	if h := s.held(gen); err != nil && h != nil && endedOnItsOwn(h.sess) {
		return // the machine hears of the session's end (ended)
	}
	if err != nil {
		v := classify.Verdict{Class: classify.Unknown, Detail: err.Error()}
		if le, ok := errors.AsType[*probes.ListError](err); ok {
			v = le.Verdict
		}
		if s.loop.partial == nil || s.loop.partial.Generation != gen {
			s.loop.settled = 0
		}
		s.loop.partial = &Catalog{Offer: cat.Offer, Generation: gen}
		s.loop.settled |= listsWhere(cat.Report, settledList)
		s.step(fsm.Trigger{Kind: events.TriggerDiscoveryFailed, Generation: gen, Verdict: v})
		return
	}
	s.loop.partial = nil
	s.loop.found = &Catalog{Offer: cat.Offer, Generation: gen}
	s.step(fsm.Trigger{Kind: events.TriggerDiscoverySucceeded, Generation: gen})
	s.loop.found = nil // published, or refused as stale
}

// publish makes the catalog found for gen the current one; catalog-changed
// only when a list changed.
func (s *Supervisor) publish(gen uint64) {
	cat := s.loop.found
	s.loop.found = nil
	if cat == nil || cat.Generation != gen {
		return
	}
	var old Catalog
	if c := s.snap.catalog; c != nil { // written by the loop alone: no lock
		old = *c
	}
	var subs []string
	s.setSnapshot(func(sn *snapshot) { sn.catalog, subs = cat, slices.Collect(maps.Keys(sn.subs)) })
	if diff := cat.Diff(old); !diff.Empty() {
		s.emitEvent(diff.event(cat))
	}
	if level, _ := s.logLevel.Load().(string); old.Generation != gen && (len(subs) > 0 || level != "") {
		s.restore(gen, subs, level)
	}
	s.published(gen)
}

// restore re-establishes subscriptions and the logging level on a new
// session (a 2026-07-28 one gets no logging/setLevel: changelog.mdx item 5).
func (s *Supervisor) restore(gen uint64, subs []string, level string) {
	h := s.held(gen)
	if h == nil {
		return
	}
	sess := h.sess
	s.cmds.Go(func() {
		ctx, cancel := s.cmdContext(s.cfg.Recovery.DiscoveryTimeout)
		defer cancel()
		for _, uri := range subs {
			if err := sess.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
				s.cfg.Observe.Logger.Warn("mcpsup: re-subscribing failed", "server", s.cfg.Name, "uri", uri, "err", err)
			}
		}
		if level != "" && !msgcheck.ModernVersion(sess.Info().ProtocolVersion) { // a 2026-07-28 session's requests carry it (loglevel.go)
			//lint:ignore SA1019 logging/setLevel is deprecated from protocol 2026-07-28 on, and still served by 2025-era servers
			if err := sess.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: mcp.LoggingLevel(level)}); err != nil {
				s.cfg.Observe.Logger.Warn("mcpsup: restoring the logging level failed", "server", s.cfg.Name, "err", err)
			}
		}
	})
}

func (s *Supervisor) scheduleRetry(c fsm.Command) {
	if c.Attempt <= 1 {
		s.loop.bo.Reset()
	}
	d := s.loop.bo.NextBackOff()
	if d == backoff.Stop {
		s.step(fsm.Trigger{Kind: events.TriggerRetriesExhausted, Generation: c.Generation, Verdict: c.Verdict})
		return
	}
	d = max(d, min(c.Verdict.RetryAfter, s.cfg.Recovery.Backoff.MaxInterval))
	s.emitEvent(events.Event{Kind: events.KindRetryScheduled, Generation: c.Generation, Attempt: c.Attempt, Delay: d, Verdict: c.Verdict})
	s.armStep(&s.loop.retry, d, fsm.Trigger{Kind: events.TriggerRetryDue, Generation: c.Generation})
}

// emitEvent stamps, redacts and queues e for the sink. Loop goroutine.
func (s *Supervisor) emitEvent(e events.Event) {
	if s.cfg.Observe.Events == nil {
		return
	}
	s.loop.seq++
	e.Seq = s.loop.seq
	e.Server = s.cfg.Name
	if e.Time.IsZero() {
		e.Time = s.cfg.Observe.Clock.Now()
	}
	s.loop.batch = append(s.loop.batch, s.redact.Redact(e))
}

func (s *Supervisor) flushEvents() {
	s.sink.push(s.loop.batch...) // none without a sink (emitEvent)
	clear(s.loop.batch)
	s.loop.batch = s.loop.batch[:0]
}

// eventSessionID is an event's session id: its hash, "" for none.
func eventSessionID(id string) string {
	if id == "" {
		return ""
	}
	return events.HashSessionID(id)
}
