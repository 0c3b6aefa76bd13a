package session

import "time"

// Fact is a typed observation a transport reports through Spec.Observe, for
// an event; none ends the session.
type Fact interface{ fact() }

type (
	// EraChanged: the era the next handshake starts with changed; Detail
	// holds protocol versions and rule names only.
	EraChanged struct{ Detail string }
	// StreamRestored: the standalone stream came back after a gap in which
	// list_changed notifications may have been lost.
	StreamRestored struct{}
	// StreamDeclined: the server declined the session's standalone stream
	// with an HTTP answer (Status, its Content-Type).
	StreamDeclined struct {
		Status      int
		ContentType string
	}
	// StreamDecided: whether sessions open the standalone stream changed
	// (failure story S5); persisted with the resume state.
	StreamDecided struct {
		Off bool
		// Why names the rule that decided.
		Why          string
		Since, Until time.Time
	}
	// EventDropped: an event of the standalone stream was dropped as
	// malformed or over a bound; Count counts the session's drops so far.
	EventDropped struct {
		Count int
		Err   error
	}
	// ResponseDropped: a response to a request of the server was dropped,
	// Bound being already in flight; Count counts the session's drops.
	ResponseDropped struct {
		Count, Bound int
	}
	// LineDropped: a stdio server's stdout line was dropped (not a JSON-RPC
	// message, or over the line bound); Count counts the session's drops.
	LineDropped struct {
		Count int
		Why   string
	}
	// ProcessExited: a stdio server's process exited; Err is its
	// *stdio.ProcessExitError, its stderr tail masked.
	ProcessExited struct{ Err error }
)

func (EraChanged) fact()      {}
func (StreamRestored) fact()  {}
func (StreamDeclined) fact()  {}
func (StreamDecided) fact()   {}
func (EventDropped) fact()    {}
func (ResponseDropped) fact() {}
func (LineDropped) fact()     {}
func (ProcessExited) fact()   {}
