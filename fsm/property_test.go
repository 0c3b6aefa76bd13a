package fsm_test

import (
	"errors"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/fsm"
)

// TestPropertyInvariants fires random trigger sequences (random kinds,
// verdicts, resume modes, current, zero, stale and future generations, time
// steps) and checks the invariants of DESIGN.md section 2 after every step.
func TestPropertyInvariants(t *testing.T) {
	classes := append([]classify.Class{classify.None}, classify.Classes()...)
	var kinds []events.Trigger
	for _, k := range fsm.TriggerKinds() {
		if k != events.TriggerCloseRequested && k != events.TriggerDetachRequested {
			kinds = append(kinds, k)
		}
	}
	// Kinds the table handles (not ignores) per state, to steer runs deep.
	handled := map[events.State][]events.Trigger{}
	for _, r := range fsm.Table() {
		if !r.Ignore && r.Trigger != events.TriggerCloseRequested && r.Trigger != events.TriggerDetachRequested {
			handled[r.From] = append(handled[r.From], r.Trigger)
		}
	}
	// Closing ends a run's interesting part, so it is drawn rarely; half of
	// the other draws pick a kind the current state handles.
	drawKind := func(rt *rapid.T, s events.State) events.Trigger {
		switch d := rapid.IntRange(0, 99).Draw(rt, "pick"); {
		case d < 2:
			return rapid.SampledFrom([]events.Trigger{events.TriggerCloseRequested, events.TriggerDetachRequested}).Draw(rt, "end")
		case d < 50 && len(handled[s]) > 0:
			return rapid.SampledFrom(handled[s]).Draw(rt, "handled")
		}
		return rapid.SampledFrom(kinds).Draw(rt, "kind")
	}
	rapid.Check(t, func(rt *rapid.T) {
		maxSessions := rapid.IntRange(1, 6).Draw(rt, "maxSessions")
		m := fsm.New(fsm.Config{MaxSessions: maxSessions, Window: time.Minute})
		var opened []time.Time // when each Dial or Attach was commanded
		now := t0
		staleEntries := 0 // entries into stale-recovering since the last resume
		noProbe := false  // set by stale-recovering or failed, until a new resume
		fatalStop := false

		steps := rapid.IntRange(20, 100).Draw(rt, "steps")
		for range steps {
			tr := fsm.Trigger{
				Kind:    drawKind(rt, m.State()),
				Resume:  fsm.ResumeMode(rapid.IntRange(0, 2).Draw(rt, "resume")),
				Verdict: classify.Verdict{Class: rapid.SampledFrom(classes).Draw(rt, "class")},
			}
			switch g := rapid.IntRange(0, 9).Draw(rt, "gen"); {
			case g <= 5:
				tr.Generation = m.Generation()
			case g == 8 && m.Generation() > 0:
				tr.Generation = m.Generation() - 1
			case g == 9:
				tr.Generation = m.Generation() + 1
			}
			now = now.Add(time.Duration(rapid.IntRange(0, 20).Draw(rt, "dt")) * time.Second)
			tr.Now = now

			fromState, fromGen := m.State(), m.Generation()
			out, err := m.Step(tr)
			cmds := out.Commands

			if err != nil {
				var rej *fsm.RejectedError
				var ge *fsm.GenerationError
				var ve *fsm.VerdictError
				if !errors.As(err, &rej) && !errors.As(err, &ge) && !errors.As(err, &ve) {
					rt.Fatalf("untyped error %v", err)
				}
				if cmds != nil || m.State() != fromState || m.Generation() != fromGen || out.Transitioned() {
					rt.Fatalf("error %v changed the machine", err)
				}
				continue
			}

			// closed is absorbing: no state change, no command, no event.
			if fromState == events.StateClosed && (m.State() != events.StateClosed || len(cmds) != 0 || out.Transitioned()) {
				rt.Fatalf("closed left or emitted: %v %v", m.State(), cmds)
			}

			// generation: monotonic, +1 exactly per Dial or Attach, in order.
			next := fromGen
			for _, c := range cmds {
				if c.Kind == fsm.Dial || c.Kind == fsm.Attach {
					opened = append(opened, now)
					next++
					if c.Generation != next {
						rt.Fatalf("%s carries generation %d, want %d", c.Kind, c.Generation, next)
					}
				}
			}
			if m.Generation() != next {
				rt.Fatalf("generation %d after %v, want %d", m.Generation(), cmds, next)
			}

			// churn: never more than MaxSessions sessions opened within the
			// window, whatever opened them (retries, reconnects, cool-downs).
			inWindow := 0
			for _, at := range opened {
				if now.Sub(at) < time.Minute {
					inWindow++
				}
			}
			if inWindow > maxSessions {
				rt.Fatalf("%d sessions within the window, limit %d (%s)", inWindow, maxSessions, tr.Kind)
			}

			// the event names the transition taken; no event, no state change.
			if out.Transitioned() {
				if out.Event.From != fromState || out.Event.To != m.State() || out.Event.Trigger != tr.Kind {
					rt.Fatalf("event %+v after %s -> %s", out.Event, fromState, m.State())
				}
			} else if m.State() != fromState || len(cmds) != 0 {
				rt.Fatalf("%s -> %s with %v and no event", fromState, m.State(), cmds)
			}

			if tr.Kind == events.TriggerStarted {
				staleEntries, noProbe = 0, false
			}
			if tr.Kind == events.TriggerReconnectRequested && tr.Resume != fsm.ResumeNone && fromState == events.StateFailed {
				noProbe = false // the host re-attaches the session it holds: a new resume
			}
			if tr.Kind == events.TriggerRetryDue && fromState == events.StateFailed && (m.State() == events.StateResumingBlind || m.State() == events.StateResumingKnown) {
				// A resume that got no answer kept its session: the retry
				// re-attaches it and discovers anew (failed, retry-due,
				// resume-blind/known rows).
				noProbe = false
			}
			// no probing after stale-recovering or failed until a new resume.
			if noProbe {
				if m.State() == events.StateProbing {
					rt.Fatalf("probing again after stale-recovering or failed")
				}
				for _, c := range cmds {
					if c.Kind == fsm.Probe {
						rt.Fatalf("probe command after stale-recovering or failed")
					}
				}
			}
			// at most one stale recovery per resume.
			if m.State() == events.StateStaleRecovering && fromState != events.StateStaleRecovering {
				staleEntries++
				if staleEntries > 1 {
					rt.Fatalf("second stale recovery in one resume")
				}
			}
			if m.State() == events.StateStaleRecovering || m.State() == events.StateFailed {
				noProbe = true
			}

			// no retry (nor reconnect) after unauthorized or canceled.
			c := tr.Verdict.Class
			carries := tr.Kind == events.TriggerHandshakeFailed || tr.Kind == events.TriggerDiscoveryFailed ||
				tr.Kind == events.TriggerSessionDied || tr.Kind == events.TriggerAttachRefused
			fatalNow := carries && (c == classify.Unauthorized || c == classify.Canceled)
			if tr.Kind == events.TriggerReconnectRequested {
				fatalStop = false
			}
			for _, cmd := range cmds {
				isRetry := cmd.Kind == fsm.ScheduleRetry || cmd.Kind == fsm.Dial || cmd.Kind == fsm.Attach
				if isRetry && (fatalNow || fatalStop) {
					rt.Fatalf("%s after %s (%s)", cmd.Kind, c, tr.Kind)
				}
			}
			if m.State() == events.StateFailed && (m.Reason() == events.ReasonUnauthorized || m.Reason() == events.ReasonCanceled) {
				fatalStop = true
			}
			if fatalNow && fromState != events.StateFailed && m.State() == events.StateFailed && !m.Terminal() {
				rt.Fatalf("%s left a retrying failed state", c)
			}
		}
	})
}
