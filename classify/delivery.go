package classify

import "strconv"

// Delivery is how far a failed request got, told from the wire facts on its
// error: whether the server may have run it, so whether a retry is safe.
// Its String forms are the events package's delivery values.
type Delivery uint8

const (
	DeliveryNotKnown       Delivery = iota // no wire facts and no JSON-RPC answer
	DeliveryNotSent                        // never sent ([NotSentError]) or refused (ECONNREFUSED)
	DeliveryOutcomeUnknown                 // sent, unanswered; it may have run
	DeliveryAnswered                       // a non-2xx status or a JSON-RPC error for its id
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
// verdict: the one rule (DESIGN.md section 3). It reads err with Classify's
// bounded, cycle-safe walk. Safe for concurrent use.
func DeliveryOf(err error, v Verdict) Delivery {
	var f facts
	f.collect(err)
	answered := v.RPC.Present && v.RPC.HasID
	switch {
	case f.sent == nil && f.notSent:
		return DeliveryNotSent
	case f.sent == nil && answered:
		return DeliveryAnswered
	case f.sent == nil && f.written:
		return DeliveryOutcomeUnknown // on a stream transport, no answer
	case f.sent == nil:
		return DeliveryNotKnown
	case v.HTTPStatus != 0 && (v.HTTPStatus < 200 || v.HTTPStatus >= 300), answered:
		return DeliveryAnswered
	case f.sent.Status == 0 && f.refused:
		return DeliveryNotSent // the server never accepted the connection: nothing ran
	}
	return DeliveryOutcomeUnknown
}
