package events

import (
	"time"

	"github.com/mcpsup/mcpsup/classify"
)

// KindTransition is the [Event.Kind] of a state machine transition, internal
// transitions included.
const KindTransition = "transition"

// Event is one fact about a supervised connection. For a transition event
// (Kind == [KindTransition]) From and To name the states before and after; they
// are equal for an internal transition (an event, no state change), e.g. a
// tool call that failed with a class that does not reconnect (failure story
// S4).
//
// Event is a plain value: copying it is safe and it holds no references into
// the machine that produced it.
type Event struct {
	// Kind says what the event reports; [KindTransition] for transitions.
	Kind string
	// Server names the supervised MCP server, as configured by the host.
	Server string
	// Seq numbers the events of one server from 1, without gaps.
	Seq uint64
	// Time is the time the caller supplied with the trigger (the machine
	// never reads a clock); zero when the caller supplied none.
	Time time.Time
	// From is the state before the transition, e.g. "ready".
	From string
	// To is the state after the transition; equal to From for an internal
	// transition.
	To string
	// Trigger is the fact that caused the transition, e.g. "call-failed".
	Trigger string
	// Guard names the rule that chose this transition (the guards of the
	// matching table row, joined by "+"); empty when the row has no guard.
	Guard string
	// Verdict is the classified failure the trigger carried; the zero
	// verdict (class "none") when the trigger carried none.
	Verdict classify.Verdict
	// Generation is the connection generation after the transition: the
	// number of go-sdk client sessions the supervisor has created.
	Generation uint64
	// Attempt is the retry attempt count after the transition: 0 after a
	// success or a host's reconnect request, n after the n-th scheduled retry.
	Attempt int
	// Reason is why a terminal failed state is terminal ("unauthorized",
	// "canceled", "budget-spent", "churn"); empty otherwise.
	Reason string
}

// Sink receives events. The state machine calls Emit synchronously, from the
// goroutine that drives it, once per transition; an implementation must not
// block for long and must not call back into the machine. Implementations
// used from several machines must be safe for concurrent use.
type Sink interface {
	Emit(Event)
}

// SinkFunc adapts a function to a [Sink].
type SinkFunc func(Event)

// Emit calls f(e).
func (f SinkFunc) Emit(e Event) { f(e) }
