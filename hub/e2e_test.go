package hub_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/hub"
	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/supervisor"
)

const e2eTimeout = 30 * time.Second

// fixture is a set of mcptest servers by name and the hub settings to
// reach them.
type fixture struct {
	t       *testing.T
	ctx     context.Context
	servers map[string]*mcptest.Server
	client  *http.Client
	rec     *events.Recorder
}

func newFixture(t *testing.T, servers map[string]mcptest.Options) *fixture {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	t.Cleanup(cancel)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	f := &fixture{t: t, ctx: ctx, servers: map[string]*mcptest.Server{}, client: &http.Client{Transport: tr}, rec: &events.Recorder{}}
	for name, opts := range servers {
		srv, err := mcptest.NewServer(opts)
		require.NoError(t, err)
		t.Cleanup(srv.Close)
		f.servers[name] = srv
	}
	return f
}

// config is the hub's configuration for the fixture's servers.
func (f *fixture) config(store hub.Store) hub.Config {
	return hub.Config{
		Supervisor: supervisor.Config{
			Era:      supervisor.Era2025,
			HTTP:     supervisor.HTTPConfig{HTTPClient: f.client},
			Recovery: supervisor.RecoveryConfig{Backoff: supervisor.Backoff{InitialInterval: 20 * time.Millisecond, MaxInterval: 100 * time.Millisecond, NoJitter: true}},
		},
		Store:  store,
		Events: f.rec,
	}
}

// hub builds a hub over every server of the fixture and waits for them all.
func (f *fixture) hub(cfg hub.Config) *hub.Hub {
	f.t.Helper()
	h := hub.New(cfg)
	f.t.Cleanup(func() { _ = h.Close() })
	for name, srv := range f.servers {
		require.NoError(f.t, h.Add(f.ctx, hub.ServerConfig{Name: name, URL: srv.URL()}))
	}
	require.NoError(f.t, h.WaitReady(f.ctx, hub.All))
	return h
}

func (f *fixture) eventsOf(kind events.Kind) []events.Event {
	var out []events.Event
	for _, ev := range f.rec.Events() {
		if ev.Kind == kind {
			out = append(out, ev)
		}
	}
	return out
}

func record(name, id string) *mcp.CallToolParams {
	return &mcp.CallToolParams{Name: name, Arguments: mcptest.IDArgs{ID: id}}
}

func names(ts []hub.Tool) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name
	}
	return out
}

// Two servers with the same tool names: one merged catalog of qualified
// names, each call reaching its own server, counted there.
func TestMergedCatalogRoutesToEachServer(t *testing.T) {
	f := newFixture(t, map[string]mcptest.Options{"alpha": {Tools: 2, Prompts: 1, Resources: 1}, "beta": {Tools: 2, Prompts: 1, Resources: 1}})
	h := f.hub(f.config(nil))

	want := []string{}
	for _, s := range []string{"alpha", "beta"} {
		for _, tool := range f.servers[s].ToolNames() {
			want = append(want, s+"__"+tool)
		}
	}
	slices.Sort(want)
	require.Equal(t, want, names(h.Tools()))
	for _, tl := range h.Tools() {
		require.Equal(t, tl.Name, tl.Def.Name, "the definition carries the qualified name")
		require.True(t, hub.ValidName(tl.Name))
	}
	require.Len(t, h.Prompts(), 2)
	require.Len(t, h.Resources(), 2)

	_, err := h.CallTool(f.ctx, record("alpha__record", "x"))
	require.NoError(t, err)
	_, err = h.CallTool(f.ctx, record("beta__record", "y"))
	require.NoError(t, err)
	require.Equal(t, 1, f.servers["alpha"].Invocations(mcptest.RecordTool, "x"))
	require.Zero(t, f.servers["beta"].Invocations(mcptest.RecordTool, "x"))
	require.Equal(t, 1, f.servers["beta"].Invocations(mcptest.RecordTool, "y"))

	pr, err := h.GetPrompt(f.ctx, &mcp.GetPromptParams{Name: "beta__" + mcptest.PromptName(1)})
	require.NoError(t, err)
	require.NotNil(t, pr)
	rr, err := h.ReadResource(f.ctx, "alpha__resource-1")
	require.NoError(t, err)
	require.Len(t, rr.Contents, 1)
	require.Equal(t, mcptest.ResourceURI(1), rr.Contents[0].URI)

	_, err = h.CallTool(f.ctx, record("gamma__record", "z"))
	var ce *hub.CallError
	require.ErrorAs(t, err, &ce)
	require.ErrorIs(t, err, hub.ErrUnknownName)
	require.Zero(t, f.servers["alpha"].Log().Count("tools/call")-1, "an unknown name sends nothing")

	for _, hl := range h.Health() {
		require.Equal(t, supervisor.Ready, hl.State, hl.Server)
		require.Equal(t, 4, hl.Tools, "record, block, tool-1, tool-2")
		require.Equal(t, 1, hl.Prompts)
		require.Equal(t, 1, hl.Resources)
		require.EqualValues(t, 1, hl.Generation)
		require.False(t, hl.Since.IsZero())
	}
	for _, ev := range f.rec.Events() {
		require.Contains(t, []string{"alpha", "beta"}, ev.Server, "every event names its server: %+v", ev)
	}
}

