package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/httpsession"
	"github.com/mcpsup/mcpsup/probes"
)

// withEveryList declares prompts and resources too.
func withEveryList(f *fakeSession) *fakeSession {
	f.init.Capabilities = &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{},
		Prompts: &mcp.PromptCapabilities{}, Resources: &mcp.ResourceCapabilities{}}
	return f
}

func (f *fakeSession) sideLists(list string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sideCalls[list]
}

func (f *fakeSession) removeTool(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, t := range f.tools {
		if t.Name == name {
			f.tools = append(f.tools[:i:i], f.tools[i+1:]...)
			return
		}
	}
}

// A new session whose catalog is the same emits no catalog-changed: the
// first catalog is a change (everything added), a replacement is not.
func TestNewSessionWithTheSameCatalogEmitsNoCatalogChanged(t *testing.T) {
	r := newRig(t, Config{})
	old := newFakeSession("s1", "a", "b")
	r.ready(old)

	old.die(mcpSessionMissing())
	r.next().ok(newFakeSession("s2", "a", "b"))
	r.until("gen 2 ready", func() bool { return r.sup.Catalog().Generation == 2 && r.sup.State() == Ready })
	changed := r.eventsOf(events.KindCatalogChanged)
	require.Len(t, changed, 1, "only the first catalog was a change")
	require.Equal(t, []string{"a", "b"}, changed[0].Added)
	for _, e := range changed {
		require.False(t, CatalogDiffOf(e).Empty(), "no empty catalog-changed")
	}
}

// Prompts, resources and templates are diffed by name or URI; a
// list_changed re-lists only its list.
func TestListChangedRelistsOnlyItsListAndDiffsIt(t *testing.T) {
	r := newRig(t, Config{})
	r.sup.Start()
	req := r.next()
	sess := withEveryList(newFakeSession("s1", "a"))
	sess.prompts = []*mcp.Prompt{{Name: "p1"}, {Name: "p2", Description: "old"}}
	sess.resources = []*mcp.Resource{{URI: "file:///r1", Name: "r1"}}
	req.ok(sess)
	r.wait(Ready)
	first := r.eventsOf(events.KindCatalogChanged)
	require.Len(t, first, 1)
	require.Equal(t, ListDiff{Added: []string{"p1", "p2"}}, CatalogDiffOf(first[0]).Prompts)

	sess.mu.Lock()
	sess.prompts = []*mcp.Prompt{{Name: "p2", Description: "new"}, {Name: "p3"}}
	sess.mu.Unlock()
	req.spec.hooks.listChanged(probes.Prompts)
	changed := r.waitEvents(events.KindCatalogChanged, 2)[1]
	d := CatalogDiffOf(changed)
	require.Equal(t, ListDiff{Added: []string{"p3"}, Removed: []string{"p1"}, Changed: []string{"p2"}}, d.Prompts)
	require.True(t, d.Tools.Empty() && d.Resources.Empty() && d.ResourceTemplates.Empty(), "%+v", d)
	require.Equal(t, 1, sess.lists(), "a prompts list_changed sends no tools/list")
	require.Equal(t, 1, sess.sideLists("resources"))
	require.Equal(t, 2, sess.sideLists("prompts"))
	require.Equal(t, []string{"p2", "p3"}, []string{r.sup.Catalog().Prompts[0].Name, r.sup.Catalog().Prompts[1].Name})

	// The diff survives the event's JSON form.
	b, err := json.Marshal(changed)
	require.NoError(t, err)
	var back events.Event
	require.NoError(t, json.Unmarshal(b, &back))
	require.Equal(t, d, CatalogDiffOf(back))

	// resources/list_changed lists resources and templates, nothing else.
	sess.mu.Lock()
	sess.resources = nil
	sess.templates = []*mcp.ResourceTemplate{{URITemplate: "file:///{p}", Name: "t"}}
	sess.mu.Unlock()
	r.clock.Advance(DefaultRelistMinGap)
	req.spec.hooks.listChanged(probes.Resources)
	changed = r.waitEvents(events.KindCatalogChanged, 3)[2]
	d = CatalogDiffOf(changed)
	require.Equal(t, ListDiff{Removed: []string{"file:///r1"}}, d.Resources)
	require.Equal(t, ListDiff{Added: []string{"file:///{p}"}}, d.ResourceTemplates)
	require.True(t, d.Tools.Empty() && d.Prompts.Empty())
	require.Equal(t, 1, sess.lists())
	require.Equal(t, 2, sess.sideLists("prompts"))
}

