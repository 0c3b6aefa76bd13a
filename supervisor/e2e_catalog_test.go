package supervisor_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/supervisor"
)

// catalogChanged waits for the nth catalog-changed event and returns it.
func catalogChanged(t *testing.T, ctx context.Context, rec *events.Recorder, n int) events.Event {
	t.Helper()
	evs, err := rec.WaitFor(ctx, func(evs []events.Event) bool { return countKind(evs, events.KindCatalogChanged) >= n })
	require.NoError(t, err, "catalog-changed #%d", n)
	var got []events.Event
	for _, e := range evs {
		if e.Kind == events.KindCatalogChanged {
			got = append(got, e)
		}
	}
	return got[n-1]
}

func countKind(evs []events.Event, k events.Kind) int {
	n := 0
	for _, e := range evs {
		if e.Kind == k {
			n++
		}
	}
	return n
}

// With the stream off, a tool added and a tool removed on the server are
// seen after one poll interval (on the supervisor's clock), with one
// tools/list; no catalog-changed is ever empty.
func TestE2EStreamOffPollSeesAddedAndRemovedTools(t *testing.T) {
	clock := clockwork.NewFakeClock()
	const every = time.Minute
	e := newE2E(t, mcptest.Options{Tools: 2}, supervisor.Config{Stream: supervisor.StreamConfig{Policy: supervisor.StreamOff}, Limits: supervisor.LimitsConfig{CatalogPollInterval: every}, Observe: supervisor.ObserveConfig{Clock: clock}})
	e.start()
	require.Equal(t, 1, e.srv.Log().Count("tools/list"))

	e.srv.AddTool("added")
	require.True(t, e.srv.RemoveTool(mcptest.ToolName(1)))
	require.NoError(t, clock.BlockUntilContext(e.ctx, 1), "the poll timer")
	clock.Advance(every)
	changed := catalogChanged(t, e.ctx, e.rec, 2)
	d := supervisor.CatalogDiffOf(changed)
	require.Equal(t, supervisor.ListDiff{Added: []string{"added"}, Removed: []string{mcptest.ToolName(1)}}, d.Tools)
	require.Equal(t, e.srv.ToolNames(), sortedNames(e.sup.Catalog()))
	require.Equal(t, 2, e.srv.Log().Count("tools/list"), "one list per poll")
	require.Zero(t, e.srv.Log().CountVerb("GET"))
	require.Equal(t, 1, e.srv.Log().Count("initialize"))

	_, err := e.sup.CallTool(e.ctx, &mcp.CallToolParams{Name: "added", Arguments: map[string]any{}})
	require.NoError(t, err)
	for _, ev := range e.eventsOf(events.KindCatalogChanged) {
		require.False(t, supervisor.CatalogDiffOf(ev).Empty(), "no empty catalog-changed: %+v", ev)
	}
}

func sortedNames(c supervisor.Catalog) []string {
	names := c.ToolNames()
	for i := range names {
		for j := i + 1; j < len(names); j++ {
			if names[j] < names[i] {
				names[i], names[j] = names[j], names[i]
			}
		}
	}
	return names
}