// hashedName is the shortened name the hub gives an item of server whose
// qualified name q is not valid: q's valid bytes (others '_') cut to 53,
// '_' and the first 10 hex digits of SHA-256 over server, NUL and item.
func hashedName(q, server, item string) string {
	b := []byte(q)
	for i, c := range b {
		if !hub.ValidName(string(c)) {
			b[i] = '_'
		}
	}
	sum := sha256.Sum256([]byte(server + "\x00" + item))
	return string(b[:min(len(b), hub.MaxNamespaceLen)]) + "_" + hex.EncodeToString(sum[:])[:10]
}

// Names no model API accepts get stable hashed names; an item that asks
// for another's hashed name clashes with it, and the clash is reported;
// a server whose names would begin with another's prefix is refused.
func TestCollisionsAndInvalidNames(t *testing.T) {
	f := newFixture(t, map[string]mcptest.Options{"x": {WithoutTools: true, Tools: 1}, "y": {WithoutTools: true, Tools: 1}})
	long := "a-very-long-tool-name-that-no-model-api-would-accept-because-it-is-longer-than-64"
	taken := hashedName("x__do.thing", "x", "do.thing")
	f.servers["x"].AddTool("y__z")
	f.servers["x"].AddTool("do.thing")
	f.servers["x"].AddTool(strings.TrimPrefix(taken, "x__")) // asks for do.thing's name
	f.servers["x"].AddTool(long)
	f.servers["y"].AddTool("z")
	h := f.hub(f.config(nil))
	require.Eventually(t, func() bool { return len(h.Tools()) == 7 }, 10*time.Second, 10*time.Millisecond, "%v", names(h.Tools()))

	byID := map[string]hub.Tool{}
	for _, tl := range h.Tools() {
		require.True(t, hub.ValidName(tl.Name), tl.Name)
		byID[tl.Server+"/"+tl.ID] = tl
	}
	require.Equal(t, "x__y__z", byID["x/y__z"].Name)
	require.Equal(t, "y__z", byID["y/z"].Name)
	require.Equal(t, taken, byID["x/do.thing"].Name, "the lower item id keeps the name")
	loser := byID["x/"+strings.TrimPrefix(taken, "x__")].Name
	require.Regexp(t, `^x__do_thing_[0-9a-f]{10}_[0-9a-f]{10}$`, loser)
	require.Len(t, byID["x/"+long].Name, hub.MaxNameLen)

	cols := f.eventsOf(hub.KindNameCollision)
	require.NotEmpty(t, cols)
	require.Equal(t, taken, cols[len(cols)-1].Name)
	require.Equal(t, []string{loser}, cols[len(cols)-1].Added, "the name the other item got")
	require.Empty(t, cols[len(cols)-1].Detail)

	_, err := h.CallTool(f.ctx, &mcp.CallToolParams{Name: loser, Arguments: mcptest.EchoArgs{Text: "hi"}})
	require.NoError(t, err, "the renamed tool routes to its item")
	require.Equal(t, 1, f.servers["x"].Log().Count("tools/call"))

	// x__y's names would begin x__y__, which x's begin: refused.
	err = h.Add(f.ctx, hub.ServerConfig{Name: "x__y", URL: f.servers["y"].URL()})
	require.ErrorIs(t, err, hub.ErrServerName)
	require.Equal(t, []string{"x", "y"}, h.Names())
}

