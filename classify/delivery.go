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
	// DeliveryNotKnown: no wire facts and no JSON-RPC answer.
	DeliveryNotKnown Delivery = iota
	// DeliveryNotSent: never sent ([NotSentError]) or refused
	// (ECONNREFUSED).
	DeliveryNotSent
	// DeliveryOutcomeUnknown: sent, unanswered; it may have run.
	DeliveryOutcomeUnknown
	// DeliveryAnswered: a non-2xx status or a JSON-RPC error for its id.
	DeliveryAnswered
)

var deliveryNames = [...]string{"not-known", "not-sent", "outcome-unknown", "answered"}

// String returns "not-known", "not-sent", "outcome-unknown" or "answered".
func (d Delivery) String() string {
	if int(d) < len(deliveryNames) {
		return deliveryNames[d]
	}
	return "delivery(" + strconv.Itoa(int(d)) + ")"
}

// DeliveryOf tells how far the request whose error is err got, v being its
// verdict: the one rule (DESIGN.md section 3). Safe for concurrent use.
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
