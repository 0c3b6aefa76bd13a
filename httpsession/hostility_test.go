package httpsession_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/mcpsup/mcpsup/httpsession"
)

func TestHostilityTracker(t *testing.T) {
	postOK := httpsession.Exchange{Verb: "POST", Status: 200}
	postDown := httpsession.Exchange{Verb: "POST", TransportErr: assert.AnError}
	atOnce := httpsession.StreamAttempt{End: httpsession.EndEOF, Status: 200}
	refused := httpsession.StreamAttempt{End: httpsession.EndNoAnswer, Err: assert.AnError}
	unavailable := httpsession.StreamAttempt{End: httpsession.EndNotStream, Status: 503}
	tooMany := httpsession.StreamAttempt{End: httpsession.EndNotStream, Status: 429}
	notImplemented := httpsession.StreamAttempt{End: httpsession.EndNotStream, Status: 501}
	forbidden := httpsession.StreamAttempt{End: httpsession.EndNotStream, Status: 403}
	replayRefused := httpsession.StreamAttempt{End: httpsession.EndNotStream, Status: 400, LastEventID: "7", ReplayRefused: true}
	lived := httpsession.StreamAttempt{End: httpsession.EndEOF, Status: 200, Duration: 5 * time.Second}
	delivered := httpsession.StreamAttempt{End: httpsession.EndEOF, Status: 200, Events: 1, Messages: 1}
	primed := httpsession.StreamAttempt{End: httpsession.EndEOF, Status: 200, Events: 1, Retry: time.Second}
	closed := httpsession.StreamAttempt{End: httpsession.EndClosed}
	gone := httpsession.StreamAttempt{End: httpsession.EndNotStream, Status: 404, SessionGone: true}

	// Each step happens a second after the one before it (its record's
	// Start), unless a step sets its own times.
	type step struct {
		x *httpsession.Exchange
		a *httpsession.StreamAttempt
	}
	X := func(x httpsession.Exchange) step { return step{x: &x} }
	A := func(a httpsession.StreamAttempt) step { return step{a: &a} }
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// A POST sent at 0.5s and answered at 1.5s, recorded after an attempt
	// that began at 1s: it was answered while that GET was under way.
	overlapping := httpsession.Exchange{Verb: "POST", Status: 200, Start: base.Add(500 * time.Millisecond), Duration: time.Second}
	early := httpsession.Exchange{Verb: "POST", Status: 200, Start: base, Duration: 500 * time.Millisecond}
	at := func(a httpsession.StreamAttempt, d time.Duration) httpsession.StreamAttempt {
		a.Start = base.Add(d)
		return a
	}
	cases := []struct {
		name    string
		steps   []step
		hostile bool
	}{
		{"three at once with POSTs ok", []step{X(postOK), A(atOnce), X(postOK), A(atOnce), A(atOnce)}, true},
		{"a POST must follow the streak's first attempt", []step{X(postOK), A(atOnce), A(atOnce), A(atOnce), A(atOnce)}, false},
		{"the POST may come last", []step{A(atOnce), A(atOnce), A(atOnce), X(postOK), A(atOnce)}, true},
		{"a POST of an earlier streak does not count", []step{A(atOnce), X(postOK), A(lived), A(atOnce), A(atOnce), A(atOnce)}, false},
		{"an outage is not hostility", []step{X(postOK), A(refused), X(postOK), A(refused), A(refused), A(refused)}, false},
		{"no answer needs a POST after it", []step{A(atOnce), X(postOK), A(atOnce), A(refused), A(atOnce), A(atOnce)}, false},
		{"a POST after the outage re-arms the rule", []step{A(atOnce), X(postOK), A(refused), X(postOK), A(atOnce), A(atOnce)}, true},
		{"answered 503s are an outage", []step{A(unavailable), X(postOK), A(unavailable), X(postOK), A(unavailable), A(unavailable), X(postOK)}, false},
		{"429s are an outage", []step{A(tooMany), X(postOK), A(tooMany), X(postOK), A(tooMany), A(tooMany)}, false},
		{"a 503 needs a POST after it", []step{A(atOnce), X(postOK), A(atOnce), A(unavailable), A(atOnce)}, false},
		{"503s do not count toward the streak", []step{A(atOnce), X(postOK), A(unavailable), X(postOK), A(atOnce)}, false},
		{"a 503 does not reset the streak", []step{A(atOnce), X(postOK), A(atOnce), A(unavailable), X(postOK), A(atOnce)}, true},
		{"501 is a lasting refusal", []step{A(notImplemented), X(postOK), A(notImplemented), A(notImplemented)}, true},
		{"403s while POSTs work", []step{A(forbidden), X(postOK), A(forbidden), A(forbidden)}, true},
		{"refused replays are ignored", []step{A(atOnce), X(postOK), A(replayRefused), A(atOnce), A(replayRefused)}, false},
		{"refused replays do not reset the streak", []step{A(atOnce), X(postOK), A(atOnce), A(replayRefused), A(atOnce)}, true},
		{"two are not enough", []step{A(atOnce), X(postOK), A(atOnce)}, false},
		{"a POST answered while the first GET was under way", []step{A(at(atOnce, time.Second)), X(overlapping), A(atOnce), A(atOnce)}, true},
		{"a POST answered before the first GET began", []step{A(at(atOnce, time.Second)), X(early), A(atOnce), A(atOnce)}, false},
		{"the first POST after a full streak fires it", []step{X(postOK), A(atOnce), A(atOnce), A(atOnce), X(postOK), X(postOK)}, true},
		{"a failed POST after a full streak does not", []step{A(atOnce), A(atOnce), A(atOnce), X(postDown)}, false},
		{"POSTs failing: server down, not hostile", []step{A(atOnce), X(postDown), A(atOnce), A(atOnce)}, false},
		{"a failed POST after a good one", []step{A(atOnce), X(postOK), A(atOnce), X(postDown), A(atOnce)}, false},
		{"no POST seen", []step{A(atOnce), A(atOnce), A(atOnce)}, false},
		{"idle cuts reset the count", []step{A(atOnce), X(postOK), A(atOnce), A(lived), A(atOnce), X(postOK), A(atOnce), A(lived)}, false},
		{"messages reset the count", []step{A(atOnce), X(postOK), A(atOnce), A(delivered), A(atOnce), X(postOK), A(atOnce)}, false},
		{"priming events carry no message", []step{A(primed), X(postOK), A(primed), A(primed)}, true},
		{"client closes do not count", []step{A(atOnce), X(postOK), A(closed), A(closed), A(atOnce)}, false},
		{"a gone session is not hostility", []step{A(atOnce), X(postOK), A(atOnce), A(gone)}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := httpsession.NewHostilityTracker(httpsession.HostilityRule{}, 0)
			fired := 0
			for i, s := range c.steps {
				now := base.Add(time.Duration(i+1) * time.Second)
				if s.x != nil && s.x.Start.IsZero() {
					s.x.Start = now
				}
				if s.a != nil && s.a.Start.IsZero() {
					s.a.Start = now
				}
				if s.x != nil {
					if h.ObserveExchange(*s.x) {
						fired++
					}
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