// One server failing every call, then removed, while calls go on to the
// others; its errors name it and keep the supervisor's verdict and delivery.
func TestFailingAndRemovedServerLeavesOthersServing(t *testing.T) {
	f := newFixture(t, map[string]mcptest.Options{"a": {}, "b": {}, "c": {}})
	h := f.hub(f.config(nil))
	f.servers["b"].Gateway().Add(mcptest.ToolCallServerError())

	_, err := h.CallTool(f.ctx, record("b__record", "1"))
	var hce *hub.CallError
	require.ErrorAs(t, err, &hce)
	require.Equal(t, "b", hce.Server)
	require.Equal(t, mcptest.RecordTool, hce.ID)
	require.Contains(t, err.Error(), `server "b"`)
	var sce *supervisor.CallError
	require.ErrorAs(t, err, &sce)
	require.Equal(t, classify.ServerError, sce.Verdict.Class)
	require.Equal(t, 500, sce.Verdict.HTTPStatus)
	require.Equal(t, supervisor.Answered, sce.Delivery)
	for _, hl := range h.Health() {
		if hl.Server == "b" {
			require.Equal(t, classify.ServerError, hl.Verdict.Class, "health keeps the last verdict")
			require.Equal(t, supervisor.Ready, hl.State, "a 500 keeps the session")
		}
	}

	// Calls to a and c run while b leaves.
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 20 {
		for _, s := range []string{"a", "c"} {
			wg.Go(func() {
				_, err := h.CallTool(f.ctx, record(s+"__record", "during-"+string(rune('a'+i))))
				errs <- err
			})
		}
	}
	require.NoError(t, h.Remove(f.ctx, "b", hub.EndSession))
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Equal(t, 1, f.servers["b"].Log().CountVerb("DELETE"), "EndSession ends the session")
	require.Equal(t, []string{"a", "c"}, h.Names())
	for _, name := range names(h.Tools()) {
		require.NotContains(t, name, "b__")
	}
	_, err = h.CallTool(f.ctx, record("b__record", "2"))
	require.ErrorIs(t, err, hub.ErrUnknownName)
	require.Error(t, h.Remove(f.ctx, "b", hub.EndSession))
	require.ErrorIs(t, h.Remove(f.ctx, "b", hub.EndSession), hub.ErrUnknownServer)

	removed := false
	for _, ev := range f.eventsOf(hub.KindMergedCatalogChanged) {
		if ev.Server == "b" && ev.Op == "tools" && len(ev.Removed) == len(f.servers["b"].ToolNames()) {
			removed = true
		}
	}
	require.True(t, removed, "the merged catalog change names b's tools")
}

// A host restart through the file store: the second run resumes every
// session with no initialize at any server.
func TestResumeAcrossRestartWithFileStore(t *testing.T) {
	f := newFixture(t, map[string]mcptest.Options{"a": {Tools: 1}, "b": {Tools: 1}, "c": {}})
	store := &hub.FileStore{Dir: filepath.Join(t.TempDir(), "state")}

	first := f.hub(f.config(store))
	require.NoError(t, first.Detach())
	for name, srv := range f.servers {
		require.Equal(t, 1, srv.Log().Count("initialize"), name)
		require.Zero(t, srv.Log().CountVerb("DELETE"), "Detach keeps %s's session", name)
		fi, err := os.Stat(store.Path(name))
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
		srv.Log().Reset()
	}
	dir, err := os.Stat(store.Dir)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), dir.Mode().Perm())

	second := f.hub(f.config(store))
	for name, srv := range f.servers {
		require.Zero(t, srv.Log().Count("initialize"), "%s resumed without initialize", name)
		require.Len(t, srv.SessionIDs(), 1, "%s still has one session", name)
	}
	_, err = second.CallTool(f.ctx, record("a__record", "resumed"))
	require.NoError(t, err)
	require.Equal(t, 1, f.servers["a"].Invocations(mcptest.RecordTool, "resumed"))

	require.NoError(t, second.Close())
	for name := range f.servers {
		_, err := os.Stat(store.Path(name))
		require.ErrorIs(t, err, os.ErrNotExist, "Close deletes %s's state", name)
		require.Equal(t, 1, f.servers[name].Log().CountVerb("DELETE"))
	}
}

