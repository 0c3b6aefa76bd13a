package supervisor

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/probes"
	seam "github.com/mcpsup/mcpsup/session"
)

// Catalog is what the server offered as last discovered, and on which
// session. Its slices are shared and must not be modified.
type Catalog struct {
	probes.Offer
	Generation uint64 // the session it was listed on
	Stale      bool   // the supervisor is not ready: the last knowledge
}

// Diff returns what changed from prev to c, list by list.
func (c Catalog) Diff(prev Catalog) CatalogDiff {
	old, cur := prev.Offer, c.Offer
	return CatalogDiff{
		Tools:             diffList(old.Tools, cur.Tools, func(t *mcp.Tool) string { return t.Name }),
		Prompts:           diffList(old.Prompts, cur.Prompts, func(p *mcp.Prompt) string { return p.Name }),
		Resources:         diffList(old.Resources, cur.Resources, func(r *mcp.Resource) string { return r.URI }),
		ResourceTemplates: diffList(old.ResourceTemplates, cur.ResourceTemplates, func(r *mcp.ResourceTemplate) string { return r.URITemplate }),
	}
}

// ListDiff is the change of one catalog list: the keys (name, URI or URI
// template) that appeared, disappeared or changed JSON form, each sorted.
type ListDiff struct {
	Added, Removed, Changed []string
}

// Empty reports whether nothing changed.
func (d ListDiff) Empty() bool {
	return len(d.Added) == 0 && len(d.Removed) == 0 && len(d.Changed) == 0
}

// change is d as an event's bounded list change; nil when empty.
func (d ListDiff) change() *events.ListChange {
	if d.Empty() {
		return nil
	}
	c := events.BoundChange(d.Added, d.Removed, d.Changed)
	return &c
}

func listDiffOf(c *events.ListChange) ListDiff {
	if c == nil {
		return ListDiff{}
	}
	return ListDiff{Added: c.Added, Removed: c.Removed, Changed: c.Changed}
}

// CatalogDiff is the change between two published catalogs, per list, as
// a catalog-changed event carries it.
type CatalogDiff struct {
	Tools, Prompts, Resources, ResourceTemplates ListDiff
}

// Empty reports whether no list changed.
func (d CatalogDiff) Empty() bool {
	return d.Tools.Empty() && d.Prompts.Empty() && d.Resources.Empty() && d.ResourceTemplates.Empty()
}

// CatalogDiffOf returns the diff a catalog-changed event carries, also
// after a JSON round trip; other kinds give the empty diff. The event's
// lists are bounded (events.MaxNames, events.MaxNameBytes; Omitted counts
// the rest): [Catalog.Diff] is the whole change.
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

func (d CatalogDiff) event(cat *Catalog) events.Event {
	t := events.BoundChange(d.Tools.Added, d.Tools.Removed, d.Tools.Changed)
	return events.Event{Kind: events.KindCatalogChanged, Generation: cat.Generation,
		Added: t.Added, Removed: t.Removed, Changed: t.Changed, Omitted: t.Omitted, Tools: len(cat.Tools),
		Prompts: d.Prompts.change(), Resources: d.Resources.change(), ResourceTemplates: d.ResourceTemplates.change()}
}

// diffList compares two lists by key and, for a key in both, by JSON form;
// a key listed twice counts by its last item.
func diffList[T any](old, cur []T, key func(T) string) ListDiff {
	jsonOf := func(items []T) map[string]string {
		m := make(map[string]string, len(items))
		for _, it := range items {
			b, _ := json.Marshal(it)
			m[key(it)] = string(b)
		}
		return m
	}
	before, now := jsonOf(old), jsonOf(cur)
	var d ListDiff
	for k, it := range now {
		if prev, ok := before[k]; !ok {
			d.Added = append(d.Added, k)
		} else if prev != it {
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

// listSet is a set of catalog lists (bit i: probes.List i).
type listSet uint8

const allLists listSet = 1<<probes.Tools | 1<<probes.Resources | 1<<probes.Prompts | 1<<probes.ResourceTemplates

func setOf(lists ...probes.List) listSet {
	var s listSet
	for _, l := range lists {
		s |= 1 << l
	}
	return s
}

func (s listSet) has(l probes.List) bool { return s&(1<<l) != 0 }

// declaredLists is what sess's catalog is listed from: `tools/list`
// always (servers serve undeclared tools), the others as declared (all
// when unknown); resources covers resource templates.
func declaredLists(sess seam.Session) listSet {
	caps := capabilitiesOf(sess)
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

// lists returns s's lists, resources and templates together.
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

func listsWhere(r probes.Report, match func(probes.ListReport) bool) listSet {
	var set listSet
	for _, l := range r.Lists {
		if match(l) {
			set |= setOf(l.List)
		}
	}
	return set
}

// settledList matches a list a discovery settled: listed, or -32601.
func settledList(l probes.ListReport) bool {
	return l.Status == probes.Present || l.Status == probes.Absent && l.Reason != probes.NotDeclared
}

// relistedOffer is old with the lists a re-list settled replaced; a
// failed or unlisted list keeps its old items.
func relistedOffer(old probes.Offer, cat probes.Catalog) probes.Offer {
	set := listsWhere(cat.Report, settledList)
	if set.has(probes.Tools) {
		old.Tools = cat.Tools
	}
	if set.has(probes.Resources) {
		old.Resources = cat.Resources
	}
	if set.has(probes.Prompts) {
		old.Prompts = cat.Prompts
	}
	if set.has(probes.ResourceTemplates) {
		old.ResourceTemplates = cat.ResourceTemplates
	}
	return old
}

// noListCache reports each list result's ttlMs (SEP-2549) to ttl and zeroes
// it, so go-sdk's list cache (which has no off switch) never serves a list.
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
			ttl(list, c.TTLMs)
			c.TTLMs = 0
			return res, nil
		}
	}
}

// cacheableOf returns the list and ttl hint of a list result; nil else.
// go-sdk makes a new result for each answer: none is a typed nil.
func cacheableOf(res mcp.Result) (probes.List, *mcp.Cacheable) {
	switch r := res.(type) {
	case *mcp.ListToolsResult:
		return probes.Tools, &r.Cacheable
	case *mcp.ListPromptsResult:
		return probes.Prompts, &r.Cacheable
	case *mcp.ListResourcesResult:
		return probes.Resources, &r.Cacheable
	case *mcp.ListResourceTemplatesResult:
		return probes.ResourceTemplates, &r.Cacheable
	}
	return 0, nil
}
