package hub

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
)

// A call its caller gave up on is no failure of the server's: Health's
// verdict keeps the server's last one.
func TestHealthVerdictIgnoresCanceledCalls(t *testing.T) {
	h := New(Config{})
	defer h.Close()
	e := &entry{name: "s"}
	failed := func(c classify.Class) events.Event {
		return events.Event{Kind: events.KindCallFailed, Server: "s", Verdict: classify.Verdict{Class: c, Method: "tools/call"}}
	}
	h.observe(e, nil, failed(classify.Canceled))
	require.Equal(t, classify.None, e.verdict.Class)
	h.observe(e, nil, failed(classify.ServerError))
	h.observe(e, nil, failed(classify.Canceled))
	require.Equal(t, classify.ServerError, e.verdict.Class)
}