// A corrupt entry and a foreign one start their servers fresh with an
// event; the third server still resumes.
func TestCorruptAndForeignStatesStartFresh(t *testing.T) {
	f := newFixture(t, map[string]mcptest.Options{"a": {}, "b": {}, "c": {}})
	store := &hub.FileStore{Dir: t.TempDir()}
	require.NoError(t, f.hub(f.config(store)).Detach())
	for _, srv := range f.servers {
		srv.Log().Reset()
	}
	require.NoError(t, os.WriteFile(store.Path("a"), []byte(`{"version":1,"server":"a","resume":{"version":1,`), 0o600))
	cData, err := os.ReadFile(store.Path("c"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(store.Path("b"), cData, 0o600)) // c's state under b's name

	h := f.hub(f.config(store))
	failed := map[string]string{}
	for _, ev := range f.eventsOf(hub.KindStoreFailed) {
		failed[ev.Server] = ev.Detail
	}
	require.Contains(t, failed["a"], "corrupt")
	require.Contains(t, failed["b"], "another server")
	require.NotContains(t, failed, "c")
	require.Equal(t, 1, f.servers["a"].Log().Count("initialize"), "a starts fresh")
	require.Equal(t, 1, f.servers["b"].Log().Count("initialize"), "b starts fresh")
	require.Zero(t, f.servers["c"].Log().Count("initialize"), "c resumes")

	var se *hub.StoreError
	_, err = store.Load(f.ctx, "x-none")
	require.ErrorAs(t, err, &se)
	require.ErrorIs(t, err, hub.ErrNotFound)
	_, err = h.CallTool(f.ctx, record("a__record", "fresh"))
	require.NoError(t, err)
}

// A store that cannot be written: every save is an event, no server is
// affected, and Detach returns the store's errors.
func TestUnwritableStoreIsReported(t *testing.T) {
	f := newFixture(t, map[string]mcptest.Options{"a": {}, "b": {}})
	blocker := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(blocker, nil, 0o600))
	store := &hub.FileStore{Dir: filepath.Join(blocker, "state")} // a directory under a file

	h := f.hub(f.config(store))
	_, err := h.CallTool(f.ctx, record("b__record", "still"))
	require.NoError(t, err)
	err = h.Detach()
	var se *hub.StoreError
	require.ErrorAs(t, err, &se)
	require.Equal(t, "save", se.Op)
	saves := map[string]int{}
	for _, ev := range f.eventsOf(hub.KindStoreFailed) {
		require.Contains(t, []string{"load", "save"}, ev.Op, "the directory cannot be read either")
		if ev.Op == "save" {
			saves[ev.Server]++
		}
	}
	require.Positive(t, saves["a"])
	require.Positive(t, saves["b"])
}

