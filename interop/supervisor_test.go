//go:build unix

package interop

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/supervisor"
)

// scenarioTimeout bounds every wait of one scenario on the real server.
const scenarioTimeout = 15 * time.Second

// wireCounts is what a supervisor sent to the server, by JSON-RPC method for
// POSTs and by verb for GET and DELETE. Requests the wire layer answers
// locally (a resumed handshake, a detached DELETE) never reach the recorder.
type wireCounts struct {
	Initialize, Discover, ToolsList, ToolsCall, GET, DELETE int
}

// listChangedRelist takes back the one tools/list a session may add for the
// notifications/tools/list_changed the reference server sends as a session
// starts: landing during discovery, it is kept and re-lists tools once the
// catalog is published. One such re-list per session is expected; more are
// not taken back.
func listChangedRelist(c wireCounts, sessions int) wireCounts {
	c.ToolsList = toolsListsTakenBack(c.ToolsList, sessions)
	return c
}

// toolsListsTakenBack is listChangedRelist's rule for a bare count of
// tools/list requests.
func toolsListsTakenBack(lists, sessions int) int {
	if lists > sessions && lists <= 2*sessions {
		return sessions
	}
	return lists
}

func tally(exs []exchange) wireCounts {
	var c wireCounts
	for _, ex := range exs {
		switch {
		case ex.Verb == http.MethodGet:
			c.GET++
		case ex.Verb == http.MethodDelete:
			c.DELETE++
		case ex.Method == "initialize":
			c.Initialize++
		case ex.Method == "server/discover":
			c.Discover++
		case ex.Method == "tools/list":
			c.ToolsList++
		case ex.Method == "tools/call":
			c.ToolsCall++
		}
	}
	return c
}

// eventLog is an events.Sink that keeps every event and wakes waiters.
type eventLog struct{ watchedLog[events.Event] }

func (l *eventLog) Emit(e events.Event) { l.add(e) }

// anyState matches every state in transitions.
const anyState = ""

// transitions counts the state changes from -> to (anyState matches any).
func transitions(evs []events.Event, from, to events.State) int {
	n := 0
	for _, e := range evs {
		if e.Kind == events.KindTransition && e.From != e.To &&
			(from == anyState || e.From == from) && (to == anyState || e.To == to) {
			n++
		}
	}
	return n
}

// path lists the states the supervisor went through.
func path(evs []events.Event) []events.State {
	var out []events.State
	for _, e := range evs {
		if e.Kind == events.KindTransition && e.From != e.To {
			if len(out) == 0 {
				out = append(out, e.From)
			}
			out = append(out, e.To)
		}
	}
	return out
}

// supervised is one supervisor with its own request recorder and events.
type supervised struct {
	sup *supervisor.Supervisor
	rec *recorder
	ev  *eventLog
}

// supervise builds a supervisor for url whose HTTP client records every
// request at the supervisor's transport (a connection pool of its own with
// http.DefaultTransport's settings, closed when the test ends). It is closed
// when the test ends; it is not started.
func supervise(t *testing.T, url string, cfg supervisor.Config) *supervised {
	t.Helper()
	base := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(base.CloseIdleConnections)
	rec := &recorder{base: base}
	ev := &eventLog{}
	cfg.Endpoint = url
	cfg.HTTP.HTTPClient = &http.Client{Transport: rec}
	cfg.Name = t.Name()
	cfg.Observe.Events = ev
	sup, err := supervisor.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = sup.Close() })
	return &supervised{sup: sup, rec: rec, ev: ev}
}

// startReady starts the supervisor and waits for ready.
func (s *supervised) startReady(ctx context.Context, t *testing.T) {
	t.Helper()
	s.sup.Start()
	err := s.sup.WaitForState(ctx, supervisor.Ready)
	require.NoError(t, err, "state %s, path %v", s.sup.State(), path(s.events()))
}

