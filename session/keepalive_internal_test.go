package session

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mcpsup/mcpsup/classify"
)

// TestJudgePing pins the keepalive rule for every class.
func TestJudgePing(t *testing.T) {
	want := map[classify.Class]pingOutcome{
		classify.Transport:      pingDead,
		classify.SessionExpired: pingDead,
		classify.MethodNotFound: pingStop,
		classify.Canceled:       pingStop,
	}
	for _, c := range classify.Classes() {
		w, ok := want[c]
		if !ok {
			w = pingKeep // unauthorized, rate-limited, server-error, forbidden, application, protocol, timeout (once), unknown
		}
		assert.Equal(t, w, judgePing(classify.Verdict{Class: c}, 1), "%s", c)
	}
	assert.Equal(t, pingDead, judgePing(classify.Verdict{Class: classify.Timeout}, maxPingTimeouts), "unanswered twice in a row")
}
