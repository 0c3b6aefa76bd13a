package fsm_test

import (
	"context"
	"testing"
	"time"

	"github.com/qmuntal/stateless"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/fsm"
)

func readyMachine(b *testing.B) *fsm.Machine {
	m := fsm.New(fsm.Config{MaxSessions: 1 << 20})
	for _, tr := range []fsm.Trigger{{Kind: events.TriggerStarted}, {Kind: events.TriggerHandshakeSucceeded, Generation: 1}, {Kind: events.TriggerDiscoverySucceeded, Generation: 1}} {
		if _, err := m.Step(tr); err != nil {
			b.Fatal(err)
		}
	}
	return m
}

// BenchmarkStep measures one Step of the hottest path left: a re-list
// while ready (an internal transition with its event and command).
func BenchmarkStep(b *testing.B) {
	m := readyMachine(b)
	tr := fsm.Trigger{Kind: events.TriggerCatalogListed, Generation: 1, Now: t0}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Step(tr); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStepReconnect measures a full reconnect cycle, three Steps per
// op: session died, handshake succeeded, discovery succeeded.
func BenchmarkStepReconnect(b *testing.B) {
	m := readyMachine(b)
	now := t0
	dead := classify.Verdict{Class: classify.Transport}
	b.ReportAllocs()
	for b.Loop() {
		now = now.Add(time.Hour)
		gen := m.Generation()
		for _, tr := range []fsm.Trigger{
			{Kind: events.TriggerSessionDied, Generation: gen, Verdict: dead, Now: now},
			{Kind: events.TriggerHandshakeSucceeded, Generation: gen + 1, Now: now},
			{Kind: events.TriggerDiscoverySucceeded, Generation: gen + 1, Now: now},
		} {
			if _, err := m.Step(tr); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkNew measures what one connection's machine costs to create.
func BenchmarkNew(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = fsm.New(fsm.Config{})
	}
}

// BenchmarkStatelessAlone fires qmuntal/stateless alone with a trigger of
// BenchmarkStep's shape: external state storage read through the context,
// immediate firing, and four guarded rows of one (state, trigger), the
// first an ignore that passes, the guards reading one field. It is the
// engine's own cost on the host for this table, which a Step, built on it,
// cannot go below; figure 6 prints it beside BenchmarkStep.
func BenchmarkStatelessAlone(b *testing.B) {
	type state uint8
	type trigger uint8
	type key struct{}
	type conn struct {
		st    stateless.State
		class classify.Class
	}
	c := &conn{st: state(1), class: classify.ServerError}
	ctx := context.WithValue(context.Background(), key{}, c)
	of := func(ctx context.Context) *conn { return ctx.Value(key{}).(*conn) }
	sm := stateless.NewStateMachineWithExternalStorage(
		func(ctx context.Context) (stateless.State, error) { return of(ctx).st, nil },
		func(ctx context.Context, s stateless.State) error { of(ctx).st = s; return nil },
		stateless.FiringImmediate)
	is := func(cl classify.Class) stateless.GuardFunc {
		return func(ctx context.Context, _ ...any) bool { return of(ctx).class == cl }
	}
	sm.Configure(state(1)).
		Ignore(trigger(1), is(classify.ServerError)).
		Permit(trigger(1), state(2), is(classify.SessionExpired)).
		Permit(trigger(1), state(3), is(classify.Unauthorized)).
		Ignore(trigger(1), is(classify.Transport))
	b.ReportAllocs()
	for b.Loop() {
		if err := sm.FireCtx(ctx, trigger(1)); err != nil {
			b.Fatal(err)
		}
	}
}