// events returns the supervisor's events so far, once the last transition
// recorded is into the state the supervisor is in: events reach the sink on
// their own goroutine, in order, so every earlier event is recorded then.
func (s *supervised) events() []events.Event {
	ctx, cancel := context.WithTimeout(context.Background(), scenarioTimeout)
	defer cancel()
	evs, _ := s.ev.waitFor(ctx, func(evs []events.Event) bool {
		for i := len(evs) - 1; i >= 0; i-- {
			if evs[i].Kind == events.KindTransition {
				return evs[i].To == s.sup.State()
			}
		}
		return false
	})
	return evs
}

// counts returns what the supervisor sent so far.
func (s *supervised) counts() wireCounts { return tally(s.rec.exchanges()) }

// since returns what the supervisor sent after the first n exchanges.
func (s *supervised) since(n int) wireCounts { return tally(s.rec.exchanges()[n:]) }

// echo calls server-everything's echo tool and returns its text.
func (s *supervised) echo(ctx context.Context, msg string) (string, error) {
	res, err := s.sup.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": msg}})
	if err != nil {
		return "", err
	}
	if res.IsError || len(res.Content) != 1 {
		return "", &unexpectedResult{res}
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		return "", &unexpectedResult{res}
	}
	return text.Text, nil
}

// requireEcho asserts that an echo call works.
func (s *supervised) requireEcho(ctx context.Context, t *testing.T, msg string) {
	t.Helper()
	got, err := s.echo(ctx, msg)
	require.NoError(t, err)
	require.Equal(t, "Echo: "+msg, got)
}

type unexpectedResult struct{ res *mcp.CallToolResult }

func (e *unexpectedResult) Error() string {
	b, _ := json.Marshal(e.res)
	return "unexpected echo result: " + string(b)
}

// sdkTools lists the server's tools with a plain go-sdk client session.
func sdkTools(ctx context.Context, t *testing.T, url string) []*mcp.Tool {
	t.Helper()
	hc, _ := newHTTPClient(t)
	cs := connectSDK(t, url, hc, sdkOptions{ProtocolVersion: negotiatedByDefault, NoStandaloneStream: true})
	var tools []*mcp.Tool
	for tool, err := range cs.Tools(ctx, nil) {
		require.NoError(t, err)
		tools = append(tools, tool)
	}
	require.NotEmpty(t, tools)
	return tools
}

func toolsJSON(t *testing.T, tools []*mcp.Tool) string {
	t.Helper()
	b, err := json.Marshal(tools)
	require.NoError(t, err)
	return string(b)
}

func scenarioContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), scenarioTimeout)
	t.Cleanup(cancel)
	return ctx
}

// TestSupervisorConnect: a new supervisor reaches ready with the server's
// full tool list, serves a call, and Close ends the session with DELETE.
func TestSupervisorConnect(t *testing.T) {
	t.Parallel()
	s := startEverything(t)
	ctx := scenarioContext(t)
	sv := supervise(t, s.URL(), supervisor.Config{})
	sv.startReady(ctx, t)

	cat := sv.sup.Catalog()
	require.Equal(t, toolsJSON(t, sdkTools(ctx, t, s.URL())), toolsJSON(t, cat.Tools), "the catalog is the server's full tool list")
	require.Contains(t, cat.ToolNames(), "echo")
	require.EqualValues(t, 1, cat.Generation)
	require.False(t, cat.Stale)
	sv.requireEcho(ctx, t, "hello")

	// The standalone GET is opened after the handshake, asynchronously.
	_, err := sv.rec.waitFor(ctx, func(exs []exchange) bool { return tally(exs).GET > 0 })
	require.NoError(t, err)
	// A first connect does not know the era: go-sdk tries server/discover
	// (400 from this server) and falls back to initialize.
	require.Equal(t, wireCounts{Discover: 1, Initialize: 1, ToolsList: 1, ToolsCall: 1, GET: 1}, listChangedRelist(sv.counts(), 1), "%+v", sv.rec.exchanges())
	require.EqualValues(t, 1, sv.sup.Generation())
	require.Equal(t, 1, sv.sup.SessionsOpened())

	require.NoError(t, sv.sup.Close())
	require.Equal(t, supervisor.Closed, sv.sup.State())
	deletes := 0
	for _, ex := range sv.rec.exchanges() {
		if ex.Verb == http.MethodDelete {
			deletes++
			assert.Equal(t, exchange{Verb: http.MethodDelete, Session: true, Status: http.StatusOK}, ex)
		}
	}
	require.Equal(t, 1, deletes, "Close ends the server-side session")
}

