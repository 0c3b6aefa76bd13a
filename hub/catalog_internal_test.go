package hub

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/probes"
	"github.com/mcpsup/mcpsup/supervisor"
)

// slowSchema is an input schema whose marshaling waits for release, after
// telling entered.
type slowSchema struct{ entered, release chan struct{} }

func (s slowSchema) MarshalJSON() ([]byte, error) {
	close(s.entered)
	<-s.release
	return []byte(`{"type":"object"}`), nil
}

func catalogOf(ts ...*mcp.Tool) supervisor.Catalog {
	return supervisor.Catalog{Offer: probes.Offer{Tools: ts}}
}

// TestCatalogIsMarshaledWithoutTheRoutingLock: while one server's catalog
// is being marshaled (its definitions hashed to tell a change, measured
// against the bounds), the routing lock is free: calls to every other
// server route meanwhile. Before, a catalog change held it across the
// marshaling of every item (8 MiB descriptions: about 0.5 s of every
// server's calls waiting).
func TestCatalogIsMarshaledWithoutTheRoutingLock(t *testing.T) {
	h := New(Config{})
	eb := &entry{name: "b"}
	h.servers["b"] = eb // for route's look-up; not started
	t.Cleanup(func() { delete(h.servers, "b"); _ = h.Close() })
	h.updateCatalog(eb, catalogOf(&mcp.Tool{Name: "t"}), false)

	slow := slowSchema{entered: make(chan struct{}), release: make(chan struct{})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.updateCatalog(&entry{name: "a"}, catalogOf(&mcp.Tool{Name: "t", InputSchema: slow}), false)
	}()
	<-slow.entered
	var e *entry
	var id string
	var ce *CallError
	free := h.catMu.TryLock()
	if free {
		h.catMu.Unlock()
		e, id, ce = route(h, h.tools, "tools/call", "b__t")
	}
	close(slow.release)
	<-done
	require.True(t, free, "the routing lock is free while a catalog is marshaled")
	require.Nil(t, ce)
	require.Equal(t, eb, e)
	require.Equal(t, "t", id)
	require.Len(t, h.Tools(), 2, "a's catalog merged after")
}

// TestCatalogOverItsBoundIsRefused: a catalog over MaxCatalogItems or
// MaxCatalogBytes is not merged; the server's items stay those merged
// before, and a KindCatalogRefused event names the server and what was
// over. Before, no bound covered a whole catalog (pages × the JSON bound:
// 1.6 GiB of one list).
func TestCatalogOverItsBoundIsRefused(t *testing.T) {
	rec := &events.Recorder{}
	h := New(Config{MaxCatalogItems: 3, MaxCatalogBytes: 1000, Events: rec})
	t.Cleanup(func() { _ = h.Close() })
	e := &entry{name: "s"}
	names := func() []string {
		var out []string
		for _, tl := range h.Tools() {
			out = append(out, tl.Name)
		}
		return out
	}
	refused := func() []events.Event {
		var out []events.Event
		for _, ev := range rec.Events() {
			if ev.Kind == KindCatalogRefused {
				out = append(out, ev)
			}
		}
		return out
	}

	h.updateCatalog(e, catalogOf(tools("a", "b")...), false)
	require.Equal(t, []string{"s__a", "s__b"}, names())
	require.Empty(t, refused())

	h.updateCatalog(e, catalogOf(tools("a", "b", "c", "d")...), false)
	require.Equal(t, []string{"s__a", "s__b"}, names(), "4 items > 3: the items merged before stay")
	require.Len(t, refused(), 1)
	require.Equal(t, "s", refused()[0].Server)
	require.Equal(t, events.Event{Kind: KindCatalogRefused, Server: "s", Op: "items", Count: 4, Bound: 3}, refused()[0])

	h.updateCatalog(e, catalogOf(&mcp.Tool{Name: "a", Description: strings.Repeat("x", 2000)}), false)
	require.Equal(t, []string{"s__a", "s__b"}, names(), "2000 bytes > 1000: the items merged before stay")
	require.Len(t, refused(), 2)
	require.Equal(t, "bytes", refused()[1].Op)
	require.Greater(t, refused()[1].Count, 2000)
	require.Equal(t, 1000, refused()[1].Bound)

	h.updateCatalog(e, catalogOf(tools("c")...), false)
	require.Equal(t, []string{"s__c"}, names(), "a catalog within the bounds is merged")
}