// A re-list whose side list fails keeps that list's items: a passing
// failure is not the server removing them.
func TestFailedSideListKeepsItsItems(t *testing.T) {
	r := newRig(t, Config{})
	r.sup.Start()
	req := r.next()
	sess := withEveryList(newFakeSession("s1", "a"))
	sess.prompts = []*mcp.Prompt{{Name: "p1"}}
	req.ok(sess)
	r.wait(Ready)

	sess.mu.Lock()
	sess.sideErr = &classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", Method: "prompts/list", Status: 503}}
	sess.mu.Unlock()
	sess.addTool("b")
	require.NoError(t, r.sup.RefreshCatalog(r.ctx))
	require.Equal(t, []string{"a", "b"}, r.sup.Catalog().ToolNames())
	require.Len(t, r.sup.Catalog().Prompts, 1)
	last := r.eventsOf(events.KindCatalogChanged)
	require.Nil(t, last[len(last)-1].Prompts)
}

// A list_changed that arrives while discovery runs is kept: the catalog is
// re-listed once discovery published.
func TestListChangedDuringDiscoveryIsKept(t *testing.T) {
	r := newRig(t, Config{})
	r.sup.Start()
	req := r.next()
	sess := newFakeSession("s1", "a")
	gate := make(chan struct{})
	sess.listGate = gate
	req.ok(sess)
	r.until("discovery reading tools/list", func() bool { return sess.lists() == 1 })
	sess.addTool("z")
	req.spec.hooks.listChanged(probes.Tools) // during discovery
	sess.mu.Lock()
	sess.listGate = nil
	sess.mu.Unlock()
	close(gate)
	r.until("the change listed", func() bool { return r.sup.Catalog().Tool("z") != nil })
	require.Equal(t, 2, sess.lists())
	changed := r.eventsOf(events.KindCatalogChanged)
	require.Equal(t, []string{"z"}, changed[len(changed)-1].Added)
	require.Equal(t, uint64(1), r.sup.Generation())
}

// A server that sends tools/list_changed after every tools/list gets one
// re-list per RelistMinGap, however many notifications arrive: one runs,
// one waits.
func TestNotifyAfterEveryListIsBounded(t *testing.T) {
	const gap = 5 * time.Second
	r := newRig(t, Config{Limits: LimitsConfig{RelistMinGap: gap}})
	r.sup.Start()
	req := r.next()
	sess := newFakeSession("s1", "a")
	notify := func() {
		for range 3 { // a burst per list
			req.spec.hooks.listChanged(probes.Tools)
		}
	}
	sess.afterList = notify
	req.ok(sess)
	r.wait(Ready)

	// Discovery, then the re-list its notifications asked for at once; the
	// next one waits for the gap.
	r.until("the first re-list", func() bool { return sess.lists() == 2 })
	require.NoError(t, r.clock.BlockUntilContext(r.ctx, 1))
	for i := range 10 {
		notify() // more notifications within the gap join the waiting re-list
		require.Equal(t, 2+i, sess.lists(), "nothing before the gap passed")
		r.clock.Advance(gap)
		r.until("one re-list per gap", func() bool { return sess.lists() == 3+i })
		require.NoError(t, r.clock.BlockUntilContext(r.ctx, 1))
	}
	require.Equal(t, 12, sess.lists(), "10 gaps: discovery, the first re-list, one per gap")
	require.Len(t, r.eventsOf(events.KindCatalogChanged), 1, "nothing changed after the first catalog")
}

