// Package events carries what a supervised MCP connection does, as values a
// host can show and record (DESIGN.md section 4).
//
// This file set is the core: the transition [Event] the state machine reports
// for every transition and internal transition, the [Sink] it reports to, and
// a [Recorder] for tests. Package events is a leaf: it imports only classify
// and the standard library, so states and triggers appear here as their
// kebab-case names, never as fsm types.
package events
