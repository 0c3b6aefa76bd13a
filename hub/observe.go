package hub

import (
	"context"
	"fmt"
	"strings"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/supervisor"
)

// The hub's own event kinds (events.Event.Kind), besides the supervisors'.
// Their Seq is 0: Seq numbers each supervisor's events without gaps, and
// these are not a supervisor's. Server names the server concerned.
const (
	// KindServerAdded: a server joined the hub. Detail: "fresh", or
	// "resuming <session hash>".
	KindServerAdded events.Kind = "server-added"
	// KindServerRemoved: a server left the hub (Remove).
	KindServerRemoved events.Kind = "server-removed"
	// KindMergedCatalogChanged: the merged catalog changed after a change of
	// the server's catalog (or its removal). Op names the kind ("tools",
	// "prompts", "resources"); Added, Removed and Changed the qualified
	// names (at most events.MaxNames each, Omitted counting the rest);
	// Tools is the number of items of that kind in the merged view.
	KindMergedCatalogChanged events.Kind = "merged-catalog-changed"
	// KindNameCollision: two items asked for the same qualified name. Name
	// is the name, Detail says who kept it and what the other got. A change
	// of one server's catalog reports at most maxCollisionEvents (16) so;
	// one more, without Name, counts the rest in Omitted.
	KindNameCollision events.Kind = "name-collision"
	// KindStoreFailed: a Store operation failed (Op: "load", "save",
	// "delete"); Detail is the error. After a failed load the server starts
	// fresh; the other servers are not affected.
	KindStoreFailed events.Kind = "store-failed"
	// KindConfigWarning: part of a servers file was kept but not used
	// (Detail says what).
	KindConfigWarning events.Kind = "config-warning"
	// KindCatalogRefused: the server's catalog is over Config.MaxCatalogItems
	// or MaxCatalogBytes and was not merged; the server's items in the
	// merged catalog stay those merged before (none when it is the first).
	// Detail says what was over, by how much.
	KindCatalogRefused events.Kind = "catalog-refused"
)

// emit sends a hub event, redacted, to Config.Events. A panicking sink is
// logged, and the event dropped, as the supervisor does.
func (h *Hub) emit(ev events.Event) {
	if h.cfg.Events == nil {
		return
	}
	defer func() {
		if r := recover(); r != nil {
			h.cfg.Supervisor.Logger.Error("hub: events sink panicked", "kind", string(ev.Kind), "panic", fmt.Sprint(r))
		}
	}()
	// One rule for every name an event carries: a server name is cut as
	// an item's (events.MaxNameBytes). Add refuses longer names; a servers
	// file's warnings still name them.
	ev.Server = events.CutName(ev.Server)
	h.cfg.Events.Emit(h.redact.Redact(ev))
}

// observe is every supervisor's sink: the event goes on to Config.Events,
// then the hub learns from it (health, merged catalog, resume state) when
// sup is the server's supervisor of this term. It runs on the supervisor's
// goroutine.
func (h *Hub) observe(e *entry, sup *supervisor.Supervisor, ev events.Event) {
	h.emit(ev)
	e.mu.Lock()
	stale := e.gone || e.sup != sup
	lease := e.lease
	e.mu.Unlock()
	if stale {
		return
	}
	switch ev.Kind {
	case events.KindTransition:
		h.noteFailure(e, ev.Verdict)
		e.mu.Lock()
		moved := ev.From != ev.To
		if moved {
			e.since = ev.Time
			if e.since.IsZero() {
				e.since = h.cfg.Supervisor.Clock.Now()
			}
		}
		e.mu.Unlock()
		if moved && string(ev.To) == supervisor.Ready.String() {
			h.refresh(e)
		}
		// Every transition wakes WaitReady, an internal one too: failed ->
		// failed changes the reason (a churn failure is terminal), and
		// Settled waits for that.
		h.notify()
	case events.KindCallFailed:
		h.noteFailure(e, ev.Verdict)
	case events.KindCatalogChanged:
		h.refresh(e)
	case events.KindSessionOpened, events.KindStreamDisabled, events.KindStreamEnabled:
		// What resumes the session changed: keep it.
		if h.cfg.Store != nil {
			if rs := sup.ResumeState(); rs != nil {
				h.saves.put(context.Background(), e.name, rs, lease)
			}
		}
	}
}

// refresh merges the server's current catalog and wakes WaitReady.
func (h *Hub) refresh(e *entry) {
	c := e.current().Catalog()
	h.updateCatalog(e, c, false)
	e.mu.Lock()
	e.merged = c.Generation
	e.mu.Unlock()
	h.notify()
}