// RefreshCatalog lists on demand and returns once the result is published.
func TestRefreshCatalog(t *testing.T) {
	r := newRig(t, Config{})
	require.ErrorIs(t, r.sup.RefreshCatalog(r.ctx), ErrNotReady, "not started")
	sess := newFakeSession("s1", "a", "b")
	r.ready(sess)

	sess.addTool("c")
	sess.removeTool("a")
	require.NoError(t, r.sup.RefreshCatalog(r.ctx))
	require.Equal(t, []string{"b", "c"}, r.sup.Catalog().ToolNames(), "published when it returns")
	require.Equal(t, 2, sess.lists())
	changed := r.eventsOf(events.KindCatalogChanged)
	d := CatalogDiffOf(changed[len(changed)-1])
	require.Equal(t, ListDiff{Added: []string{"c"}, Removed: []string{"a"}}, d.Tools)

	// The next refresh waits for the gap; two callers share one list.
	errs := make(chan error, 2)
	for range 2 {
		go func() { errs <- r.sup.RefreshCatalog(r.ctx) }()
	}
	require.NoError(t, r.clock.BlockUntilContext(r.ctx, 1))
	r.untilLoop("both refreshes queued", func() bool { return len(r.sup.loopWaiters()) == 2 })
	r.clock.Advance(DefaultRelistMinGap)
	require.NoError(t, <-errs)
	require.NoError(t, <-errs)
	require.Equal(t, 3, sess.lists(), "coalesced")

	// A failed tools/list: a typed error, the catalog kept.
	sess.mu.Lock()
	sess.listErr = &classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", Method: "tools/list", Status: 403}}
	sess.mu.Unlock()
	r.clock.Advance(DefaultRelistMinGap)
	err := r.sup.RefreshCatalog(r.ctx)
	var le *probes.ListError
	require.ErrorAs(t, err, &le)
	require.Equal(t, classify.Forbidden, le.Verdict.Class)
	require.Equal(t, []string{"b", "c"}, r.sup.Catalog().ToolNames())
	require.Equal(t, Ready, r.sup.State())

	require.NoError(t, r.sup.Close())
	require.ErrorIs(t, r.sup.RefreshCatalog(r.ctx), ErrClosed)
}

// loopWaiters is for tests only: the refresh calls waiting (read after
// r.events(), when the loop is idle).
func (s *Supervisor) loopWaiters() []refreshWaiter {
	done := make(chan []refreshWaiter, 1)
	s.post(func(s *Supervisor) { done <- append([]refreshWaiter(nil), s.loop.cat.waiters...) })
	return <-done
}

// untilLoop re-asks the loop until cond holds: for what the loop alone
// knows (nothing rings when it changes). It yields between tries.
func (r *rig) untilLoop(what string, cond func() bool) {
	r.t.Helper()
	for !cond() {
		if r.ctx.Err() != nil {
			r.t.Fatalf("waiting for %s: %v", what, r.ctx.Err())
		}
		runtime.Gosched()
	}
}

// A refresh asked right after Start, while the state may still be idle
// (the loop has not taken the start yet), waits for the first catalog
// instead of failing "not started" as it did; before Start it says so.
func TestRefreshRightAfterStartWaitsForTheFirstCatalog(t *testing.T) {
	r := newRig(t, Config{})
	err := r.sup.RefreshCatalog(r.ctx)
	require.ErrorIs(t, err, ErrNotReady)
	require.Contains(t, err.Error(), "Start was not called")
	r.sup.Start()
	r.sup.mu.Lock()
	require.NoError(t, r.sup.refusalLocked(), "idle after Start is no refusal")
	r.sup.mu.Unlock()
	done := make(chan error, 1)
	go func() { done <- r.sup.RefreshCatalog(r.ctx) }()
	r.next().ok(newFakeSession("s1", "a"))
	require.NoError(t, <-done)
	require.Equal(t, []string{"a"}, r.sup.Catalog().ToolNames())
}

// A refresh asked while the connection recovers is served by the next
// published catalog.
func TestRefreshDuringRecoveryWaitsForTheNextCatalog(t *testing.T) {
	r := newRig(t, Config{})
	old := newFakeSession("s1", "a")
	r.ready(old)
	old.die(mcpSessionMissing())
	req := r.next() // connecting, gen 2
	errc := make(chan error, 1)
	go func() { errc <- r.sup.RefreshCatalog(r.ctx) }()
	r.untilLoop("the refresh queued", func() bool { return len(r.sup.loopWaiters()) == 1 })
	fresh := newFakeSession("s2", "a", "n")
	req.ok(fresh)
	require.NoError(t, <-errc)
	require.Equal(t, []string{"a", "n"}, r.sup.Catalog().ToolNames())
	require.Equal(t, 1, fresh.lists(), "the discovery served it")
}

