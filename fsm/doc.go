// Package fsm is mcpsup's connection state machine: a pure, deterministic
// core on github.com/qmuntal/stateless (DESIGN.md sections 2 and 5).
//
// The shell feeds each fact as a [Trigger] to its connection's
// [Machine.Step], which returns the transition as an events.Event and the
// [Command]s to execute, whose results come back as triggers stamped with
// the command's generation. The machine does no I/O, reads no clock and
// starts no goroutine. The transitions are data ([Table]), from which one
// shared stateless machine is built and docs/statechart.md generated; a
// (state, trigger) pair not in the table is a [*RejectedError].
package fsm

//go:generate go run ./internal/gen -o ../docs/statechart.md
