package httpsession

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// maxLostRounds bounds the rounds a conn keeps for a call sent again.
const maxLostRounds = 16

// rounds keeps the last round of each multi-round-trip call (tools/call,
// prompts/get, resources/read with inputResponses or requestState) that got
// no answer of the server's, and sends it in place of the first round
// go-sdk sends again: "the client MUST echo back the exact value" of
// requestState (mrtr.mdx, Client Requirements; decision record 0006). The
// oldest of maxLostRounds is dropped first. Safe for concurrent use.
type rounds struct {
	lost recent[json.RawMessage] // by roundCall
}

// roundCall is the call a request of method with params belongs to, and
// whether params carry a round's state; ok is false for any other method or
// params that are not an object.
func roundCall(method string, params json.RawMessage) (call string, later, ok bool) {
	switch method {
	case "tools/call", "prompts/get", "resources/read":
	default:
		return "", false, false
	}
	var p map[string]json.RawMessage
	if json.Unmarshal(params, &p) != nil {
		return "", false, false
	}
	_, responses := p["inputResponses"]
	_, state := p["requestState"]
	delete(p, "inputResponses")
	delete(p, "requestState")
	b, err := json.Marshal(p) // keys sorted: one spelling per call
	if err != nil {
		return "", false, false
	}
	return method + " " + string(b), responses || state, true
}

// mayBeRound is roundCall's cheap test: false when params cannot carry a
// round's state.
func mayBeRound(params json.RawMessage) bool {
	return bytes.Contains(params, []byte(`"requestState"`)) || bytes.Contains(params, []byte(`"inputResponses"`))
}

// resume returns the params r goes out with (a kept round of r's call when
// r is its first round), and deliver, made to keep them first when the
// answer go-sdk gets for r is one the conn wrote.
func (rs *rounds) resume(r *jsonrpc.Request, deliver func(jsonrpc.Message)) (json.RawMessage, func(jsonrpc.Message)) {
	params := r.Params
	if rs.lost.len() == 0 && !mayBeRound(params) {
		return params, deliver
	}
	call, later, ok := roundCall(r.Method, params)
	if !ok {
		return params, deliver
	}
	if !later {
		p, found := rs.lost.take(call)
		if !found {
			return params, deliver
		}
		params = p
	}
	return params, func(msg jsonrpc.Message) {
		if resp, ok := msg.(*jsonrpc.Response); ok && resp.ID == r.ID {
			if e, ok := errors.AsType[*jsonrpc.Error](resp.Error); ok && e.Code == CodeHTTPAnswer {
				rs.lost.take(call) // one round per call: the latest
				rs.lost.add(call, params, maxLostRounds)
			}
		}
		deliver(msg)
	}
}
