package supervisor

import (
	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/fsm"
	"github.com/mcpsup/mcpsup/probes"
	seam "github.com/mcpsup/mcpsup/session"
)

// input is one fact for the loop goroutine, which takes inputs one at a
// time in arrival order (Supervisor.post). Each kind says where it comes
// from; take handles it on the loop.
type input interface{ take(s *Supervisor) }

// From the host: Start, Close or Detach, Reconnect.
type (
	startRequested struct{ mode fsm.ResumeMode }
	stopRequested  struct {
		kind events.Trigger // CloseRequested or DetachRequested
		done chan struct{}  // closed once the machine took it
	}
	reconnectRequested struct{}
)

// From the goroutines that run commands: a Dial or Attach ended, a
// discovery or re-list ended.
type (
	sessionOpened struct {
		kind    fsm.CommandKind // Dial or Attach
		spec    dialSpec
		sess    seam.Session // nil when it failed
		verdict classify.Verdict
	}
	catalogDiscovered struct {
		gen uint64
		cat probes.Catalog
		err error
	}
	catalogRelisted struct {
		gen uint64
		set listSet // the lists asked for
		cat probes.Catalog
		err error
	}
)

// From the sessions: one ended by itself, announced a list change, came
// back after a gap on its standalone stream.
type (
	sessionEnded struct {
		gen  uint64
		sess seam.Session
	}
	listChanged struct {
		gen   uint64
		lists listSet
	}
	relistWanted struct{ gen uint64 } // a change may have gone unnoticed
)

// From the host: RefreshCatalog (done hears when the catalog is published).
type refreshRequested struct{ done chan error }

// From timers: a retry is due; the re-list gap passed; a catalog poll is
// due.
type (
	retryDue struct{ gen uint64 }
	// churnCooled: Config.Recovery.ChurnCooldown passed in a churn failure.
	churnCooled struct{ gen uint64 }
	relistDue   struct{}
	pollDue     struct{ gen uint64 }
)

// From calls: a call failed (its events only: a failed call never steps
// the machine); a failed call is sent once more (Config.Recovery.Resend).
type (
	callFailed struct {
		gen uint64
		err *CallError
	}
	callResent struct{ err *CallError }
	// callReissued: a call whose 2026-07-28 response stream broke was
	// re-issued; first is the lost request's error, id the new request's
	// JSON-RPC id ("" when it was not sent).
	callReissued struct {
		first *CallError
		id    string
	}
)

func (in startRequested) take(s *Supervisor) {
	s.step(fsm.Trigger{Kind: events.TriggerStarted, Resume: in.mode})
}

func (in stopRequested) take(s *Supervisor) {
	s.step(fsm.Trigger{Kind: in.kind})
	close(in.done)
}

func (reconnectRequested) take(s *Supervisor) {
	s.setSnapshot(func(sn *snapshot) { sn.rate = nil }) // the host decided to try again
	s.step(fsm.Trigger{Kind: events.TriggerReconnectRequested, Resume: s.reconnectResume()})
	s.setSnapshot(func(sn *snapshot) { sn.reconnects-- }) // its outcome is published
}

func (in sessionOpened) take(s *Supervisor)     { s.opened(in.kind, in.spec, in.sess, in.verdict) }
func (in catalogDiscovered) take(s *Supervisor) { s.discovered(in.gen, in.cat, in.err) }
func (in catalogRelisted) take(s *Supervisor)   { s.relisted(in.gen, in.set, in.cat, in.err) }
func (in sessionEnded) take(s *Supervisor)      { s.ended(in.gen, in.sess) }
func (in listChanged) take(s *Supervisor)       { s.relistChanged(in.gen, in.lists) }
func (in relistWanted) take(s *Supervisor)      { s.relistSoon(in.gen) }
func (in refreshRequested) take(s *Supervisor)  { s.refresh(in.done) }
func (relistDue) take(s *Supervisor)            { s.gapPassed() }
func (in pollDue) take(s *Supervisor)           { s.pollNow(in.gen) }

func (in retryDue) take(s *Supervisor) {
	s.step(fsm.Trigger{Kind: events.TriggerRetryDue, Generation: in.gen})
}

func (in churnCooled) take(s *Supervisor) {
	s.step(fsm.Trigger{Kind: events.TriggerChurnCooled, Generation: in.gen})
}

func (in callResent) take(s *Supervisor) {
	ce := in.err
	s.emitEvent(events.Event{Kind: events.KindCallResent, Generation: ce.Generation, Op: ce.Op, Name: ce.Name,
		Delivery: ce.Delivery.String(), Verdict: ce.Verdict})
}

func (in callReissued) take(s *Supervisor) {
	ce := in.first
	s.emitEvent(events.Event{Kind: events.KindCallReissued, Generation: ce.Generation, Op: ce.Op, Name: ce.Name,
		Delivery: ce.Delivery.String(), Verdict: ce.Verdict, RequestID: ce.RequestID, ReissuedAs: in.id})
}

func (in callFailed) take(s *Supervisor) { s.callFailed(in.gen, in.err) }
