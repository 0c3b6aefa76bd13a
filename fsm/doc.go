// Package fsm is mcpsup's connection state machine: a pure, deterministic
// core on github.com/qmuntal/stateless (DESIGN.md sections 2 and 5).
//
// The shell owns one [Machine] per connection and feeds each fact as a
// [Trigger] to [Machine.Step], which returns an [Outcome]: the transition as
// an events.Event, and the [Command]s to execute, whose results come back as
// triggers stamped with the command's generation. The machine does no I/O,
// reads no clock, starts no goroutine and never fires from inside a
// transition.
//
// The transitions are data ([Table]); one stateless machine is built from
// them and shared by every Machine, and go generate renders
// docs/statechart.md from the same table. A (state, trigger) pair not in the
// table is refused with a [*RejectedError]. States, triggers and reasons are
// package events' constants.
package fsm

//go:generate go run ./internal/gen -o ../docs/statechart.md