// TestSupervisorServerRestart: the server is killed and started again on
// the same port, so every session id is unknown to it. Each supervisor opens
// exactly one new session, whichever way it learns of the restart, and the
// call after it succeeds.
func TestSupervisorServerRestart(t *testing.T) {
	t.Parallel()
	s := startEverything(t)
	ctx := scenarioContext(t)

	// Noticed by the standalone stream: kept on, re-dialed quickly.
	byStream := supervise(t, s.URL(), supervisor.Config{
		Stream: supervisor.StreamConfig{
			Policy: supervisor.StreamOn,
			Keeper: wireStreamFast,
		},
	})
	// Noticed by the next call: no stream, no keepalive.
	byCall := supervise(t, s.URL(), supervisor.Config{Stream: supervisor.StreamConfig{Policy: supervisor.StreamOff}})
	// Stream on (default keeper) and a call right after the restart: either
	// may notice first.
	racing := supervise(t, s.URL(), supervisor.Config{Stream: supervisor.StreamConfig{Policy: supervisor.StreamOn}})
	all := []*supervised{byStream, byCall, racing}
	for _, sv := range all {
		sv.startReady(ctx, t)
		sv.requireEcho(ctx, t, "before")
		require.EqualValues(t, 1, sv.sup.Generation())
	}
	before := make([]int, len(all))
	for i, sv := range all {
		before[i] = len(sv.rec.exchanges())
	}

	s.Kill()
	// The stream saw the outage: a re-dial was refused.
	_, err := byStream.rec.waitFor(ctx, func(exs []exchange) bool { return countGET(exs[before[0]:], 0) > 0 })
	require.NoError(t, err, "the standalone stream noticed no outage")
	s.Restart()

	t.Run("a call right after the restart", func(t *testing.T) {
		sv := racing
		_, err := sv.echo(ctx, "first")
		if err != nil {
			// The call noticed first: the server's null-id 400.
			requireSessionExpired(t, err, 1)
		} else {
			t.Log("the standalone stream noticed first; the call waited for the new session")
		}
		sv.requireEcho(ctx, t, "second")
		requireOneNewSession(t, sv, before[2])
		exs := sv.rec.exchanges()[before[2]:]
		got := tally(exs)
		require.Equal(t, wireCounts{Initialize: 1, ToolsList: 1, ToolsCall: got.ToolsCall, GET: got.GET, DELETE: got.DELETE}, listChangedRelist(got, 1), "%+v", exs)
		calls := 1 // the first call waited for the new session
		if err != nil {
			calls = 2 // the first call failed on the old session, not replayed
		}
		require.Equal(t, calls, got.ToolsCall, "%+v", exs)
		requireNoDeadSessionDelete(t, exs)
	})

	t.Run("the next call notices", func(t *testing.T) {
		sv := byCall
		require.Equal(t, supervisor.Ready, sv.sup.State(), "nothing noticed the restart yet")
		_, err := sv.echo(ctx, "lost")
		requireSessionExpired(t, err, 1)
		sv.requireEcho(ctx, t, "after")
		requireOneNewSession(t, sv, before[1])
		got := sv.since(before[1])
		require.Equal(t, wireCounts{Initialize: 1, ToolsList: 1, ToolsCall: 2, DELETE: got.DELETE}, listChangedRelist(got, 1), "%+v", sv.rec.exchanges()[before[1]:])
		requireNoDeadSessionDelete(t, sv.rec.exchanges()[before[1]:])
	})

	t.Run("the standalone stream notices", func(t *testing.T) {
		sv := byStream
		evs, err := sv.ev.waitFor(ctx, func(evs []events.Event) bool {
			return transitions(evs, supervisor.Ready, supervisor.Connecting) > 0
		})
		require.NoError(t, err, "the supervisor never left ready; path %v", path(evs))
		require.NoError(t, sv.sup.WaitForState(ctx, supervisor.Ready), "path %v", path(sv.events()))
		require.Zero(t, sv.since(before[0]).ToolsCall, "no call was made")
		sv.requireEcho(ctx, t, "after")
		requireOneNewSession(t, sv, before[0])
		// The new session's standalone GET is opened asynchronously.
		exs, err := sv.rec.waitFor(ctx, func(exs []exchange) bool { return countGET(exs[before[0]:], http.StatusOK) == 1 })
		require.NoError(t, err, "the new session opened no standalone stream: %+v", exs[before[0]:])
		exs = exs[before[0]:]
		got := tally(exs)
		require.Equal(t, wireCounts{Initialize: 1, ToolsList: 1, ToolsCall: 1, GET: got.GET}, listChangedRelist(got, 1), "%+v", exs)
		// GETs: refused while the server was down; then the old session's
		// stream is answered 400 (by the keeper's re-dial, and by go-sdk's
		// own reconnect when it sends Last-Event-ID, which passes the
		// keeper); then one stream on the new session.
		refused, gone := countGET(exs, 0), countGET(exs, http.StatusBadRequest)
		require.GreaterOrEqual(t, refused, 1, "%+v", exs)
		require.Contains(t, []int{1, 2}, gone, "%+v", exs)
		require.Equal(t, got.GET, refused+gone+1, "%+v", exs)
		// go-sdk ends its failed connection with a DELETE of the dead id;
		// the wire layer answers it locally once the server said the
		// session is gone.
		requireNoDeadSessionDelete(t, exs)
	})
}

