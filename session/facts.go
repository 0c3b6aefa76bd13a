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
	// (failure story S5), Why; Off until Until, decided at Since (the
	// persisted resume state keeps Off and Since).
	StreamDecided struct {
		Off          bool
		Why          StreamReason
		Since, Until time.Time
	}
	// EventDropped: an event of the standalone stream was dropped, Why,
	// Bytes of it read; Bound is the bound in bytes it broke
	// (DropOversized); Count counts the session's drops so far.
	EventDropped struct {
		Count, Bytes, Bound int
		Why                 DropReason
	}
	// ResponseDropped: a response to a request of the server was dropped,
	// Bound being already in flight; Count counts the session's drops.
	ResponseDropped struct {
		Count, Bound int
	}
	// LineDropped: a stdio server's stdout line was dropped, Why; Count
	// counts the session's drops. Bound is the line bound (bytes) a longer
	// line broke (DropOversized); RequestID the id, as JSON cut to 64
	// characters, of a response to a request never sent (DropResponse).
	LineDropped struct {
		Count, Bound int
		Why          DropReason
		RequestID    string
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

// DropReason is why a transport dropped a message of the server before
// go-sdk read it; no fact carries the message's own text (the transport
// logs it).
type DropReason string

const (
	DropMalformedLine DropReason = "malformed-line"  // an SSE line without a colon (WHATWG allows it; go-sdk v1.8.0 fails its session)
	DropNotJSONRPC    DropReason = "not-jsonrpc"     // not one JSON-RPC 2.0 message (on stdio: alone on its line)
	DropBatch         DropReason = "batch"           // a JSON-RPC batch on stdio (not served from MCP 2025-06-18 on)
	DropResponse      DropReason = "response"        // a response on the standalone stream (MCP transports), or to an id never sent
	DropOversized     DropReason = "oversized"       // longer than its bound in bytes
	DropTruncated     DropReason = "truncated"       // the stream ended inside the event
	DropTooManyValues DropReason = "too-many-values" // more than go-sdk may decode (msgcheck.Limits)
)

// StreamReason is why the standalone stream decision changed (decision
// record 0011).
type StreamReason string

const (
	StreamHostile    StreamReason = "get-hostile" // the hostility rule fired (httpsession.HostilityRule): off
	StreamRemembered StreamReason = "remembered"  // an Off decision persisted earlier, kept until its memory ends
	StreamExpired    StreamReason = "expired"     // the Off decision's memory ended: on
)

func (EraChanged) fact()      {}
func (StreamRestored) fact()  {}
func (StreamDeclined) fact()  {}
func (StreamDecided) fact()   {}
func (EventDropped) fact()    {}
func (ResponseDropped) fact() {}
func (LineDropped) fact()     {}
func (ProcessExited) fact()   {}
