package session

import "time"

// Fact is a typed observation a transport reports through Spec.Observe, for
// an event; none ends the session.
type Fact interface{ fact() }

type (
	// EraChanged: the era the next handshake starts with changed From one
	// protocol version To another ("" is neither: discover first), Why, by
	// the answer of Method (HTTP Status, JSON-RPC Code; 0 when none).
	EraChanged struct {
		From, To string
		Why      EraReason
		Method   string
		Status   int
		Code     int64
	}
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
	// LineDropped: a stdio server's stdout line was dropped; Count counts
	// the session's drops. Bound is the line bound (bytes) a longer line
	// broke; RequestID the id, as JSON cut to 64 characters, of a response
	// to a request never sent; otherwise Why says what else was wrong,
	// quoting the line's start (foreign text, bounded).
	LineDropped struct {
		Count, Bound int
		RequestID    string
		Why          string
	}
	// ProcessExited: a stdio server's process exited; Err is its
	// *stdio.ProcessExitError, its stderr tail masked.
	ProcessExited struct{ Err error }
)

// EraReason is why the era changed (decision record 0013).
type EraReason string

const (
	// EraDiscoverAnswered: server/discover answered again after the 2025
	// fallback.
	EraDiscoverAnswered EraReason = "discover-answered"
	// EraDiscoverRefused: server/discover was refused; go-sdk fell back to
	// initialize.
	EraDiscoverRefused EraReason = "discover-refused"
	// EraDiscoverUnsupported: server/discover answered 2xx without
	// 2026-07-28 among its supportedVersions.
	EraDiscoverUnsupported EraReason = "discover-unsupported"
	// EraRefusedOpening, EraRefusedLive: a request of a session still
	// opening, or of one that had served, was refused by an error of
	// another era; the next session discovers again.
	EraRefusedOpening EraReason = "refused-opening"
	EraRefusedLive    EraReason = "refused-live"
)

func (EraChanged) fact()      {}
func (StreamRestored) fact()  {}
func (StreamDeclined) fact()  {}
func (StreamDecided) fact()   {}
func (EventDropped) fact()    {}
func (ResponseDropped) fact() {}
func (LineDropped) fact()     {}
func (ProcessExited) fact()   {}
