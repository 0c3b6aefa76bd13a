package fsm

import (
	"context"
	"errors"

	"github.com/qmuntal/stateless"
)

// engine is the one stateless machine every [Machine] steps through, built
// once from the table and only read after: stateless keeps no per-fire state
// under FiringImmediate, so Machines may fire it concurrently. The state it
// reads and writes is the Machine's, carried by the context of FireCtx.
//
// Internal transitions are stateless ignores (no entry, exit or action):
// Step, not stateless, applies every row's effects and emits its event, and
// nothing fires from inside a callback.
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
			m := machineOf(ctx)
			if m == nil {
				return errNoMachine
			}
			m.st = s.(stateID)
			return nil
		},
		stateless.FiringImmediate)
	for i, r := range table {
		sc := sm.Configure(ids[i].from)
		var guards []stateless.GuardFunc
		if len(r.Guards) > 0 {
			guards = []stateless.GuardFunc{func(ctx context.Context, _ ...any) bool { return machineOf(ctx).passes(i) }}
		}
		k := ids[i].trigger
		if r.Ignore || r.Internal() {
			sc.Ignore(k, guards...)
		} else {
			sc.Permit(k, ids[i].to, guards...)
		}
	}
	sm.OnUnhandledTrigger(func(_ context.Context, s stateless.State, k stateless.Trigger, _ []string) error {
		return rejected(stateList[s.(stateID)], triggerList[k.(triggerID)])
	})
	return sm
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
