package supervisor

import (
	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/fsm"
)

// input is one fact for the loop goroutine, which takes inputs one at a
// time in arrival order (Supervisor.post).
type input interface{ take(s *Supervisor) }

// loopFunc is an input that runs on the loop goroutine: a command's result,
// a timer, a host request, a session's report.
type loopFunc func(s *Supervisor)

func (f loopFunc) take(s *Supervisor) { f(s) }

// factEvent: a fact that is an event and nothing more.
type factEvent struct{ e events.Event }

func (in factEvent) take(s *Supervisor) { s.emitEvent(in.e) }

// relistWanted: a change may have gone unnoticed (relistSoon).
type relistWanted struct{ gen uint64 }

func (in relistWanted) take(s *Supervisor) { s.relistSoon(in.gen) }

// stepLater is an input that feeds the machine t: a retry or cool-down due.
func stepLater(t fsm.Trigger) loopFunc { return func(s *Supervisor) { s.step(t) } }

// callResentEvent is the call-resent event of a call that failed as ce.
func callResentEvent(ce *CallError) events.Event {
	return events.Event{Kind: events.KindCallResent, Generation: ce.Generation, Op: ce.Op, Name: ce.Name,
		Delivery: ce.Delivery.String(), Verdict: ce.Verdict}
}

// callReissuedEvent is the call-reissued event of a call whose 2026-07-28
// response stream broke: first is the lost request's error, id the new
// request's JSON-RPC id ("" when it was not sent).
func callReissuedEvent(first *CallError, id string) events.Event {
	return events.Event{Kind: events.KindCallReissued, Generation: first.Generation, Op: first.Op, Name: first.Name,
		Delivery: first.Delivery.String(), Verdict: first.Verdict, RequestID: first.RequestID, ReissuedAs: id}
}