// WaitReady: Any is satisfied by one ready server while another cannot
// connect; All names the one that is not ready when its context ends.
func TestWaitReadyAnyAndAll(t *testing.T) {
	f := newFixture(t, map[string]mcptest.Options{"up": {}})
	h := hub.New(f.config(nil))
	t.Cleanup(func() { _ = h.Close() })
	dead, err := mcptest.NewServer(mcptest.Options{})
	require.NoError(t, err)
	deadURL := dead.URL()
	dead.Close() // nothing listens there now

	require.NoError(t, h.Add(f.ctx, hub.ServerConfig{Name: "up", URL: f.servers["up"].URL()}))
	require.NoError(t, h.Add(f.ctx, hub.ServerConfig{Name: "down", URL: deadURL}))
	require.ErrorIs(t, h.Add(f.ctx, hub.ServerConfig{Name: "up", URL: deadURL}), hub.ErrDuplicate)
	require.ErrorIs(t, h.Add(f.ctx, hub.ServerConfig{Name: "sse", URL: deadURL, Type: "sse"}), hub.ErrUnsupported)

	require.NoError(t, h.WaitReady(f.ctx, hub.Any))
	_, err = f.rec.WaitFor(f.ctx, func(evs []events.Event) bool {
		return slices.ContainsFunc(evs, func(ev events.Event) bool { return ev.Server == "down" && ev.Kind == events.KindRetryScheduled })
	})
	require.NoError(t, err)
	_, err = h.CallTool(f.ctx, &mcp.CallToolParams{Name: "down__t0"})
	require.ErrorIs(t, err, hub.ErrUnknownName)
	require.Contains(t, err.Error(), "servers not serving their items now: down (", "the error names the server that is not ready")
	require.Contains(t, err.Error(), "last failure transport", "and why")
	require.NotContains(t, err.Error(), "up (", "a ready server is not listed")
	ctx, cancel := context.WithTimeout(f.ctx, 300*time.Millisecond)
	defer cancel()
	err = h.WaitReady(ctx, hub.All)
	var nre *hub.NotReadyError
	require.ErrorAs(t, err, &nre)
	require.ErrorIs(t, err, hub.ErrNotReady)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Len(t, nre.Servers, 1)
	require.Equal(t, "down", nre.Servers[0].Server)

	require.NoError(t, h.Close())
	require.ErrorIs(t, h.WaitReady(f.ctx, hub.Any), hub.ErrClosed)
	require.ErrorIs(t, h.Add(f.ctx, hub.ServerConfig{Name: "late", URL: deadURL}), hub.ErrClosed)
	require.True(t, errors.Is(h.Close(), nil), "Close is idempotent")
}

// WaitReady's error says why each server is not ready: its state, its
// terminal reason and the verdict of its last failure, not only its name.
func TestNotReadyErrorNamesTheLastFailure(t *testing.T) {
	err := &hub.NotReadyError{Mode: hub.All, Err: context.DeadlineExceeded, Servers: []hub.Health{
		{Server: "down", State: supervisor.Failed, Verdict: classify.Verdict{Class: classify.Transport, Method: "initialize"}},
		{Server: "key", State: supervisor.Failed, Reason: supervisor.ReasonUnauthorized,
			Verdict: classify.Verdict{Class: classify.Unauthorized, HTTPStatus: http.StatusUnauthorized, Method: "initialize"}},
		{Server: "slow", State: supervisor.Connecting},
	}}
	require.Equal(t, "hub: not ready: down (failed, last failure transport (initialize))"+
		" key (failed, unauthorized, last failure unauthorized (HTTP 401, initialize))"+
		" slow (connecting): context deadline exceeded", err.Error())
	require.True(t, err.Servers[0].Retrying(), "no terminal reason: tried again")
	require.False(t, err.Servers[1].Retrying(), "unauthorized waits for the host")
	require.False(t, err.Servers[2].Retrying())

	// A transport failure's text says why.
	err.Servers[0].Verdict.Detail = "dial tcp 127.0.0.1:1: connect: connection refused"
	require.Contains(t, err.Error(), "down (failed, last failure transport (initialize): dial tcp 127.0.0.1:1: connect: connection refused)")
}