// wireStreamFast re-dials the standalone stream within 100-200ms, so the
// stream notices a restart soon after the server is back.
var wireStreamFast = supervisor.StreamKeeper{InitialBackoff: 100 * time.Millisecond, MaxBackoff: 200 * time.Millisecond}

// requireSessionExpired asserts the verdict of a call that met this server's
// unknown-session answer: HTTP 400 with a null-id -32000.
func requireSessionExpired(t *testing.T, err error, gen uint64) {
	t.Helper()
	var ce *supervisor.CallError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, classify.SessionExpired, ce.Verdict.Class, "verdict %s", ce.Verdict)
	require.Equal(t, http.StatusBadRequest, ce.Verdict.HTTPStatus)
	require.EqualValues(t, -32000, ce.Verdict.RPC.Code)
	require.Equal(t, supervisor.Answered, ce.Delivery)
	require.Equal(t, gen, ce.Generation)
}

// requireOneNewSession asserts that the supervisor replaced its session
// exactly once since the first n exchanges: one initialize on the wire,
// generation 2, one way out of ready.
func requireOneNewSession(t *testing.T, sv *supervised, n int) {
	t.Helper()
	exs := sv.rec.exchanges()[n:]
	require.Equal(t, 1, tally(exs).Initialize, "one new handshake: %+v", exs)
	require.Zero(t, tally(exs).Discover, "the era was learned: no server/discover")
	require.EqualValues(t, 2, sv.sup.Generation())
	require.Equal(t, 2, sv.sup.SessionsOpened())
	require.Equal(t, supervisor.Ready, sv.sup.State())
	evs := sv.events()
	require.Equal(t, 1, transitions(evs, supervisor.Ready, anyState), "left ready once; path %v", path(evs))
	require.Zero(t, transitions(evs, anyState, supervisor.Failed), "path %v", path(evs))
}

// countGET counts the GETs answered with status (0: no answer).
func countGET(exs []exchange, status int) int {
	n := 0
	for _, ex := range exs {
		if ex.Verb == http.MethodGet && ex.Status == status {
			n++
		}
	}
	return n
}

// requireNoDeadSessionDelete asserts that no DELETE reached the server.
// go-sdk sends one, of the dead session id, when a connection fails by
// itself; the wire layer answers it locally once the server said the
// session is gone, or once it was told to detach the session.
func requireNoDeadSessionDelete(t *testing.T, exs []exchange) {
	t.Helper()
	require.Zero(t, tally(exs).DELETE, "%+v", exs)
}

