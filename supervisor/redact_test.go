package supervisor

import (
	"errors"
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
)

// TestReleasedSessionIDsAreForgotten: across many replaced sessions the
// redactor holds only the ids in use (the live session's, which is also the
// resume state's), so its cost does not grow with the past; a forgotten id is
// still hashed where go-sdk names it.
func TestReleasedSessionIDsAreForgotten(t *testing.T) {
	r := newRig(t, Config{Recovery: RecoveryConfig{MaxSessions: 1000}})
	id := func(n int) string { return fmt.Sprintf("session-%04d-7f3c2a9be1d04c5b", n) }
	sess := newFakeSession(id(1), "a")
	r.ready(sess)
	const sessions = 30
	for n := 2; n <= sessions; n++ {
		sess.die(errors.New("gone"))
		req := r.next()
		// Between the sessions: the dead one is released, and kept only
		// while the resume state still names it.
		if rs := r.sup.ResumeState(); rs != nil {
			require.Equal(t, "x "+events.HashSessionID(rs.SessionID), r.sup.redact.Text("x "+rs.SessionID), "the resume state's id is kept")
		}
		sess = newFakeSession(id(n), "a")
		req.ok(sess)
		r.until("session "+id(n), func() bool { return r.sup.State() == Ready && r.sup.SessionsOpened() == n })
	}
	r.until("the old ids forgotten", func() bool { return r.sup.redact.SessionIDs() == 1 })
	require.Equal(t, id(sessions), r.sup.ResumeState().SessionID)
	require.Equal(t, "x "+events.HashSessionID(id(sessions)), r.sup.redact.Text("x "+id(sessions)), "the live id is registered")
	require.Equal(t, "x "+id(1), r.sup.redact.Text("x "+id(1)), "a released id is forgotten")
	require.Equal(t, "(session ID: "+events.HashSessionID(id(1))+")", r.sup.redact.Text("(session ID: "+id(1)+")"), "and still hashed where go-sdk names it")
}

// TestStringAndEventsRedactTheEndpoint: the endpoint (the default Name)
// carries credentials; neither String nor the events' Server field shows them.
func TestStringAndEventsRedactTheEndpoint(t *testing.T) {
	ep := "https://alice:pw@mcp.example.com/mcp?token=t0k"
	s := newSupervisor(Config{Endpoint: ep}.withDefaults(), newFakeConn())
	require.Equal(t, "mcpsup.Supervisor(https://[redacted]@mcp.example.com/mcp?token=[redacted])", s.String())

	r := newRig(t, Config{Endpoint: ep})
	r.sup.cfg.Name = ep
	r.ready(newFakeSession("s1", "a"))
	for _, e := range r.rec.Events() {
		require.Equal(t, "https://[redacted]@mcp.example.com/mcp?token=[redacted]", e.Server, e.Kind)
	}
}

// TestMachineVerdictsAreRedacted: the verdict the machine keeps (Failure,
// the StateError of a refused call) carries no session id, though go-sdk's
// text of the failed handshake did.
func TestMachineVerdictsAreRedacted(t *testing.T) {
	r := newRig(t, Config{})
	r.sup.Start()
	text := "sending \"notifications/initialized\": failed to connect (session ID: Q7#1): Unauthorized"
	r.next().fail(&classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", Method: "notifications/initialized", Status: 401}, Err: errors.New(text)})
	r.waitReason("unauthorized")
	_, v := r.sup.Failure()
	require.Contains(t, v.Detail, "(session ID: "+events.HashSessionID("Q7#1")+")")
	require.NotContains(t, v.Detail, "Q7#1")
	_, err := r.sup.CallTool(r.ctx, &mcp.CallToolParams{Name: "a"})
	var se *StateError
	require.ErrorAs(t, err, &se)
	require.NotContains(t, se.Verdict.Detail, "Q7#1")
	require.NotContains(t, err.Error(), "Q7#1")
}