// Remove(KeepSession) detaches one server and saves its state; adding it
// again resumes that session with no initialize, while the other server
// never noticed.
func TestRemoveKeepSessionThenAddResumes(t *testing.T) {
	f := newFixture(t, map[string]mcptest.Options{"a": {}, "b": {}})
	store := &hub.FileStore{Dir: t.TempDir()}
	h := f.hub(f.config(store))
	require.NoError(t, h.Remove(f.ctx, "a", hub.KeepSession))
	require.Zero(t, f.servers["a"].Log().CountVerb("DELETE"), "the session is kept")
	rs, err := store.Load(f.ctx, "a")
	require.NoError(t, err)
	require.Equal(t, f.servers["a"].SessionIDs(), []string{rs.SessionID})

	require.NoError(t, h.Add(f.ctx, hub.ServerConfig{Name: "a", URL: f.servers["a"].URL()}))
	require.NoError(t, h.WaitReady(f.ctx, hub.All))
	require.Equal(t, 1, f.servers["a"].Log().Count("initialize"), "only the first session's")
	_, err = h.CallTool(f.ctx, record("a__record", "back"))
	require.NoError(t, err)
	require.Equal(t, 1, f.servers["b"].Log().Count("initialize"))
	require.Equal(t, uint64(1), h.Supervisor("b").Generation())
}

// A call in flight to a server that is removed ends with the supervisor's
// closed error, named for its server; calls to the other server go on.
func TestRemoveEndsCallsInFlight(t *testing.T) {
	f := newFixture(t, map[string]mcptest.Options{"a": {}, "b": {}})
	h := f.hub(f.config(nil))
	done := make(chan error, 1)
	go func() {
		_, err := h.CallTool(f.ctx, &mcp.CallToolParams{Name: "a__" + mcptest.BlockTool, Arguments: mcptest.IDArgs{ID: "held"}})
		done <- err
	}()
	require.NoError(t, f.servers["a"].WaitBlocked(f.ctx, "held"))
	require.NoError(t, h.Remove(f.ctx, "a", hub.EndSession))
	err := <-done
	var hce *hub.CallError
	require.ErrorAs(t, err, &hce)
	require.Equal(t, "a", hce.Server)
	require.ErrorIs(t, err, supervisor.ErrClosed)
	_, err = h.CallTool(f.ctx, record("b__record", "after"))
	require.NoError(t, err)
}

// A new session whose catalog is the same sends no catalog-changed; the
// hub still merges its catalog on the transition to ready, so WaitReady
// returns and the names route on the new session.
func TestNewSessionWithTheSameCatalogStaysMerged(t *testing.T) {
	f := newFixture(t, map[string]mcptest.Options{"alpha": {Tools: 1}})
	h := f.hub(f.config(nil))
	before := names(h.Tools())
	_, err := f.rec.WaitFor(f.ctx, func(evs []events.Event) bool { return len(f.eventsOf(events.KindCatalogChanged)) == 1 })
	require.NoError(t, err, "the first catalog is a change")

	require.Equal(t, 1, f.servers["alpha"].ExpireAll())
	_, err = h.CallTool(f.ctx, record("alpha__record", "expired"))
	require.Error(t, err, "the call that found the session gone is not replayed")
	require.Eventually(t, func() bool {
		hs := h.Health()
		return len(hs) == 1 && hs[0].Generation == 2 && hs[0].State == supervisor.Ready
	}, e2eTimeout, 5*time.Millisecond)
	require.NoError(t, h.WaitReady(f.ctx, hub.All))
	require.Equal(t, before, names(h.Tools()))
	_, err = h.CallTool(f.ctx, record("alpha__record", "after"))
	require.NoError(t, err)
	require.Equal(t, 1, f.servers["alpha"].Invocations(mcptest.RecordTool, "after"))
	require.NoError(t, h.Close()) // every event has reached the sink
	require.Len(t, f.eventsOf(events.KindCatalogChanged), 1, "the same catalog is no change")
}