// A server that sends tools/list_changed after every tools/list gets one
// re-list per RelistMinGap on the supervisor's clock, however many
// notifications arrive; a new session with the same catalog emits no
// catalog-changed.
func TestE2ENotifyAfterEveryListIsBounded(t *testing.T) {
	clock := clockwork.NewFakeClock()
	const gap = time.Minute
	var heard atomic.Int64
	cfg := fastStream(supervisor.Config{Observe: supervisor.ObserveConfig{Clock: clock}, Limits: supervisor.LimitsConfig{RelistMinGap: gap}, Stream: supervisor.StreamConfig{Policy: supervisor.StreamOn}})
	cfg.Client.ClientOptions.ToolListChangedHandler = func(context.Context, *mcp.ToolListChangedRequest) { heard.Add(1) }
	e := newE2E(t, mcptest.Options{Tools: 1}, cfg)
	e.start()
	require.NoError(t, e.srv.Log().WaitVerb(e.ctx, "GET", 1), "the stream carries the notifications")

	// The server notifies after every tools/list: it re-adds a tool.
	ctx, stop := context.WithCancel(e.ctx)
	defer stop()
	go func() {
		for n := 1; ; n++ {
			if e.srv.Log().WaitCount(ctx, "tools/list", n) != nil {
				return
			}
			e.srv.AddTool(mcptest.ToolName(1))
		}
	}()

	// Discovery's list set it off: one re-list at once, then the gap holds
	// the next one, while the notifications keep coming.
	require.NoError(t, e.srv.Log().WaitCount(e.ctx, "tools/list", 2))
	require.Eventually(t, func() bool { return heard.Load() >= 2 }, e2eTimeout, time.Millisecond, "the re-list's notification")
	for range 3 { // more notifications within the gap (go-sdk merges those 10ms apart)
		before := heard.Load()
		e.srv.AddTool(mcptest.ToolName(1))
		require.Eventually(t, func() bool { return heard.Load() > before }, e2eTimeout, time.Millisecond)
	}
	require.Equal(t, 2, e.srv.Log().Count("tools/list"), "nothing before the gap passed")

	for i := range 3 {
		clock.Advance(gap)
		require.NoError(t, e.srv.Log().WaitCount(e.ctx, "tools/list", 3+i), "one re-list per gap")
	}
	stop()
	require.Equal(t, 5, e.srv.Log().Count("tools/list"), "discovery, the first re-list, one per gap")
	require.Len(t, e.eventsOf(events.KindCatalogChanged), 1, "the catalog never changed after the first")
	require.Equal(t, uint64(1), e.sup.Generation())
}

// A 2026-07-28 server that lets clients cache its lists for an hour
// (ttlMs, SEP-2549) still sees every re-list: go-sdk's cache is bypassed.
func TestE2ERefreshBypassesTheListCache(t *testing.T) {
	ts, lists := ttlServer(t, time.Hour)
	sup := mustNew(t, supervisor.Config{Endpoint: ts.URL, HTTP: supervisor.HTTPConfig{HTTPClient: ts.Client()}, Limits: supervisor.LimitsConfig{RelistMinGap: time.Nanosecond}})
	sup.Start()
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	require.NoError(t, sup.WaitForState(ctx, supervisor.Ready))
	require.Equal(t, int64(1), lists.Load())
	for i := range 2 {
		require.NoError(t, sup.RefreshCatalog(ctx))
		require.Equal(t, int64(2+i), lists.Load(), "every refresh reaches the server")
	}
}

// countingServer serves srv (stateful, 2025-era) and counts the requests
// of each JSON-RPC method.
func countingServer(t *testing.T, srv *mcp.Server) (*httptest.Server, func(method string) int64) {
	t.Helper()
	var mu sync.Mutex
	counts := map[string]int64{}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		var msg struct {
			Method string `json:"method"`
		}
		mu.Lock()
		if r.Method == http.MethodGet {
			counts["GET"]++
		} else if json.Unmarshal(body, &msg) == nil && msg.Method != "" {
			counts[msg.Method]++
		}
		mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts, func(method string) int64 {
		mu.Lock()
		defer mu.Unlock()
		return counts[method]
	}
}

