package classify_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mcpsup/mcpsup/classify"
)

// SessionGone is the rule the wire layer asks and the one the verdict
// follows: they never disagree.
func TestSessionGoneIsTheVerdictsRule(t *testing.T) {
	rpc := func(code int64, hasID bool) classify.RPCError {
		return classify.RPCError{Present: true, Code: code, Message: "m", HasID: hasID}
	}
	cases := []struct {
		name string
		e    classify.HTTPError
		gone bool
	}{
		{"404 with session id", classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", RequestID: "3", Status: 404, SessionIDSent: true}}, true},
		{"404 without session id", classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", RequestID: "3", Status: 404}}, false},
		{"404 answering by the request's id", classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", RequestID: "3", Status: 404, SessionIDSent: true, RPC: rpc(-32602, true), BodyRPCID: "3"}}, false},
		{"404 answering another id", classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", RequestID: "3", Status: 404, SessionIDSent: true, RPC: rpc(-32602, true), BodyRPCID: "4"}}, true},
		{"400 null-id -32000", classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", RequestID: "3", Status: 400, SessionIDSent: true, RPC: rpc(-32000, false), BodyRPCID: "null"}}, true},
		{"400 null-id -32000 without session id", classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", RequestID: "3", Status: 400, RPC: rpc(-32000, false)}}, false},
		{"400 -32000 with the request's id", classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", RequestID: "3", Status: 400, SessionIDSent: true, RPC: rpc(-32000, true), BodyRPCID: "3"}}, false},
		// A refused credential is never the session's end (DESIGN.md 7):
		// the verdict is unauthorized, so the session must stay.
		{"401 null-id -32000", classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", RequestID: "3", Status: 401, SessionIDSent: true, RPC: rpc(-32000, false), BodyRPCID: "null"}}, false},
		{"403 insufficient_scope null-id -32000", classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", RequestID: "3", Status: 403, SessionIDSent: true, RPC: rpc(-32000, false), BodyRPCID: "null", WWWAuthenticate: `Bearer error="insufficient_scope"`}}, false},
		{"403 null-id -32000", classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", RequestID: "3", Status: 403, SessionIDSent: true, RPC: rpc(-32000, false), BodyRPCID: "null"}}, true},
		// A 404's -32601 that answers no request by id does not keep the
		// session: the 404 rule holds, and the verdict with it.
		{"404 -32601 without id", classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", RequestID: "3", Status: 404, SessionIDSent: true, RPC: rpc(-32601, false)}}, true},
		{"404 -32601 with the request's id", classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", RequestID: "3", Status: 404, SessionIDSent: true, RPC: rpc(-32601, true), BodyRPCID: "3"}}, false},
		{"500 with session id", classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", RequestID: "3", Status: 500, SessionIDSent: true}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.gone, c.e.SessionGone())
			v := classify.Classify(context.Background(), &c.e)
			assert.Equal(t, c.gone, v.Class == classify.SessionExpired, "verdict %v", v)
		})
	}
}