// updateCatalog replaces the server's items in the merged catalog and
// emits the changes; leaving removes them. The catalog is made ready
// (marshaled, named, measured against Config.MaxCatalogItems and
// MaxCatalogBytes) without the routing lock, which is held only for the
// swap, in proportion to the server's items: calls to every server route
// meanwhile. Updates of one server run one at a time (e.update). A catalog
// over a bound is not merged: the server's items stay those merged last,
// and a KindCatalogRefused event says what was over. Once the server is
// gone only its removal (leaving) is applied, so a refresh racing with
// Remove cannot bring its items back.
func (h *Hub) updateCatalog(e *entry, c supervisor.Catalog, leaving bool) {
	type kindDiff struct {
		kind string
		d    Diff
		n    int
	}
	server := e.name
	e.update.Lock()
	defer e.update.Unlock()
	e.mu.Lock()
	gone := e.gone
	e.mu.Unlock()
	if gone && !leaving {
		return // no work for a server that left (checked again under the lock)
	}
	tp, pp, rp := h.tools.prepare(server, c.Tools), h.prompts.prepare(server, c.Prompts), h.resources.prepare(server, c.Resources)
	if over := h.overBound(len(tp.items)+len(pp.items)+len(rp.items), tp.bytes+pp.bytes+rp.bytes); over != "" && !leaving {
		h.emit(events.Event{Kind: KindCatalogRefused, Server: server, Detail: over + "; the items merged before stay"})
		return
	}
	h.catMu.Lock()
	e.mu.Lock()
	gone = e.gone
	e.mu.Unlock()
	if gone && !leaving {
		h.catMu.Unlock()
		return
	}
	td, tc := h.tools.apply(server, tp)
	pd, pc := h.prompts.apply(server, pp)
	rd, rc := h.resources.apply(server, rp)
	diffs := []kindDiff{{"tools", td, len(h.tools.owner)}, {"prompts", pd, len(h.prompts.owner)}, {"resources", rd, len(h.resources.owner)}}
	h.catMu.Unlock()
	for i := range diffs {
		diffs[i].d = diffs[i].d.sort()
	}
	cols := append(append(tc, pc...), rc...)
	more := len(cols) - maxCollisionEvents
	if more > 0 {
		cols = cols[:maxCollisionEvents]
	}
	for _, col := range cols {
		h.emit(events.Event{Kind: KindNameCollision, Server: server, Name: col.Name,
			Detail: fmt.Sprintf("%q of server %q keeps %q; %q of server %q is %q", events.CutName(col.WinnerID), col.Winner, col.Name, events.CutName(col.LoserID), col.Loser, col.Renamed)})
	}
	if more > 0 {
		h.emit(events.Event{Kind: KindNameCollision, Server: server, Omitted: more,
			Detail: fmt.Sprintf("%d more collisions of this catalog change not reported one by one", more)})
	}
	for _, kd := range diffs {
		if kd.d.Empty() {
			continue
		}
		c := events.BoundChange(kd.d.Added, kd.d.Removed, kd.d.Changed)
		h.emit(events.Event{Kind: KindMergedCatalogChanged, Server: server, Op: kd.kind, Tools: kd.n, Detail: diffSummary(kd.kind, kd.n, kd.d),
			Added: c.Added, Removed: c.Removed, Changed: c.Changed, Omitted: c.Omitted})
	}
}

// overBound says what of a catalog of items items and bytes bytes of JSON
// is over Config.MaxCatalogItems or MaxCatalogBytes; "" when neither is.
func (h *Hub) overBound(items int, bytes int64) string {
	switch {
	case items > h.cfg.MaxCatalogItems:
		return fmt.Sprintf("catalog of %d items (tools, prompts and resources), more than MaxCatalogItems %d", items, h.cfg.MaxCatalogItems)
	case bytes > h.cfg.MaxCatalogBytes:
		return fmt.Sprintf("catalog of %d bytes of JSON, more than MaxCatalogBytes %d", bytes, h.cfg.MaxCatalogBytes)
	}
	return ""
}

// maxCollisionEvents bounds the name-collision events of one change of a
// server's catalog: a server that lists thousands of names another's
// already qualify to, and changes them at every re-list, would otherwise
// send as many events at each.
const maxCollisionEvents = 16

// diffSummary is the change for people (the timeline shows Detail).
func diffSummary(kind string, n int, d Diff) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s:", n, kind)
	const most = 12
	i := 0
	for _, l := range []struct {
		sign  string
		names []string
	}{{"+", d.Added}, {"-", d.Removed}, {"~", d.Changed}} {
		for _, name := range l.names {
			if i == most {
				fmt.Fprintf(&b, " …%d more", len(d.Added)+len(d.Removed)+len(d.Changed)-most)
				return b.String()
			}
			b.WriteString(" " + l.sign + events.CutName(name))
			i++
		}
	}
	return b.String()
}

// storeFailed reports a store error as an event.
func (h *Hub) storeFailed(op, server string, err error) {
	h.emit(events.Event{Kind: KindStoreFailed, Server: server, Op: op, Detail: err.Error()})
}
