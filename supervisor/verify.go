package supervisor

import (
	"context"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/fsm"
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
	sessionVerified struct{ gen uint64 }
	sessionLost     struct {
		gen     uint64
		verdict classify.Verdict
	}
)

func (in sessionVerified) take(s *Supervisor) {
	s.verified()
	s.step(fsm.Trigger{Kind: fsm.SessionVerified, Generation: in.gen})
}

func (in sessionLost) take(s *Supervisor) {
	// The machine leaves ready first: a call waiting for the verification
	// must not go out on the dead session in between.
	s.step(fsm.Trigger{Kind: fsm.SessionDied, Generation: in.gen, Verdict: in.verdict})
	s.verified()
}

// verified ends a verification: calls no longer wait for it.
func (s *Supervisor) verified() {
	s.loop.verifying = 0
	s.setSnapshot(func(sn *snapshot) { sn.verifying = nil })
}

// verifyRequest returns the cheap request that verifies sess, nil when its
// era has none. go-sdk serves `ping` only before 2026-07-28
// (ClientOptions.KeepAlive); a 2026-07-28 session's own cheap request plugs
// in here. Until then such a session is not verified: the call's failure
// is taken as the session's, and it is replaced, as before verification.
func verifyRequest(sess session) func(context.Context) error {
	if sess.ProtocolVersion() >= "2026-07-28" {
		return nil
	}
	return sess.Ping
}

// verify runs one fsm.VerifySession: a ping on the session of c's
// generation, bounded by Config.ProbeTimeout, judged by the keepalive's
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
	ping := verifyRequest(sess)
	if ping == nil {
		s.step(fsm.Trigger{Kind: fsm.SessionDied, Generation: gen, Verdict: c.Verdict})
		return
	}
	s.loop.verifying = gen
	h := s.held(gen)
	s.setSnapshot(func(sn *snapshot) { sn.verifying = h })
	s.goCmd(func() {
		ctx, cancel := context.WithTimeout(s.life, s.cfg.ProbeTimeout)
		defer cancel()
		err := ping(ctx)
		if err == nil {
			s.post(sessionVerified{gen: gen})
			return
		}
		v := classify.Classify(s.life, err)
		if judgePing(v, maxPingTimeouts) == pingDead {
			s.post(sessionLost{gen: gen, verdict: v})
			return
		}
		s.post(sessionVerified{gen: gen}) // answered, if with an error: the session lives
	})
}
