package supervisor

import (
	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/fsm"
)

// reconnectResume returns how a Reconnect re-opens the connection: the
// session the supervisor still holds resumable is re-attached when the
// machine stopped on a refused credential (a terminal failed state whose
// reason is unauthorized), so that a host that re-authorized keeps its
// server-side session; a full handshake otherwise (fsm.ResumeNone). The
// attach is blind or known as the resume state is, and a session the server
// no longer has takes the one stale recovery of failure story S2. Loop
// goroutine only.
func (s *Supervisor) reconnectResume() fsm.ResumeMode {
	m := s.loop.m
	if m.State() != events.StateFailed || m.Reason() != events.ReasonUnauthorized {
		return fsm.ResumeNone
	}
	s.mu.Lock()
	rs := s.snap.resume
	s.mu.Unlock()
	switch {
	case rs == nil || rs.SessionID == "":
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