// With the stream off, the catalog is polled every CatalogPollInterval on
// the clock: an added and a removed tool are seen after one interval.
func TestStreamOffPollsTheCatalog(t *testing.T) {
	r := newRig(t, Config{Stream: StreamConfig{Policy: StreamOff}, Limits: LimitsConfig{CatalogPollInterval: time.Minute}})
	sess := newFakeSession("s1", "a", "b")
	r.ready(sess)
	sess.addTool("c")
	sess.removeTool("a")

	require.NoError(t, r.clock.BlockUntilContext(r.ctx, 1), "the poll timer")
	r.clock.Advance(time.Minute - time.Nanosecond)
	require.Equal(t, 1, sess.lists(), "not before the interval")
	r.clock.Advance(time.Nanosecond)
	r.until("the polled catalog", func() bool { return r.sup.Catalog().Tool("c") != nil })
	require.Nil(t, r.sup.Catalog().Tool("a"))
	changed := r.eventsOf(events.KindCatalogChanged)
	d := CatalogDiffOf(changed[len(changed)-1])
	require.Equal(t, ListDiff{Added: []string{"c"}, Removed: []string{"a"}}, d.Tools)

	// And again, one interval later: polling goes on; an unchanged catalog
	// emits nothing.
	require.NoError(t, r.clock.BlockUntilContext(r.ctx, 1))
	r.clock.Advance(time.Minute)
	r.until("the second poll", func() bool { return sess.lists() == 3 })
	require.Len(t, r.eventsOf(events.KindCatalogChanged), len(changed))
}

// With the stream on, nothing is polled; with a stream refused (a
// remembered GET-hostile decision), the catalog is polled.
func TestStreamOnDoesNotPoll(t *testing.T) {
	r := newRig(t, Config{Limits: LimitsConfig{CatalogPollInterval: time.Minute}})
	r.ready(newFakeSession("s1", "a"))
	require.False(t, r.sup.pollArmed())
}

func TestRefusedStreamPollsTheCatalog(t *testing.T) {
	r := newRig(t, Config{Stream: StreamConfig{HostileMemory: time.Hour}, Limits: LimitsConfig{CatalogPollInterval: 10 * time.Minute}})
	rs := &ResumeState{Version: ResumeStateVersion, ResumeState: httpsession.ResumeState{SessionID: "s1", ProtocolVersion: "2025-11-25",
		InitializeResult: &mcp.InitializeResult{ProtocolVersion: "2025-11-25", Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}}},
		StandaloneStream: StreamDecision{Off: true, DecidedAt: r.clock.Now()}}
	r.sup.cfg.Resume = rs
	r.sup = newSupervisor(r.sup.cfg, r.conn)
	t.Cleanup(func() { _ = r.sup.Close() })
	r.sup.Start()
	sess := newFakeSession("s1", "a")
	r.next().ok(sess)
	r.wait(Ready)
	require.True(t, r.sup.pollArmed())

	sess.addTool("b")
	r.clock.Advance(10 * time.Minute)
	r.until("the polled catalog", func() bool { return r.sup.Catalog().Tool("b") != nil })
}

// pollArmed reports whether a poll timer is armed (tests only).
func (s *Supervisor) pollArmed() bool {
	done := make(chan bool, 1)
	s.post(func(s *Supervisor) { done <- s.loop.cat.poll != nil })
	return <-done
}

func TestCatalogDiffOfOtherKindsIsEmpty(t *testing.T) {
	require.True(t, CatalogDiffOf(events.Event{Kind: events.KindTransition, Added: []string{"x"}}).Empty())
	require.False(t, CatalogDiffOf(events.Event{Kind: events.KindCatalogChanged, Resources: &events.ListChange{Added: []string{"u"}}}).Empty())
}

// go-sdk serves a cached list for its ttlMs on a 2026-07-28 session; the
// supervisor's middleware zeroes ttlMs, so go-sdk never answers from its
// cache.
func TestNoListCacheZeroesTTL(t *testing.T) {
	res := &mcp.ListToolsResult{Cacheable: mcp.Cacheable{TTLMs: 60_000}}
	next := func(context.Context, string, mcp.Request) (mcp.Result, error) { return res, nil }
	gotList := probes.List(255)
	gotTTL := 0
	got, err := noListCache(func(l probes.List, ms int) { gotList, gotTTL = l, ms })(next)(context.Background(), "tools/list", nil)
	require.NoError(t, err)
	require.Zero(t, got.(*mcp.ListToolsResult).TTLMs)
	require.Equal(t, probes.Tools, gotList)
	require.Equal(t, 60_000, gotTTL, "the hint is reported before it is zeroed")

	boom := errors.New("boom")
	failing := func(context.Context, string, mcp.Request) (mcp.Result, error) {
		return (*mcp.ListToolsResult)(nil), boom
	}
	_, err = noListCache(nil)(failing)(context.Background(), "tools/list", nil)
	require.ErrorIs(t, err, boom)
}
