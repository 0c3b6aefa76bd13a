package fsm

import (
	"context"
	"errors"
	"time"

	"github.com/qmuntal/stateless"
)

// engine is the one stateless machine every [Machine] steps through. It is
// built once, at package initialization, from the table, and never
// configured again. After configuration stateless only reads it: its state
// and trigger maps are looked up under its own RWMutex for reading, its
// callbacks and firing mode (FiringImmediate: an atomic counter, no queue)
// hold no per-fire state. So any number of Machines may fire it at once from
// their own goroutines. The state it reads and writes is the Machine's,
// found in the context passed to FireCtx ([stepContext]); so are the
// extended state and the trigger the guards read.
//
// Immediate firing is safe because nothing fires inside a callback: the
// guards only read (a passing one records its row), and Step applies the
// row's effects after FireCtx returns.
//
// Internal transitions (a row whose To is its From) are configured as
// stateless ignores: an internal transition without entry, exit or action
// is what stateless's Ignore is, and Step, not stateless, applies every
// row's effects and emits its event. The alternatives cost the hottest path
// (a call failure that keeps the session): PermitReentry runs the exit and
// entry of the state, a second state lookup and the state setter (a fifth
// of a Step); InternalTransition wraps the context and looks the handler up
// twice (three allocations more).
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
			// One guard function per row, not per Guard: stateless sizes a
			// buffer by a row's guard count and reuses it for the next row
			// only when that one has no more guards.
			guards = []stateless.GuardFunc{rowGuard(i)}
		}
		k := ids[i].trigger
		switch {
		case r.Ignore, r.Internal():
			sc.Ignore(k, guards...)
		default:
			sc.Permit(k, ids[i].to, guards...)
		}
	}
	sm.OnUnhandledTrigger(func(_ context.Context, s stateless.State, k stateless.Trigger, _ []string) error {
		return rejected(stateList[s.(stateID)], triggerList[k.(triggerID)])
	})
	return sm
}

// rowGuard is the stateless guard of table row i: all its guards pass. A
// passing guard records its row for [Machine.rowTaken]; guards stay pure
// otherwise, and at most one row of a (state, trigger) passes.
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

// stepContext is the context a Machine fires the engine with: it carries the
// machine to the state accessors, guards and callbacks. It is one pointer,
// so passing it as a context.Context does not allocate. It is never
// canceled and has no deadline.
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

// machineOf returns the machine a stepContext carries, also through a
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
