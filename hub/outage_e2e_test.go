package hub_test

import (
	"net/url"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/hub"
	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/supervisor"
)

// outage is a server behind a port the test switches off and on, whose
// session a first run saved (Detach) in store.
type outage struct {
	f     *fixture
	srv   *mcptest.Server
	port  *mcptest.Port
	sc    hub.ServerConfig
	store *hub.FileStore
	saved *supervisor.ResumeState
}

func newOutage(t *testing.T) *outage {
	f := newFixture(t, map[string]mcptest.Options{"a": {Tools: 1}})
	o := &outage{f: f, srv: f.servers["a"], store: &hub.FileStore{Dir: t.TempDir()}}
	u, err := url.Parse(o.srv.URL())
	require.NoError(t, err)
	o.port, err = mcptest.NewPort(u.Host)
	require.NoError(t, err)
	t.Cleanup(o.port.Down)
	o.sc = hub.ServerConfig{Name: "a", URL: o.port.URL(o.srv.URL())}
	first := hub.New(f.config(o.store))
	require.NoError(t, first.Add(f.ctx, o.sc))
	require.NoError(t, first.WaitReady(f.ctx, hub.All))
	require.NoError(t, first.Detach())
	o.saved, err = o.store.Load(f.ctx, "a")
	require.NoError(t, err)
	require.Equal(t, 1, o.srv.Log().Count("initialize"))
	o.srv.Log().Reset()
	return o
}

// restartDown takes the server down (connection refused) and starts a hub
// on the saved state, returning it once its first retry is scheduled, and
// the number of events recorded before it.
func (o *outage) restartDown(t *testing.T) (*hub.Hub, int) {
	o.port.Down()
	seen := len(o.f.rec.Events())
	h := hub.New(o.f.config(o.store))
	require.NoError(t, h.Add(o.f.ctx, o.sc))
	_, err := o.f.rec.WaitFor(o.f.ctx, func(evs []events.Event) bool {
		return slices.ContainsFunc(evs[seen:], func(ev events.Event) bool { return ev.Server == "a" && ev.Kind == events.KindRetryScheduled })
	})
	require.NoError(t, err)
	return h, seen
}

// A host restarted while its server is down keeps the saved session. The
// resumed session's listing gets no HTTP answer at all (connection
// refused: class transport), which is no evidence that the session
// expired (DESIGN.md section 2, S2 reconciled): the state is kept, the
// second run's Detach saves it again, and once the server is back the
// third run resumes it with no initialize (MCP streamable HTTP, session
// management: a client that keeps its Mcp-Session-Id sends it on every
// later request, and the server answers it until it ends the session).
func TestResumeSurvivesAnOutageAcrossRestarts(t *testing.T) {
	o := newOutage(t)
	f, srv, sc := o.f, o.srv, o.sc

	second, _ := o.restartDown(t)
	require.NoError(t, second.Detach())
	kept, err := o.store.Load(f.ctx, "a")
	require.NoError(t, err, "the outage kept the stored state")
	require.Equal(t, o.saved.SessionID, kept.SessionID)

	require.NoError(t, o.port.Up()) // the server is back, its session alive
	third := hub.New(f.config(o.store))
	t.Cleanup(func() { _ = third.Close() })
	require.NoError(t, third.Add(f.ctx, sc))
	require.NoError(t, third.WaitReady(f.ctx, hub.All))
	require.Zero(t, srv.Log().Count("initialize"), "resumed, no initialize")
	require.Len(t, srv.SessionIDs(), 1, "no session orphaned")
	_, err = third.CallTool(f.ctx, record("a__record", "after-outage"))
	require.NoError(t, err)
	require.Equal(t, 1, srv.Invocations(mcptest.RecordTool, "after-outage"))
}

// In one run too: a resumed session's listing that got no answer is
// retried as a resume (the retry re-attaches the session, the stale
// recovery unused), so a server back from its outage serves the same
// session, with no initialize.
func TestResumeRetriedThroughAnOutage(t *testing.T) {
	o := newOutage(t)
	f, srv := o.f, o.srv

	second, seen := o.restartDown(t)
	t.Cleanup(func() { _ = second.Close() })
	require.NoError(t, o.port.Up())
	require.NoError(t, second.WaitReady(f.ctx, hub.All))
	require.Zero(t, srv.Log().Count("initialize"), "the retry re-attached the session")
	require.Len(t, srv.SessionIDs(), 1)
	reattached := slices.ContainsFunc(f.rec.Events()[seen:], func(ev events.Event) bool {
		return ev.Server == "a" && ev.Kind == events.KindTransition && ev.Trigger == events.TriggerRetryDue &&
			(ev.To == events.StateResumingBlind || ev.To == events.StateResumingKnown)
	})
	require.True(t, reattached, "retry-due went back to resuming")
}