// ServerMiddleware gives each server's sessions middleware named for it:
// every request a server's session sends passes the middleware made for
// that server, after the template's.
func TestServerMiddlewareIsNamedForItsServer(t *testing.T) {
	f := newFixture(t, map[string]mcptest.Options{"alpha": {}, "beta": {}})
	var mu sync.Mutex
	seen := map[string][]string{} // server: methods, in order
	var order []string
	cfg := f.config(nil)
	cfg.Supervisor.Client.SendingMiddleware = []mcp.Middleware{func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			mu.Lock()
			order = append(order, "template")
			mu.Unlock()
			return next(ctx, method, req)
		}
	}}
	cfg.ServerMiddleware = func(server string) mcp.Middleware {
		return func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				mu.Lock()
				seen[server] = append(seen[server], method)
				order = append(order, server)
				mu.Unlock()
				return next(ctx, method, req)
			}
		}
	}
	h := f.hub(cfg)
	_, err := h.CallTool(f.ctx, record("beta__record", "b"))
	require.NoError(t, err)
	mu.Lock()
	defer mu.Unlock()
	require.Contains(t, seen["alpha"], "initialize")
	require.NotContains(t, seen["alpha"], "tools/call", "alpha's middleware saw only alpha's requests")
	require.Equal(t, "tools/call", seen["beta"][len(seen["beta"])-1])
	require.Equal(t, "template", order[0], "the template's middleware runs first")
	require.Len(t, cfg.Supervisor.Client.SendingMiddleware, 1, "the template is not modified")
}

// A ServerMiddleware that has nothing for a server returns nil, and a
// template's SendingMiddleware may hold a nil left by a host's optional
// middleware: go-sdk calls each as it builds a session's client, and a nil
// one ended the host's process on a nil function. A nil middleware is none.
func TestNilMiddlewareIsNone(t *testing.T) {
	f := newFixture(t, map[string]mcptest.Options{"alpha": {}, "beta": {}})
	var mu sync.Mutex
	var seen []string
	cfg := f.config(nil)
	cfg.Supervisor.Client.SendingMiddleware = []mcp.Middleware{nil}
	cfg.Supervisor.Client.ReceivingMiddleware = []mcp.Middleware{nil}
	cfg.ServerMiddleware = func(server string) mcp.Middleware {
		if server == "alpha" {
			return nil
		}
		return func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				mu.Lock()
				seen = append(seen, method)
				mu.Unlock()
				return next(ctx, method, req)
			}
		}
	}
	h := f.hub(cfg)
	for _, name := range []string{"alpha__record", "beta__record"} {
		_, err := h.CallTool(f.ctx, record(name, "x"))
		require.NoError(t, err, name)
	}
	mu.Lock()
	defer mu.Unlock()
	require.Contains(t, seen, "tools/call", "beta's middleware runs")
}

// A server whose names collide with another's by the thousand gets at most
// 16 name-collision events for one change of its catalog, then one that
// counts the rest: each list that brings them anew would otherwise send as
// many events. Every item is still named and merged.
func TestNameCollisionEventsAreBoundedPerChange(t *testing.T) {
	const n = 40
	f := newFixture(t, map[string]mcptest.Options{"x": {WithoutTools: true, Tools: 1}})
	for i := range n {
		// t.NN is shortened to x__t_NN_<hash>, which t_NN_<hash> asks for.
		id := fmt.Sprintf("t.%02d", i)
		f.servers["x"].AddTool(id)
		f.servers["x"].AddTool(strings.TrimPrefix(hashedName("x__"+id, "x", id), "x__"))
	}
	h := f.hub(f.config(nil))
	require.Eventually(t, func() bool { return len(h.Tools()) == 2*n+1 }, 10*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool {
		for _, e := range f.eventsOf(hub.KindNameCollision) {
			if e.Omitted > 0 {
				return true
			}
		}
		return false
	}, 10*time.Second, 10*time.Millisecond, "the count of the rest")
	cols := f.eventsOf(hub.KindNameCollision)
	named, omitted := 0, 0
	for _, e := range cols {
		if e.Name != "" {
			named++
		}
		omitted += e.Omitted
	}
	require.Equal(t, n, named+omitted, "every collision is told or counted")
	require.LessOrEqual(t, named, 16)
	require.Len(t, cols, named+1)
}