// prompts/list_changed re-lists the prompts alone, resources/list_changed
// the resources and templates alone; each diff names what changed.
func TestE2EListChangedRelistsOnlyItsList(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "lists", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "a"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	})
	promptHandler := func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{}, nil
	}
	readHandler := func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{}, nil
	}
	srv.AddPrompt(&mcp.Prompt{Name: "p1"}, promptHandler)
	srv.AddResource(&mcp.Resource{URI: "file:///r1", Name: "r1"}, readHandler)
	ts, count := countingServer(t, srv)
	rec := &events.Recorder{}
	sup := mustNew(t, fastStream(supervisor.Config{Endpoint: ts.URL, Era: supervisor.Era2025, HTTP: supervisor.HTTPConfig{HTTPClient: ts.Client()}, Observe: supervisor.ObserveConfig{Events: rec}}))
	sup.Start()
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	require.NoError(t, sup.WaitForState(ctx, supervisor.Ready))
	first := catalogChanged(t, ctx, rec, 1)
	require.Equal(t, []string{"p1"}, supervisor.CatalogDiffOf(first).Prompts.Added)
	lists := func() [4]int64 {
		return [4]int64{count("tools/list"), count("prompts/list"), count("resources/list"), count("resources/templates/list")}
	}
	require.Equal(t, [4]int64{1, 1, 1, 1}, lists())
	require.Eventually(t, func() bool { return count("GET") > 0 }, e2eTimeout, time.Millisecond, "the stream carries the notifications")

	srv.AddPrompt(&mcp.Prompt{Name: "p2"}, promptHandler)
	d := supervisor.CatalogDiffOf(catalogChanged(t, ctx, rec, 2))
	require.Equal(t, supervisor.ListDiff{Added: []string{"p2"}}, d.Prompts)
	require.True(t, d.Tools.Empty() && d.Resources.Empty() && d.ResourceTemplates.Empty())
	require.Equal(t, [4]int64{1, 2, 1, 1}, lists(), "prompts only")

	srv.RemoveResources("file:///r1")
	srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "file:///{p}", Name: "t"}, readHandler)
	require.Eventually(t, func() bool {
		c := sup.Catalog()
		return len(c.Resources) == 0 && len(c.ResourceTemplates) == 1
	}, e2eTimeout, time.Millisecond, "resources/list_changed re-listed resources and templates")
	// The removal and the addition may come as one re-list or two, and
	// events reach the sink after the catalog is published: wait for the
	// event that names the template.
	_, err := rec.WaitFor(ctx, func(evs []events.Event) bool {
		for _, ev := range evs {
			if ev.Kind == events.KindCatalogChanged && supervisor.CatalogDiffOf(ev).ResourceTemplates.Added != nil {
				return true
			}
		}
		return false
	})
	require.NoError(t, err)
	var added []string
	for _, ev := range eventsOf(rec, events.KindCatalogChanged) {
		added = append(added, supervisor.CatalogDiffOf(ev).ResourceTemplates.Added...)
	}
	require.Equal(t, []string{"file:///{p}"}, added)
	require.Equal(t, "file:///{p}", sup.Catalog().ResourceTemplates[0].URITemplate)
	l := lists()
	require.Equal(t, [2]int64{1, 2}, [2]int64{l[0], l[1]}, "no tools/list, no prompts/list")
	for _, ev := range eventsOf(rec, events.KindCatalogChanged) {
		require.False(t, supervisor.CatalogDiffOf(ev).Empty())
	}
}

// A tools/list_changed that arrives while discovery still waits for a side
// list is kept: once discovery published, the tools are listed again.
func TestE2EListChangedDuringDiscoveryIsCaught(t *testing.T) {
	var sup atomic.Pointer[supervisor.Supervisor]
	heardIn := make(chan supervisor.State, 8)
	cfg := fastStream(supervisor.Config{})
	cfg.Client.ClientOptions.ToolListChangedHandler = func(context.Context, *mcp.ToolListChangedRequest) { heardIn <- sup.Load().State() }
	e := newE2E(t, mcptest.Options{Tools: 1, Prompts: 1}, cfg)
	sup.Store(e.sup)
	e.srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Verb: "POST", Method: "prompts/list", Occurrence: mcptest.First()},
		Action: mcptest.Delay(time.Second)})
	e.sup.Start()
	answered := func(method string) func(mcptest.Entry) bool {
		return func(x mcptest.Entry) bool { return x.Method == method && x.Done && x.Status == http.StatusOK }
	}
	require.NoError(t, e.srv.Log().WaitFunc(e.ctx, 1, answered("tools/list")), "discovery's tools/list answered")
	require.NoError(t, e.srv.Log().WaitVerb(e.ctx, "GET", 1), "the stream carries the notification")
	e.srv.AddTool("during-discovery")
	select {
	case st := <-heardIn:
		require.Equal(t, supervisor.Connecting, st, "the notification arrived during discovery")
	case <-e.ctx.Done():
		t.Fatal("no tools/list_changed arrived")
	}
	require.NoError(t, e.sup.WaitForState(e.ctx, supervisor.Ready))
	require.Eventually(t, func() bool { return e.sup.Catalog().Tool("during-discovery") != nil }, e2eTimeout, time.Millisecond)
	require.Equal(t, 2, e.srv.Log().Count("tools/list"))
	require.Equal(t, uint64(1), e.sup.Generation())
}

