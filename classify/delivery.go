package classify

import (
	"errors"
	"strconv"
	"syscall"
)

// Delivery is how far a failed request got, told from the wire facts on its
// error: whether the server may have run it, so whether a retry is safe.
// Its String forms are the events package's delivery values.
type Delivery uint8

const (
	// DeliveryNotKnown: the error carries neither wire facts (no
	// wire.FactsMiddleware on the client) nor a JSON-RPC answer.
	DeliveryNotKnown Delivery = iota
	// DeliveryNotSent: the request never reached a server: go-sdk failed it
	// unsent ([NotSentError]), or the connection was refused
	// (syscall.ECONNREFUSED with no HTTP answer).
	DeliveryNotSent
	// DeliveryOutcomeUnknown: the request went out but no answer came
	// (reset, EOF, timeout, cancellation); it may have run.
	DeliveryOutcomeUnknown
	// DeliveryAnswered: a server or a gateway answered with an error: a
	// non-2xx HTTP status, or a JSON-RPC error answering the request by id.
	DeliveryAnswered
)

// String returns "not-known", "not-sent", "outcome-unknown" or "answered".
func (d Delivery) String() string {
	switch d {
	case DeliveryNotKnown:
		return "not-known"
	case DeliveryNotSent:
		return "not-sent"
	case DeliveryOutcomeUnknown:
		return "outcome-unknown"
	case DeliveryAnswered:
		return "answered"
	}
	return "delivery(" + strconv.Itoa(int(d)) + ")"
}

// DeliveryOf tells how far the request whose error is err got; v is
// Classify's verdict of err (its HTTP status and JSON-RPC facts). A
// *[HTTPError] says the request went out; a *[NotSentError] without one
// says it did not; a *[WrittenError] (a stdio request) says it went out. It
// is the one rule for the supervisor's CallError and the otel spans; it
// reads only err's types and v, and is safe for concurrent use.
func DeliveryOf(err error, v Verdict) Delivery {
	answered := v.RPC.Present && v.RPC.HasID
	facts, sent := errors.AsType[*HTTPError](err)
	switch {
	case !sent:
		if _, unsent := errors.AsType[*NotSentError](err); unsent {
			return DeliveryNotSent
		}
		if answered {
			return DeliveryAnswered
		}
		if _, written := errors.AsType[*WrittenError](err); written {
			return DeliveryOutcomeUnknown // on a stream transport, no answer
		}
		return DeliveryNotKnown
	case v.HTTPStatus != 0 && (v.HTTPStatus < 200 || v.HTTPStatus >= 300):
		return DeliveryAnswered
	case answered:
		return DeliveryAnswered
	case facts.Status == 0 && errors.Is(err, syscall.ECONNREFUSED):
		return DeliveryNotSent // the server never accepted the connection: nothing ran
	}
	return DeliveryOutcomeUnknown
}
