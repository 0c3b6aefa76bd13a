package httpsession

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpsup/mcpsup/msgcheck"
)

// maxRetryField bounds the SSE retry field's value.
const maxRetryField = 24 * time.Hour

// maxDroppedRun is how many events in a row a standalone stream attempt may
// drop before the keeper ends it as garbage (and re-dials on the backoff):
// it bounds what one attempt reads and reports without a message.
const maxDroppedRun = 16

// ErrStreamEvent is matched (errors.Is) by every [*EventError].
var ErrStreamEvent = errors.New("mcpsup/httpsession: standalone stream event dropped")

// DropReason says why the keeper dropped an event of the standalone stream.
type DropReason uint8

// Why an event is dropped.
const (
	// DropMalformedLine: a line of the event is neither a comment nor a
	// field (it has no colon; WHATWG HTML, server-sent events, allows it,
	// go-sdk v1.8.0 fails the session on it).
	DropMalformedLine DropReason = iota + 1
	// DropNotJSONRPC: the event's data is not one JSON-RPC 2.0 message
	// (go-sdk's jsonrpc.DecodeMessage refuses it).
	DropNotJSONRPC
	// DropResponse: the data is a JSON-RPC response; the standalone stream
	// carries only requests and notifications (MCP spec, transports,
	// listening for messages from the server).
	DropResponse
	// DropOversized: the event outgrew [StreamConfig.MaxEventBytes]; the
	// keeper reads no more of it and ends the attempt.
	DropOversized
	// DropTruncated: the stream ended inside the event.
	DropTruncated
	// DropTooManyValues: the message holds more than go-sdk may decode
	// ([msgcheck.Limits]: more JSON values than [Config.MaxJSONValues], which
	// go-sdk would decode at some 100 bytes each, or a request more
	// messages than [Config.MaxMessages]).
	DropTooManyValues
)

func (r DropReason) String() string {
	switch r {
	case DropMalformedLine:
		return "malformed-line"
	case DropNotJSONRPC:
		return "not-jsonrpc"
	case DropResponse:
		return "response"
	case DropOversized:
		return "oversized"
	case DropTruncated:
		return "truncated"
	case DropTooManyValues:
		return "too-many-values"
	}
	return "unknown"
}

// EventError records one event of the standalone stream that the keeper did
// not hand to go-sdk. The session is unaffected.
type EventError struct {
	// Reason says what was wrong.
	Reason DropReason
	// Bytes is how many bytes of the event were read (for DropOversized:
	// up to where the keeper stopped reading).
	Bytes int
	// Detail names the fault: the start of the malformed line (quoted, at
	// most 64 bytes), the decoder's error (at most 200 bytes) or the bound
	// passed; "" when the reason says all.
	Detail string
	// Attempt is the [StreamAttempt.Seq] the event came on.
	Attempt int
}

func (e *EventError) Error() string {
	s := fmt.Sprintf("mcpsup/httpsession: standalone stream event dropped (%s, %d bytes)", e.Reason, e.Bytes)
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Is reports target == ErrStreamEvent.
func (e *EventError) Is(target error) bool { return target == ErrStreamEvent }

// sseFilter reads a text/event-stream with an [eventReader] and hands
// go-sdk only the events that carry one JSON-RPC request or notification,
// each decoded once into the message go-sdk gets. A line without a colon,
// data that is no such message and an event past its size limit are
// dropped and reported, never handed on. Ids and retry fields are kept for
// the keeper's re-dial.
//
// It holds at most events.max bytes of one event (its partial line
// included); comment lines between events do not count.
type sseFilter struct {
	events eventReader     // pushed; events.max bounds one event (0: no bound)
	limits msgcheck.Limits // what go-sdk may decode of one message; zero fields: no bound

	bad    *EventError // a malformed line: the current event is dropped at its end
	run    int         // events dropped in a row
	lastID string      // id of the last event that had one: the re-dial's Last-Event-ID
}

// filtered is what one push produced.
type filtered struct {
	events   int           // whole events with a field
	messages int           // of them, those handed on
	acks     int           // of them, listen acknowledgements (listen.go)
	drops    []*EventError // events dropped
	garbage  bool          // the attempt must end: an oversized event, or maxDroppedRun drops in a row
}

// push parses p, appends the messages to hand on to out and returns it.
// After a result with garbage set, the caller ends the stream and calls
// reset.
func (f *sseFilter) push(p []byte, out []jsonrpc.Message, r *filtered) []jsonrpc.Message {
	f.events.feed(p)
	for !r.garbage {
		ev, err := f.events.Next()
		switch err := err.(type) {
		case nil:
			out = f.dispatch(ev, out, r)
		case *sseLineError:
			if f.bad == nil {
				f.bad = &EventError{Reason: DropMalformedLine, Detail: fmt.Sprintf("line without a colon: %q", err.Start)}
			}
		case *eventTooLargeError:
			f.report(r, &EventError{Reason: DropOversized, Bytes: err.Read, Detail: fmt.Sprintf("more than %d bytes", err.Max)})
			r.garbage = true
			f.reset()
		default: // errNeedInput: p is read
			return out
		}
	}
	return out
}

// dispatch takes one whole event.
func (f *sseFilter) dispatch(ev sseEvent, out []jsonrpc.Message, r *filtered) []jsonrpc.Message {
	bad := f.bad
	f.bad = nil
	r.events++
	if ev.IDSet {
		f.lastID = ev.ID // also past a dropped event: the re-dial does not ask for it again
	}
	if bad != nil {
		bad.Bytes = ev.Size
		f.report(r, bad)
		return out
	}
	if !ev.message() {
		// No message (a SEP-1699 priming event), or an event type go-sdk
		// skips: nothing to hand on, nothing wrong.
		return out
	}
	msg, err := decodeMessage(ev.Data)
	if err != nil {
		f.report(r, &EventError{Reason: DropNotJSONRPC, Bytes: ev.Size, Detail: cutDetail(err.Error())})
		return out
	}
	if _, isResponse := msg.(*jsonrpc.Response); isResponse {
		f.report(r, &EventError{Reason: DropResponse, Bytes: ev.Size})
		return out
	}
	if req, ok := msg.(*jsonrpc.Request); ok { // responses were dropped above
		if problem := f.limits.Problem(req.Method, ev.Data, req.Params); problem != "" {
			f.report(r, &EventError{Reason: DropTooManyValues, Bytes: ev.Size, Detail: problem})
			return out
		}
	}
	req := msg.(*jsonrpc.Request)
	f.run = 0
	r.messages++
	if req.Method == methodListenAck {
		r.acks++
	}
	own := *req
	own.Params = bytes.Clone(req.Params) // they alias the event's data
	return append(out, &own)
}

// report records a dropped event; maxDroppedRun in a row make the stream
// garbage.
func (f *sseFilter) report(r *filtered, e *EventError) {
	r.drops = append(r.drops, e)
	f.run++
	if f.run >= maxDroppedRun {
		r.garbage = true
	}
}

// cut ends the stream: an event under way is dropped (reported as
// DropTruncated when it had a field or a partial line).
func (f *sseFilter) cut(r *filtered) {
	if n, underWay := f.events.pending(); underWay {
		r.drops = append(r.drops, &EventError{Reason: DropTruncated, Bytes: n})
	}
	f.reset()
}

// reset forgets the current event and partial line, for the next stream;
// lastID and the retry field stay.
func (f *sseFilter) reset() {
	f.events.reset()
	f.bad, f.run = nil, 0
}

// cutDetail bounds a decoder's error text in an EventError.
func cutDetail(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}
