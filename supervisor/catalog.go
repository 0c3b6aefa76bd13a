package supervisor

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/probes"
)

// Catalog is what the server offered as last discovered (probes.Offer: the
// tools, resources, prompts and resource templates), and which session it
// came from. How each list settled is the probe-report event's. Its slices
// are shared and must not be modified.
type Catalog struct {
	probes.Offer
	// Generation is the session generation the catalog was listed on.
	Generation uint64
	// Stale reports that the supervisor is not ready (recovering, failed or
	// closed): the catalog is the last knowledge, not the live session's.
	Stale bool
}

// Diff returns what changed from prev to c, list by list.
func (c Catalog) Diff(prev Catalog) CatalogDiff { return diffOffers(prev.Offer, c.Offer) }

// ListDiff is the change of one catalog list: the keys that appeared,
// disappeared or changed definition (their JSON form differs), each sorted.
// The key is the name for tools and prompts, the URI for resources and the
// URI template for resource templates.
type ListDiff struct {
	Added, Removed, Changed []string
}

// Empty reports whether nothing changed.
func (d ListDiff) Empty() bool {
	return len(d.Added) == 0 && len(d.Removed) == 0 && len(d.Changed) == 0
}

// change is d as an event's list change, within the event's bounds of
// names (events.BoundNames); nil when empty.
func (d ListDiff) change() *events.ListChange {
	if d.Empty() {
		return nil
	}
	c := d.bounded()
	return &c
}

// bounded is d as an event carries it (events.BoundChange).
func (d ListDiff) bounded() events.ListChange {
	return events.BoundChange(d.Added, d.Removed, d.Changed)
}

func listDiffOf(c *events.ListChange) ListDiff {
	if c == nil {
		return ListDiff{}
	}
	return ListDiff{Added: c.Added, Removed: c.Removed, Changed: c.Changed}
}

// CatalogDiff is the change between two published catalogs, per list. A
// catalog-changed event carries it (CatalogDiffOf reads it back); it is
// never empty there.
type CatalogDiff struct {
	Tools, Prompts, Resources, ResourceTemplates ListDiff
}

// Empty reports whether no list changed.
func (d CatalogDiff) Empty() bool {
	return d.Tools.Empty() && d.Prompts.Empty() && d.Resources.Empty() && d.ResourceTemplates.Empty()
}

// CatalogDiffOf returns the diff a catalog-changed event carries (the
// tools in Added, Removed and Changed, the other lists in Prompts,
// Resources and ResourceTemplates), also after a round trip through the
// event's JSON form. Other kinds give the empty diff. An event carries at
// most events.MaxNames keys in each of a list's Added, Removed and Changed,
// each cut to events.MaxNameBytes (the event's Omitted, and each
// ListChange's, count those left off); [Catalog.Diff] of two catalogs is
// the whole change.
func CatalogDiffOf(e events.Event) CatalogDiff {
	if e.Kind != events.KindCatalogChanged {
		return CatalogDiff{}
	}
	return CatalogDiff{
		Tools:             ListDiff{Added: e.Added, Removed: e.Removed, Changed: e.Changed},
		Prompts:           listDiffOf(e.Prompts),
		Resources:         listDiffOf(e.Resources),
		ResourceTemplates: listDiffOf(e.ResourceTemplates),
	}
}

// event is the catalog-changed event of d for cat.
func (d CatalogDiff) event(cat *Catalog) events.Event {
	t := d.Tools.bounded()
	return events.Event{Kind: events.KindCatalogChanged, Generation: cat.Generation,
		Added: t.Added, Removed: t.Removed, Changed: t.Changed, Omitted: t.Omitted, Tools: len(cat.Tools),
		Prompts: d.Prompts.change(), Resources: d.Resources.change(), ResourceTemplates: d.ResourceTemplates.change()}
}

func diffOffers(old, cur probes.Offer) CatalogDiff {
	return CatalogDiff{
		Tools:             diffList(old.Tools, cur.Tools, func(t *mcp.Tool) string { return t.Name }),
		Prompts:           diffList(old.Prompts, cur.Prompts, func(p *mcp.Prompt) string { return p.Name }),
		Resources:         diffList(old.Resources, cur.Resources, func(r *mcp.Resource) string { return r.URI }),
		ResourceTemplates: diffList(old.ResourceTemplates, cur.ResourceTemplates, func(r *mcp.ResourceTemplate) string { return r.URITemplate }),
	}
}

