package wire_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/mcpsup/mcpsup/wire"
)

func TestHostilityTracker(t *testing.T) {
	postOK := wire.Exchange{Verb: "POST", Status: 200}
	postDown := wire.Exchange{Verb: "POST", Err: assert.AnError}
	atOnce := wire.StreamAttempt{End: wire.EndEOF, Status: 200}
	refused := wire.StreamAttempt{End: wire.EndNoAnswer, Err: assert.AnError}
	unavailable := wire.StreamAttempt{End: wire.EndNotStream, Status: 503}
	lived := wire.StreamAttempt{End: wire.EndEOF, Status: 200, Duration: 5 * time.Second}
	delivered := wire.StreamAttempt{End: wire.EndEOF, Status: 200, Events: 1, Messages: 1}
	primed := wire.StreamAttempt{End: wire.EndEOF, Status: 200, Events: 1, Retry: time.Second}
	closed := wire.StreamAttempt{End: wire.EndClosed}
	gone := wire.StreamAttempt{End: wire.EndNotStream, Status: 404, SessionGone: true}

	type step struct {
		x *wire.Exchange
		a *wire.StreamAttempt
	}
	X := func(x wire.Exchange) step { return step{x: &x} }
	A := func(a wire.StreamAttempt) step { return step{a: &a} }
	cases := []struct {
		name    string
		steps   []step
		hostile bool
	}{
		{"three at once with POSTs ok", []step{X(postOK), A(atOnce), A(atOnce), A(atOnce)}, true},
		{"an outage is not hostility", []step{X(postOK), A(refused), A(refused), A(refused), A(refused)}, false},
		{"no answer needs a POST after it", []step{X(postOK), A(atOnce), A(refused), A(atOnce), A(atOnce)}, false},
		{"a POST after the outage re-arms the rule", []step{X(postOK), A(atOnce), A(refused), X(postOK), A(atOnce), A(atOnce)}, true},
		{"answered 503s while POSTs work", []step{X(postOK), A(unavailable), A(unavailable), A(unavailable)}, true},
		{"two are not enough", []step{X(postOK), A(atOnce), A(atOnce)}, false},
		{"POSTs failing: server down, not hostile", []step{X(postDown), A(atOnce), A(atOnce), A(atOnce)}, false},
		{"no POST seen", []step{A(atOnce), A(atOnce), A(atOnce)}, false},
		{"idle cuts reset the count", []step{X(postOK), A(atOnce), A(atOnce), A(lived), A(atOnce), A(atOnce), A(lived)}, false},
		{"messages reset the count", []step{X(postOK), A(atOnce), A(atOnce), A(delivered), A(atOnce), A(atOnce)}, false},
		{"priming events carry no message", []step{X(postOK), A(primed), A(primed), A(primed)}, true},
		{"client closes do not count", []step{X(postOK), A(atOnce), A(closed), A(closed), A(atOnce)}, false},
		{"a gone session is not hostility", []step{X(postOK), A(atOnce), A(atOnce), A(gone)}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := wire.NewHostilityTracker(wire.HostilityRule{})
			fired := 0
			for _, s := range c.steps {
				if s.x != nil {
					h.ObserveExchange(*s.x)
				} else if h.ObserveAttempt(*s.a) {
					fired++
				}
			}
			got, reason := h.Hostile()
			assert.Equal(t, c.hostile, got)
			if c.hostile {
				assert.Equal(t, 1, fired)
				assert.NotEmpty(t, reason)
			} else {
				assert.Zero(t, fired)
			}
		})
	}
}
