package supervisor

import (
	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/fsm"
	seam "github.com/mcpsup/mcpsup/session"
)

// A call that failed with transport (no HTTP answer: a reset, EOF) may have
// met a blip on a live session: go-sdk keeps the session after a reset on a
// POST (DESIGN.md section 7). The machine asks the shell to verify the
// session (fsm.VerifySession) before it replaces it: one cheap request on
// the same session. Answered, the session stays and the call failed alone;
// not answered, the session died (fsm.SessionDied), and the machine
// replaces it.

// From the verification: the session answered, or did not.
type (
	sessionVerified struct {
		gen  uint64
		ping uint64 // its number (snapshot.pings)
	}
	sessionLost struct {
		gen     uint64
		verdict classify.Verdict
	}
)

func (in sessionVerified) take(s *Supervisor) {
	if s.verified(in.gen) {
		s.loop.answered, s.loop.answeredGen = in.ping, in.gen
	}
	s.step(fsm.Trigger{Kind: fsm.SessionVerified, Generation: in.gen})
}

// pingAnsweredSince reports whether the transport failure v of a call sent
// on the session of gen, when snapshot.pings was pings, is answered for by
// a verification: a ping sent on that session after the call, and
// answered. Calls cut together reach the loop one by one, some after the
// first one's ping was answered: that answer covers every call in flight
// when it went out, so a burst of failures costs one ping, not one each. A
// call in flight that fails after the answer is taken as failed alone; a
// session that died meanwhile is found by the next call, the standalone
// stream or the keepalive. Loop goroutine.
func (s *Supervisor) pingAnsweredSince(gen, pings uint64, v classify.Verdict) bool {
	return v.Class == classify.Transport && s.loop.answeredGen == gen && s.loop.answered > pings
}

func (in sessionLost) take(s *Supervisor) {
	// The machine leaves ready first: a call waiting for the verification
	// must not go out on the dead session in between.
	s.step(fsm.Trigger{Kind: fsm.SessionDied, Generation: in.gen, Verdict: in.verdict})
	s.verified(in.gen)
}

// verified ends the verification of gen, and reports whether it was the one
// running: calls no longer wait for it. The late answer of a session
// replaced meanwhile leaves the verification of its successor running.
func (s *Supervisor) verified(gen uint64) bool {
	if s.loop.verifying != gen {
		return false
	}
	s.loop.verifying = 0
	s.setSnapshot(func(sn *snapshot) { sn.verifying = nil })
	return true
}

// verify runs one fsm.VerifySession: the era's cheap request (session.Alive:
// ping, or server/discover on 2026-07-28) on the session of c's generation, bounded by Config.ProbeTimeout, judged by the keepalive's
// rule (judgePing: transport, session-expired and no answer in time mean
// dead; every answer, an error status included, means live). While one
// verification runs, the transport failures of other calls on the same
// session wait for its answer: one request, however many calls failed; and
// calls made meanwhile wait for it (bounded by their context and
// Config.MaxCallWait), so none goes out on a session that may be dead.
func (s *Supervisor) verify(c fsm.Command) {
	gen := c.Generation
	if s.loop.verifying == gen {
		return
	}
	sess := s.session(gen)
	if sess == nil {
		return // released meanwhile: its end was reported
	}
	ping := sess.Alive
	s.loop.verifying = gen
	h := s.held(gen)
	var num uint64
	s.setSnapshot(func(sn *snapshot) {
		sn.verifying = h
		sn.pings++
		num = sn.pings
	})
	s.goCmd(func() input {
		ctx, cancel := s.cmdContext(s.cfg.ProbeTimeout)
		defer cancel()
		err := ping(ctx)
		if err == nil {
			return sessionVerified{gen: gen, ping: num}
		}
		v := classify.Classify(s.life, err)
		if seam.PingProvesDead(v) {
			return sessionLost{gen: gen, verdict: v}
		}
		return sessionVerified{gen: gen, ping: num} // answered, if with an error: the session lives
	})
}