// diffList compares two lists by key and, for a key in both, by the items'
// JSON form (only those are marshaled: a first catalog marshals nothing). A
// key listed twice counts once, by its last item.
func diffList[T any](old, cur []T, key func(T) string) ListDiff {
	before := make(map[string]T, len(old))
	for _, it := range old {
		before[key(it)] = it
	}
	var d ListDiff
	now := make(map[string]T, len(cur))
	for _, it := range cur {
		now[key(it)] = it
	}
	for k, it := range now {
		prev, ok := before[k]
		switch {
		case !ok:
			d.Added = append(d.Added, k)
		case !bytes.Equal(jsonOf(prev), jsonOf(it)):
			d.Changed = append(d.Changed, k)
		}
	}
	for k := range before {
		if _, ok := now[k]; !ok {
			d.Removed = append(d.Removed, k)
		}
	}
	slices.Sort(d.Added)
	slices.Sort(d.Removed)
	slices.Sort(d.Changed)
	return d
}

func jsonOf(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

// listSet is a set of catalog lists (bit i: probes.List i).
type listSet uint8

// allLists holds the four lists.
const allLists listSet = 1<<probes.Tools | 1<<probes.Resources | 1<<probes.Prompts | 1<<probes.ResourceTemplates

func setOf(lists ...probes.List) listSet {
	var s listSet
	for _, l := range lists {
		s |= 1 << l
	}
	return s
}

func (s listSet) has(l probes.List) bool { return s&(1<<l) != 0 }

// declaredLists is what a session's catalog is listed from: `tools/list`
// always (servers serve tools they do not declare), and the other lists as
// the server declared them (every list when its capabilities are unknown: a
// blind resume). A resources capability covers resources and resource
// templates (MCP spec, server capabilities).
func declaredLists(caps *mcp.ServerCapabilities) listSet {
	if caps == nil {
		return allLists
	}
	s := setOf(probes.Tools)
	if caps.Prompts != nil {
		s |= setOf(probes.Prompts)
	}
	if caps.Resources != nil {
		s |= setOf(probes.Resources, probes.ResourceTemplates)
	}
	return s
}

// lists returns the lists of s, for probes.ListOnly. Resources and resource
// templates share a capability, so either lists both.
func (s listSet) lists() []probes.List {
	if s.has(probes.Resources) || s.has(probes.ResourceTemplates) {
		s |= setOf(probes.Resources, probes.ResourceTemplates)
	}
	var out []probes.List
	for _, l := range probes.Lists() {
		if s.has(l) {
			out = append(out, l)
		}
	}
	return out
}

// relistedOffer is old with the lists a re-list settled replaced: a list
// that answered (present) or is not offered (-32601) takes the new items; a
// list that failed (degraded) or was not listed keeps the old ones, so a
// passing failure of a side list never reads as the server removing it.
func relistedOffer(old probes.Offer, cat probes.Catalog) probes.Offer {
	out := old
	for _, l := range probes.Lists() {
		switch cat.Report.Get(l).Status {
		case probes.Present, probes.Absent:
		default:
			continue
		}
		if cat.Report.Get(l).Reason == probes.NotDeclared {
			continue // not sent
		}
		switch l {
		case probes.Tools:
			out.Tools = cat.Tools
		case probes.Resources:
			out.Resources = cat.Resources
		case probes.Prompts:
			out.Prompts = cat.Prompts
		case probes.ResourceTemplates:
			out.ResourceTemplates = cat.ResourceTemplates
		}
	}
	return out
}

// noListCache makes every list request reach the server, and reports the
// server's ttlMs hint of each list result to ttl (nil: not reported; see
// ttl.go, which re-lists a list when its ttl runs out). go-sdk keeps the
// list results of a 2026-07-28 session for their ttlMs (SEP-2549) and
// serves a repeated list from that cache without a request, until a
// list_changed notification invalidates it (mcp/cache.go, ClientSession.
// ListTools); it has no API to skip the cache. The supervisor keeps the
// catalog itself and decides when to list (list_changed, RefreshCatalog,
// the poll, the ttl), so this sending middleware zeroes ttlMs in list
// results, which go-sdk then treats as stale at once: the catalog is never
// served from go-sdk's cache, and a forced re-list always reaches the
// server.
func noListCache(ttl func(probes.List, int)) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if err != nil {
				return res, err
			}
			list, c := cacheableOf(res)
			if c == nil {
				return res, nil
			}
			if ttl != nil {
				ttl(list, c.TTLMs)
			}
			c.TTLMs = 0
			return res, nil
		}
	}
}

// cacheableOf returns the list and the ttl hint of a list result; nil for
// any other result.
func cacheableOf(res mcp.Result) (probes.List, *mcp.Cacheable) {
	switch r := res.(type) {
	case *mcp.ListToolsResult:
		if r != nil {
			return probes.Tools, &r.Cacheable
		}
	case *mcp.ListPromptsResult:
		if r != nil {
			return probes.Prompts, &r.Cacheable
		}
	case *mcp.ListResourcesResult:
		if r != nil {
			return probes.Resources, &r.Cacheable
		}
	case *mcp.ListResourceTemplatesResult:
		if r != nil {
			return probes.ResourceTemplates, &r.Cacheable
		}
	}
	return 0, nil
}
