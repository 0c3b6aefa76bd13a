package fsm

import (
	"context"
	"errors"

	"github.com/qmuntal/stateless"

	"github.com/mcpsup/mcpsup/events"
)

// engine is the one stateless machine every [Machine] fires, built once
// from the table and only read after (decision 0022); the state it reads and
// writes is the Machine's, carried by FireCtx's context. Internal
// transitions are stateless ignores: Step applies every row's effects.
var engine = newEngine()

func newEngine() *stateless.StateMachine {
	sm := stateless.NewStateMachineWithExternalStorage(
		func(ctx context.Context) (stateless.State, error) {
			m := machineOf(ctx)
			if m == nil {
				return nil, errNoMachine
			}
			return m.st, nil
		},
		func(ctx context.Context, s stateless.State) error {
			machineOf(ctx).st = s.(events.State) // only a Step's fire sets a state
			return nil
		},
		stateless.FiringImmediate)
	for i, r := range table {
		sc := sm.Configure(r.From)
		var guards []stateless.GuardFunc
		if len(r.Guards) > 0 {
			guards = []stateless.GuardFunc{rowGuard(i)}
		}
		if r.Ignore || r.Internal() {
			sc.Ignore(r.Trigger, guards...)
		} else {
			sc.Permit(r.Trigger, r.To, guards...)
		}
	}
	sm.OnUnhandledTrigger(func(_ context.Context, s stateless.State, k stateless.Trigger, _ []string) error {
		return rejected(s.(events.State), k.(events.Trigger))
	})
	return sm
}

// rowGuard is the stateless guard of table row i: all its guards pass.
func rowGuard(i int) stateless.GuardFunc {
	return func(ctx context.Context, _ ...any) bool { return machineOf(ctx).passes(i) }
}

type machineKey struct{}

// machineOf returns the machine a Step's context carries; nil for any other
// context (stateless's ToGraph asks for the state with context.Background).
func machineOf(ctx context.Context) *Machine {
	m, _ := ctx.Value(machineKey{}).(*Machine)
	return m
}

// errNoMachine: the engine was asked for a state outside a Step.
var errNoMachine = errors.New("fsm: the shared engine holds no state; a Machine's Step supplies it")