// detachedSession connects a supervisor, detaches it and returns the resume
// state a host would persist, after a JSON round trip.
func detachedSession(ctx context.Context, t *testing.T, url string) (*supervisor.ResumeState, []*mcp.Tool) {
	t.Helper()
	origin := supervise(t, url, supervisor.Config{})
	origin.startReady(ctx, t)
	tools := origin.sup.Catalog().Tools
	require.NoError(t, origin.sup.Detach())
	require.Zero(t, origin.counts().DELETE, "Detach keeps the server-side session")
	rs := origin.sup.ResumeState()
	require.NotNil(t, rs)
	require.NotEmpty(t, rs.SessionID)
	require.NotNil(t, rs.InitializeResult)
	data, err := json.Marshal(rs)
	require.NoError(t, err)
	parsed, err := supervisor.ParseResumeState(data)
	require.NoError(t, err)
	return parsed, tools
}

// resumeModes are the two resumes: without the persisted InitializeResult
// (blind: probe the four lists) and with it (known: list what was declared).
var resumeModes = []struct {
	name  string
	blind bool
	state supervisor.State
}{
	{"blind", true, supervisor.Probing},
	{"known", false, supervisor.ListingDeclared},
}

// TestSupervisorResumeLive: a supervisor built from a persisted resume state
// re-attaches the live session: ready with no handshake on the wire.
func TestSupervisorResumeLive(t *testing.T) {
	t.Parallel()
	s := startEverything(t)
	ctx := scenarioContext(t)
	for _, mode := range resumeModes {
		t.Run(mode.name, func(t *testing.T) {
			rs, tools := detachedSession(ctx, t, s.URL())
			if mode.blind {
				rs.InitializeResult = nil
			}
			sv := supervise(t, s.URL(), supervisor.Config{Resume: rs})
			sv.startReady(ctx, t)
			require.Equal(t, toolsJSON(t, tools), toolsJSON(t, sv.sup.Catalog().Tools))
			sv.requireEcho(ctx, t, "resumed")

			// The resumed session opens its standalone GET asynchronously.
			exs, err := sv.rec.waitFor(ctx, func(exs []exchange) bool { return tally(exs).GET > 0 })
			require.NoError(t, err, "no standalone GET: %+v", exs)
			require.Equal(t, wireCounts{ToolsList: 1, ToolsCall: 1, GET: 1}, listChangedRelist(sv.counts(), 1), "no handshake on the wire: %+v", sv.rec.exchanges())
			require.EqualValues(t, 1, sv.sup.Generation())
			require.Equal(t, rs.SessionID, sv.sup.ResumeState().SessionID, "the persisted session")
			evs := sv.events()
			require.Contains(t, path(evs), mode.state, "path %v", path(evs))
			require.Zero(t, transitions(evs, anyState, supervisor.StaleRecovering), "path %v", path(evs))
			require.Zero(t, transitions(evs, anyState, supervisor.Connecting), "path %v", path(evs))
		})
	}
}

