package fsm_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/fsm"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// driver drives a machine one trigger at a time and checks, after every
// step, the state, the exact commands and the exact event returned.
type driver struct {
	t   *testing.T
	m   *fsm.Machine
	now time.Time
}

func newDriver(t *testing.T, cfg fsm.Config) *driver {
	return &driver{t: t, m: fsm.New(cfg), now: t0}
}

// want describes the expected outcome of one step. ev is nil when no event
// is expected (an ignored trigger).
type want struct {
	state events.State
	cmds  []fsm.Command
	ev    *events.Event
}

// step feeds tr (stamped with the driver's clock) and checks w.
func (d *driver) step(tr fsm.Trigger, w want) []fsm.Command {
	d.t.Helper()
	tr.Now = d.now
	out, err := d.m.Step(tr)
	require.NoError(d.t, err, "step %s", tr.Kind)
	require.Equal(d.t, w.state, d.m.State(), "state after %s", tr.Kind)
	require.Equal(d.t, w.cmds, out.Commands, "commands after %s", tr.Kind)
	if w.ev == nil {
		require.False(d.t, out.Transitioned(), "event after %s: %+v", tr.Kind, out.Event)
		require.Zero(d.t, out.Event, "event after %s", tr.Kind)
		return out.Commands
	}
	require.True(d.t, out.Transitioned(), "no event after %s", tr.Kind)
	exp := *w.ev
	exp.Kind = events.KindTransition
	require.Equal(d.t, exp, out.Event, "event after %s", tr.Kind)
	return out.Commands
}

// ev builds an expected transition event.
func ev(from, to events.State, k events.Trigger, guard string, v classify.Verdict, gen uint64, attempt int, reason events.Reason) *events.Event {
	return &events.Event{From: from, To: to, Trigger: k, Guard: guard,
		Verdict: v, Generation: gen, Attempt: attempt, Reason: reason}
}

func verdict(c classify.Class, status int) classify.Verdict {
	return classify.Verdict{Class: c, HTTPStatus: status}
}

func cmd(k fsm.CommandKind, gen uint64) fsm.Command { return fsm.Command{Kind: k, Generation: gen} }

func dial(gen uint64) fsm.Command { return fsm.Command{Kind: fsm.Dial, Generation: gen} }

func attach(gen uint64, mode fsm.ResumeMode) fsm.Command {
	return fsm.Command{Kind: fsm.Attach, Generation: gen, Resume: mode}
}

func retry(gen uint64, attempt int, v classify.Verdict) fsm.Command {
	return fsm.Command{Kind: fsm.ScheduleRetry, Generation: gen, Attempt: attempt, Verdict: v}
}

func trig(k events.Trigger, gen uint64) fsm.Trigger { return fsm.Trigger{Kind: k, Generation: gen} }

func failTrig(k events.Trigger, gen uint64, v classify.Verdict) fsm.Trigger {
	return fsm.Trigger{Kind: k, Generation: gen, Verdict: v}
}

// toReady brings a fresh machine to ready through a full handshake
// (generation 1).
func (d *driver) toReady() {
	d.t.Helper()
	d.step(fsm.Trigger{Kind: events.TriggerStarted}, want{events.StateConnecting, []fsm.Command{dial(1)},
		ev(events.StateIdle, events.StateConnecting, events.TriggerStarted, "resume-none", none, 1, 0, "")})
	d.handshakeToReady(events.StateConnecting, 1, 0)
}

// handshakeToReady answers the Dial of generation gen, made in state s
// (connecting or stale-recovering): the handshake and then the declared
// lists succeed, and the machine is ready. attempt is the retry count the
// handshake's event shows; entering ready resets it.
func (d *driver) handshakeToReady(s events.State, gen uint64, attempt int) {
	d.t.Helper()
	d.step(trig(events.TriggerHandshakeSucceeded, gen), want{s, []fsm.Command{cmd(fsm.ListDeclared, gen)},
		ev(s, s, events.TriggerHandshakeSucceeded, "", none, gen, attempt, "")})
	d.step(trig(events.TriggerDiscoverySucceeded, gen), want{events.StateReady, []fsm.Command{cmd(fsm.PublishCatalog, gen)},
		ev(s, events.StateReady, events.TriggerDiscoverySucceeded, "", none, gen, 0, "")})
}

// resume starts a fresh machine with a persisted session (mode blind or
// known) and reports it attached as generation 1: the machine ends in
// probing (blind) or listing-declared (known).
func (d *driver) resume(mode fsm.ResumeMode) {
	d.t.Helper()
	resuming, discovering, work, guard := events.StateResumingBlind, events.StateProbing, fsm.Probe, "resume-blind"
	if mode == fsm.ResumeKnown {
		resuming, discovering, work, guard = events.StateResumingKnown, events.StateListingDeclared, fsm.ListDeclared, "resume-known"
	}
	d.step(fsm.Trigger{Kind: events.TriggerStarted, Resume: mode}, want{resuming, []fsm.Command{attach(1, mode)},
		ev(events.StateIdle, resuming, events.TriggerStarted, guard, none, 1, 0, "")})
	d.step(trig(events.TriggerAttached, 1), want{discovering, []fsm.Command{cmd(work, 1)},
		ev(resuming, discovering, events.TriggerAttached, "", none, 1, 0, "")})
}
