package fsm

import (
	"context"
	"errors"
	"time"

	"github.com/qmuntal/stateless"
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
			guards = []stateless.GuardFunc{rowGuard(i)}
		}
		k := ids[i].trigger
		if r.Ignore || r.Internal() {
			sc.Ignore(k, guards...)
		} else {
			sc.Permit(k, ids[i].to, guards...)
		}
	}
	sm.OnUnhandledTrigger(func(_ context.Context, s stateless.State, k stateless.Trigger, _ []string) error {
		return rejected(s.(stateID), triggerList[k.(triggerID)])
	})
	return sm
}

// rowGuard is the stateless guard of table row i: all its guards pass. A
// passing one records its row for [Machine.rowTaken] (decision 0022).
func rowGuard(i int) stateless.GuardFunc {
	return func(ctx context.Context, _ ...any) bool {
		m := machineOf(ctx)
		if !m.passes(i) {
			return false
		}
		m.passed = i
		return true
	}
}

// stepContext carries a Machine to the engine's state accessors and guards:
// one pointer, so passing it as a context.Context does not allocate. It is
// never canceled.
type stepContext struct{ m *Machine }

type machineKey struct{}

func (stepContext) Deadline() (time.Time, bool) { return time.Time{}, false }
func (stepContext) Done() <-chan struct{}       { return nil }
func (stepContext) Err() error                  { return nil }
func (c stepContext) Value(key any) any {
	if key == (machineKey{}) {
		return c.m
	}
	return nil
}

// machineOf returns the machine a Step's context carries, also through a
// context stateless derived from it; nil for any other context (stateless's
// ToGraph asks for the state with context.Background).
func machineOf(ctx context.Context) *Machine {
	if c, ok := ctx.(stepContext); ok {
		return c.m
	}
	m, _ := ctx.Value(machineKey{}).(*Machine)
	return m
}

// errNoMachine: the engine was asked for a state outside a Step.
var errNoMachine = errors.New("fsm: the shared engine holds no state; a Machine's Step supplies it")
