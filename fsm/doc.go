// Package fsm is mcpsup's connection state machine: a pure, deterministic
// core built on github.com/qmuntal/stateless (DESIGN.md sections 2 and 5).
//
// The shell (the supervisor) owns one [Machine] per connection from one
// goroutine. It feeds each fact as a [Trigger] to [Machine.Step], which
// returns an [Outcome] (etcd-io/raft's Ready): the transition, as an
// events.Event for the shell to stamp and emit, and the [Command]s for it
// to execute in order, feeding their results back as triggers stamped with
// the command's generation. The machine performs no I/O, reads no clock
// ([Trigger.Now] supplies time), starts no goroutine, emits nothing and
// never fires a trigger from inside a transition.
//
// The transitions are declared once, as data ([Table]): from, trigger, named
// guards, to, commands. One stateless machine is built from that table at
// package initialization (FiringImmediate, external state storage; Permit
// for transitions, Ignore for ignores and internal transitions; no
// PermitDynamic) and shared, read-only, by every Machine: a Machine is only
// its connection's state, which stateless reads and writes through the
// context each Step fires it with. [Statechart] renders docs/statechart.md from the same
// table. Any (state, trigger) pair not in the table is refused with a
// [*RejectedError].
//
// States, trigger kinds and reasons are the events package's constants,
// used here by their events names (events.StateFailed,
// events.TriggerStarted), so an event's fields compare with them directly:
// e.To == events.StateFailed. Ignored triggers produce no event.
package fsm

//go:generate go run ./internal/gen -o ../docs/statechart.md