// TestSupervisorResumeRestarted: the persisted session died with the server
// process. The resume takes exactly one stale recovery: one initialize, the
// catalog listed once on the new session, never a second probe round.
func TestSupervisorResumeRestarted(t *testing.T) {
	t.Parallel()
	s := startEverything(t)
	ctx := scenarioContext(t)
	states := make([]*supervisor.ResumeState, len(resumeModes))
	var tools []*mcp.Tool
	for i := range resumeModes {
		states[i], tools = detachedSession(ctx, t, s.URL())
	}
	s.Restart()

	for i, mode := range resumeModes {
		t.Run(mode.name, func(t *testing.T) {
			rs := states[i]
			if mode.blind {
				rs.InitializeResult = nil
			}
			sv := supervise(t, s.URL(), supervisor.Config{Resume: rs})
			sv.startReady(ctx, t)
			sv.requireEcho(ctx, t, "recovered")

			exs := sv.rec.exchanges()
			got := tally(exs)
			require.Equal(t, 1, got.Initialize, "one stale recovery: %+v", exs)
			require.Zero(t, got.Discover)
			require.Equal(t, 1, got.ToolsCall)
			requireNoDeadSessionDelete(t, exs)
			// tools/list: at most one on the stale session (the stream may
			// find it stale first), answered 400, and exactly one on the new
			// session, answered 200. The recorder logs answers as they come,
			// so the stale one may land after the new initialize. The
			// server's list_changed may add one fresh list (see
			// listChangedRelist), and only that list: the side lists show
			// there was one discovery.
			stale, fresh, prompts := 0, 0, 0
			for _, ex := range exs {
				switch {
				case ex.Method == "prompts/list" && ex.Status == http.StatusOK:
					prompts++
				case ex.Method != "tools/list":
				case ex.Status == http.StatusOK:
					fresh++
				default:
					stale++
				}
			}
			require.LessOrEqual(t, stale, 1, "%+v", exs)
			require.Equal(t, 1, prompts, "never a second probe round: %+v", exs)
			require.Equal(t, 1, toolsListsTakenBack(fresh, 1), "one discovery's list, and at most one re-list for the server's list_changed: %+v", exs)

			require.EqualValues(t, 2, sv.sup.Generation(), "the attached session and the recovered one")
			require.Equal(t, toolsJSON(t, tools), toolsJSON(t, sv.sup.Catalog().Tools))
			require.NotEqual(t, rs.SessionID, sv.sup.ResumeState().SessionID, "a new session")
			evs := sv.events()
			require.Equal(t, 1, transitions(evs, anyState, supervisor.StaleRecovering), "path %v", path(evs))
			require.Zero(t, transitions(evs, anyState, supervisor.Failed), "path %v", path(evs))
			require.Zero(t, transitions(evs, anyState, supervisor.Connecting), "path %v", path(evs))
		})
	}
}

// TestSupervisorOutageIsNotGETHostile: with StreamAuto, a server that is
// down for a while refuses the standalone stream's re-dials (no HTTP
// answer) while no POST is made. That is an outage, not a GET-hostile
// server (failure story S5: the stream fails while POSTs succeed): the
// stream must not be disabled, and the session after the restart must open
// it again. The keeper re-dials every 100-200ms here so that the rule's
// three attempts fit in a short outage; with the default keeper (re-dials
// after 0s, 1s, 2s) an outage of about 3s is enough.
func TestSupervisorOutageIsNotGETHostile(t *testing.T) {
	t.Parallel()
	s := startEverything(t)
	ctx := scenarioContext(t)
	sv := supervise(t, s.URL(), supervisor.Config{Stream: supervisor.StreamConfig{Keeper: wireStreamFast}})
	sv.startReady(ctx, t)
	sv.requireEcho(ctx, t, "before")
	n := len(sv.rec.exchanges())

	s.Kill()
	exs, err := sv.rec.waitFor(ctx, func(exs []exchange) bool { return countGET(exs[n:], 0) >= 3 })
	require.NoError(t, err, "the stream re-dials: %+v", exs[n:])
	s.Restart()

	// Whichever notices first (the stream, or this call), one new session.
	if _, err := sv.echo(ctx, "first"); err != nil {
		requireSessionExpired(t, err, 1)
	}
	sv.requireEcho(ctx, t, "after")
	require.EqualValues(t, 2, sv.sup.Generation())

	for _, e := range sv.events() {
		assert.NotEqual(t, events.KindStreamDisabled, e.Kind, "an outage marked the server GET-hostile: %s", e.Detail)
	}
	rs := sv.sup.ResumeState()
	require.NotNil(t, rs)
	assert.False(t, rs.StandaloneStream.Off, "the resume state remembers the server as GET-hostile")
	assert.Equal(t, 1, countGET(sv.rec.exchanges()[n:], http.StatusOK)+countGET(sv.rec.exchanges()[n:], http.StatusConflict),
		"the new session opens its standalone stream: %+v", sv.rec.exchanges()[n:])
}
