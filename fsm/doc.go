// Package fsm is mcpsup's connection state machine: a pure, deterministic
// core built on github.com/qmuntal/stateless (DESIGN.md sections 2 and 5).
//
// The shell (the supervisor) owns one [Machine] from one goroutine. It feeds
// each fact as a [Trigger] to [Machine.Step] and executes the [Command]s
// returned, in order, feeding their results back as triggers stamped with
// the command's generation. The machine performs no I/O, reads no clock
// ([Trigger.Now] supplies time), starts no goroutine and never fires a
// trigger from inside a transition.
//
// The transitions are declared once, as data ([Table]): from, trigger, named
// guards, to, commands. [New] builds the stateless machine from that table
// (FiringQueued; Permit, InternalTransition and Ignore; no PermitDynamic),
// and [Statechart] renders docs/statechart.md from it. Any (state, trigger)
// pair not in the table is refused with a [*RejectedError].
//
// Every transition and internal transition is reported to the configured
// events.Sink as an events.Event; ignored triggers are not.
package fsm

//go:generate go run ./internal/gen -o ../docs/statechart.md
