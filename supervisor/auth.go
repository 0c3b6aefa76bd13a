package supervisor

import (
	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/fsm"
)

// reconnectResume returns how a Reconnect re-opens the connection: after
// a terminal unauthorized, the resumable session is re-attached (blind or
// known as its state is); else a full handshake. Loop goroutine only.
func (s *Supervisor) reconnectResume() fsm.ResumeMode {
	m := s.loop.m
	if m.State() != events.StateFailed || m.Reason() != events.ReasonUnauthorized {
		return fsm.ResumeNone
	}
	s.mu.Lock()
	rs := s.snap.resume
	s.mu.Unlock()
	if rs != nil && rs.SessionID == "" {
		return fsm.ResumeNone
	}
	return resumeMode(rs)
}

// resumeMode is how a session of rs is resumed: blind without its
// InitializeResult, none without rs.
func resumeMode(rs *ResumeState) fsm.ResumeMode {
	switch {
	case rs == nil:
		return fsm.ResumeNone
	case rs.InitializeResult == nil:
		return fsm.ResumeBlind
	}
	return fsm.ResumeKnown
}

// reconnect takes a Reconnect: the host decided to try again, so the
// rate-limit window ends.
func (s *Supervisor) reconnect() {
	s.setSnapshot(func(sn *snapshot) { sn.rate = nil })
	s.step(fsm.Trigger{Kind: events.TriggerReconnectRequested, Resume: s.reconnectResume()})
	s.setSnapshot(func(sn *snapshot) { sn.reconnects-- }) // its outcome is published
}