// A server that puts a secret the hub knows (a header value of its
// configuration) in a tool's name: the qualified name, which the model and
// every event see, is made of the name with the secret masked (a stdio
// entry's command-line credential too), also where
// the name pattern would have changed the secret's bytes ('.', '/', '+'
// become '_', which the redactor no longer knew); calls still route by it.
func TestSecretsInItemNamesReachNoQualifiedName(t *testing.T) {
	const token = "ghp.Zq8vN3xP0aLr/7TmK2wYc+Q"
	f := newFixture(t, map[string]mcptest.Options{"s": {WithoutTools: true, Tools: 1}})
	f.servers["s"].AddTool("t " + token)
	f.servers["s"].AddTool("auth:login") // no secret: only registered ones are masked, no pattern
	const argKey = "sk-0123456789abcdefXYZ"
	f.servers["s"].AddTool("u " + argKey) // a stdio entry's command-line credential, known to the hub too
	h := hub.New(f.config(nil))
	t.Cleanup(func() { _ = h.Close() })
	require.NoError(t, h.Add(f.ctx, hub.ServerConfig{Name: "local", Command: "/nonexistent/server", Args: []string{"--api-key", argKey}}))
	require.NoError(t, h.Add(f.ctx, hub.ServerConfig{Name: "s", URL: f.servers["s"].URL(), Headers: map[string]string{"X-Upstream": token}}))
	require.NoError(t, h.WaitReady(f.ctx, hub.Any))
	require.Eventually(t, func() bool { return len(h.Tools()) == 4 }, 10*time.Second, 10*time.Millisecond, "%v", names(h.Tools()))

	var qualified string
	for _, tl := range h.Tools() {
		require.NotContains(t, tl.Name, "Zq8vN3xP0aLr", "the secret's bytes in a qualified name")
		require.NotContains(t, tl.Name, "0123456789abcdef", "the command line's secret in a qualified name")
		if tl.ID == "t "+token {
			qualified = tl.Name
		}
		if tl.ID == "auth:login" {
			require.Regexp(t, `^s__auth_login_[0-9a-f]{10}$`, tl.Name)
		}
	}
	require.Regexp(t, `^s__t__redacted__[0-9a-f]{10}$`, qualified)
	for _, ev := range f.rec.Events() {
		b, err := ev.MarshalJSON()
		require.NoError(t, err)
		require.NotContains(t, string(b), "Zq8vN3xP0aLr", "the secret's bytes in a %s event", ev.Kind)
	}
	_, err := h.CallTool(f.ctx, &mcp.CallToolParams{Name: qualified, Arguments: mcptest.EchoArgs{Text: "hi"}})
	require.NoError(t, err, "the masked name routes to its tool")
	require.Equal(t, 1, f.servers["s"].Log().Count("tools/call"))
}

// A state saved for another endpoint is named in its event with that
// endpoint's secrets masked, and nothing else: its query values, here a
// server's name and a method, stay plain in every other event and name.
func TestForeignEndpointMasksOnlyItsOwnEvent(t *testing.T) {
	f := newFixture(t, map[string]mcptest.Options{"search": {}, "filesystem": {}})
	store := &hub.FileStore{Dir: t.TempDir()}
	state := `{"version":1,"server":"search","resume":{"version":1,"endpoint":"http://elsewhere/mcp?s=filesystem&m=tools/call&t=record&k=Zq8vN3xP0aLr7TmK","session_id":"abcdefgh12345678","protocol_version":"2025-11-25"}}`
	require.NoError(t, os.WriteFile(store.Path("search"), []byte(state), 0o600))
	h := f.hub(f.config(store))

	failed := f.eventsOf(hub.KindStoreFailed)
	require.Len(t, failed, 1)
	require.Equal(t, "search", failed[0].Server)
	require.Contains(t, failed[0].Detail, "saved for endpoint")
	require.NotContains(t, failed[0].Detail, "Zq8vN3xP0aLr7TmK", "the foreign endpoint's secret is masked in its event")
	_, err := h.CallTool(f.ctx, record("filesystem__record", "plain"))
	require.NoError(t, err, "filesystem's tools keep their names")
	_, err = h.CallTool(f.ctx, record("nosuch", "x"))
	require.ErrorContains(t, err, "nosuch")
	require.NotContains(t, err.Error(), "[redacted]")
	for _, ev := range f.rec.Events() {
		require.NotEqual(t, "[redacted]", ev.Server, "%s event", ev.Kind)
	}
	require.Equal(t, 1, f.servers["search"].Log().Count("initialize"), "search starts fresh")
}