// A server names its own tools and says how many there are: one tools/list
// answer with a 2 MiB name and more tools than an event carries made a
// catalog-changed event of megabytes, a JSON line events.ReadJSONLines
// refuses. The event carries at most events.MaxNames names of at most
// events.MaxNameBytes, counts the rest in Omitted, and its recording reads
// back; the catalog itself keeps every tool whole.
func TestCatalogEventNamesAreBounded(t *testing.T) {
	long := "a" + strings.Repeat("é", 1<<20) // 2 MiB, the first name sorted; cut at a rune boundary
	e := newE2E(t, mcptest.Options{Tools: 3 * events.MaxNames}, supervisor.Config{Stream: supervisor.StreamConfig{Policy: supervisor.StreamOff}})
	e.srv.AddTool(long)
	e.start()
	cat := e.sup.Catalog()
	require.Contains(t, cat.ToolNames(), long, "the catalog keeps the name whole")

	var buf bytes.Buffer
	sink := events.NewJSONLines(&buf)
	for _, ev := range e.rec.Events() {
		sink.Emit(ev)
	}
	require.NoError(t, sink.Err())
	evs, err := events.ReadJSONLines(&buf)
	require.NoError(t, err, "the recording reads back")
	var changed []events.Event
	for _, ev := range evs {
		if ev.Kind == events.KindCatalogChanged {
			changed = append(changed, ev)
		}
	}
	require.Len(t, changed, 1)
	ev := changed[0]
	require.Len(t, ev.Added, events.MaxNames)
	require.Equal(t, ev.Added[0], events.CutName(long))
	require.True(t, strings.HasSuffix(ev.Added[0], "…"))
	require.Equal(t, len(cat.Tools)-events.MaxNames, ev.Omitted, "every tool is added or omitted")
	require.Equal(t, len(cat.Tools), ev.Tools)
	for _, n := range ev.Added {
		require.LessOrEqual(t, len(n), events.MaxNameBytes)
		require.True(t, utf8.ValidString(n))
	}
	require.Contains(t, events.Summary(ev), fmt.Sprintf("…%d more", ev.Omitted))
}

// TestPageOverMaxItemsIsRefusedBeforeDecoding: Config.Limits.MaxItems reaches the
// wire layer, so one page with more tools than the bound is refused before
// go-sdk decodes it: tools/list fails with a protocol verdict naming the
// bound, on the session, which is not replaced.
func TestPageOverMaxItemsIsRefusedBeforeDecoding(t *testing.T) {
	e := newE2E(t, mcptest.Options{Tools: 40}, supervisor.Config{
		Stream:   supervisor.StreamConfig{Policy: supervisor.StreamOff},
		Limits:   supervisor.LimitsConfig{MaxItems: 20},
		Recovery: supervisor.RecoveryConfig{ListingRetries: -1},
		Observe:  supervisor.ObserveConfig{Clock: clockwork.NewFakeClock()},
	}) // no retry runs
	e.sup.Start()
	evs, err := e.rec.WaitFor(e.ctx, func(evs []events.Event) bool { return countKind(evs, events.KindProbeReport) >= 1 })
	require.NoError(t, err)
	var report events.Event
	for _, ev := range evs {
		if ev.Kind == events.KindProbeReport {
			report = ev
			break
		}
	}
	require.NotEmpty(t, report.Lists)
	tools := report.Lists[0]
	require.Equal(t, "tools", tools.List)
	require.Equal(t, events.ListFailed, tools.Status)
	require.Equal(t, classify.Protocol, tools.Verdict.Class)
	require.Contains(t, tools.Verdict.Detail, "tools/list result with more than 20 tools")
	require.Equal(t, 1, e.srv.Log().Count("tools/list"), "one page, refused")
}
