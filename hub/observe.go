package hub

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/supervisor"
)

// The hub's own event kinds, besides the supervisors'. Their Seq is 0;
// Server names the server concerned.
const (
	// KindServerAdded: a server joined the hub. SessionID is the hash of the
	// session it resumes, "" when fresh; Op is "standby" when it waits for
	// its lease (a Leaser as Store).
	KindServerAdded events.Kind = "server-added"
	// KindServerRemoved: a server left the hub (Remove).
	KindServerRemoved events.Kind = "server-removed"
	// KindMergedCatalogChanged: the server's catalog changed the merged
	// one. Op names the kind ("tools", "prompts", "resources"); Added,
	// Removed, Changed the qualified names (bounded as events.BoundChange
	// does); Tools counts the items of that kind in the merged view.
	KindMergedCatalogChanged events.Kind = "merged-catalog-changed"
	// KindNameCollision: two items asked for the qualified name Name: the
	// winner (see Collision) keeps it, the other is shown as Added[0]. At
	// most 16 per catalog change, then one counting the rest in Omitted.
	KindNameCollision events.Kind = "name-collision"
	// KindStoreFailed: a Store or lease operation failed (Op: "load",
	// "save", "delete", "acquire", "renew", "release"); Detail is the error.
	KindStoreFailed events.Kind = "store-failed"
	// KindConfigWarning: part of a servers file was not used (Detail).
	KindConfigWarning events.Kind = "config-warning"
	// KindCatalogRefused: the server's catalog is over a bound and was not
	// merged; the items merged before stay. Op is "items" (Bound is
	// Config.MaxCatalogItems) or "bytes" (MaxCatalogBytes); Count is the
	// catalog's.
	KindCatalogRefused events.Kind = "catalog-refused"
)

// emit sends a hub event, redacted, to Config.Events; a sink's panic is logged.
func (h *Hub) emit(ev events.Event) {
	if h.cfg.Events == nil {
		return
	}
	defer func() {
		if r := recover(); r != nil {
			h.cfg.Supervisor.Observe.Logger.Error("hub: events sink panicked", "kind", string(ev.Kind), "panic", fmt.Sprint(r))
		}
	}()
	ev.Server = events.CutName(ev.Server)
	h.cfg.Events.Emit(h.redact.Redact(ev))
}

// observe is every supervisor's sink. When sup is the server's of this
// term, Health learns what the event says (a failure, the time of a move)
// before Config.Events gets it, so a host that reads Health on an event
// sees the event's facts there; the merge and the wake-ups come after.
func (h *Hub) observe(e *entry, sup *supervisor.Supervisor, ev events.Event) {
	moved := ev.Kind == events.KindTransition && ev.From != ev.To
	e.mu.Lock()
	stale := e.gone || e.sup != sup
	lease := e.lease
	if !stale && moved {
		e.since = cmp.Or(ev.Time, h.cfg.Supervisor.Observe.Clock.Now())
	}
	e.mu.Unlock()
	if !stale && (ev.Kind == events.KindTransition || ev.Kind == events.KindCallFailed) {
		h.noteFailure(e, ev.Verdict)
	}
	h.emit(ev)
	if stale {
		return
	}
	switch {
	case ev.Kind == events.KindCatalogChanged, moved && string(ev.To) == supervisor.Ready.String():
		h.updateCatalog(e, sup.Catalog(), false) // merged, or its refusal noted
		h.notify()
	case ev.Kind == events.KindTransition:
		h.notify() // internal ones too: failed -> failed may become terminal
	case ev.Kind == events.KindSessionOpened, ev.Kind == events.KindStreamDisabled, ev.Kind == events.KindStreamEnabled:
		if rs := sup.ResumeState(); rs != nil { // what resumes the session changed
			h.saves.put(context.Background(), e.name, rs, lease)
		}
	}
}

// updateCatalog replaces the server's items in the merged catalog and
// emits the changes; leaving removes them. The routing lock is held for
// the swap alone (decision 0019). Once the server is gone only its removal
// applies: a refresh racing with Remove cannot bring its items back.
// Health learns the outcome (c's generation merged, or its refusal) before
// the events say it.
func (h *Hub) updateCatalog(e *entry, c supervisor.Catalog, leaving bool) {
	server := e.name
	e.update.Lock()
	defer e.update.Unlock()
	e.mu.Lock()
	gone := e.gone // set before the leaving update takes e.update
	e.mu.Unlock()
	if gone && !leaving {
		return
	}
	tp, pp, rp := h.tools.prepare(server, c.Tools), h.prompts.prepare(server, c.Prompts), h.resources.prepare(server, c.Resources)
	items, bytes := int64(len(tp.items)+len(pp.items)+len(rp.items)), tp.bytes+pp.bytes+rp.bytes
	var over *CatalogRefusedError
	switch {
	case leaving:
	case items > int64(h.cfg.MaxCatalogItems):
		over = &CatalogRefusedError{Server: server, Op: "items", Count: items, Bound: int64(h.cfg.MaxCatalogItems)}
	case bytes > h.cfg.MaxCatalogBytes:
		over = &CatalogRefusedError{Server: server, Op: "bytes", Count: bytes, Bound: h.cfg.MaxCatalogBytes}
	}
	if over != nil {
		e.mu.Lock()
		e.merged, e.refused = c.Generation, over
		e.mu.Unlock()
		h.emit(events.Event{Kind: KindCatalogRefused, Server: server, Op: over.Op,
			Count: int(min(over.Count, math.MaxInt)), Bound: int(min(over.Bound, math.MaxInt))})
		return
	}
	h.catMu.Lock()
	td, tc := h.tools.apply(server, tp)
	pd, pc := h.prompts.apply(server, pp)
	rd, rc := h.resources.apply(server, rp)
	counts := []int{len(h.tools.owner), len(h.prompts.owner), len(h.resources.owner)}
	h.catMu.Unlock()
	e.mu.Lock()
	if !leaving {
		e.merged = c.Generation
	}
	e.refused = nil // merged, or its items left
	e.mu.Unlock()
	cols := slices.Concat(tc, pc, rc)
	for i, col := range cols {
		if i == maxCollisionEvents {
			h.emit(events.Event{Kind: KindNameCollision, Server: server, Omitted: len(cols) - i})
			break
		}
		h.emit(events.Event{Kind: KindNameCollision, Server: server, Name: col.Name, Added: []string{col.Renamed}})
	}
	for i, d := range []events.ListChange{td, pd, rd} {
		if d.Empty() {
			continue
		}
		c := events.BoundChange(d.Added, d.Removed, d.Changed)
		h.emit(events.Event{Kind: KindMergedCatalogChanged, Server: server, Op: []string{"tools", "prompts", "resources"}[i], Tools: counts[i],
			Added: c.Added, Removed: c.Removed, Changed: c.Changed, Omitted: c.Omitted})
	}
}

// maxCollisionEvents bounds the name-collision events of one catalog change.
const maxCollisionEvents = 16

func (h *Hub) storeFailed(op, server string, err error) {
	h.emit(events.Event{Kind: KindStoreFailed, Server: server, Op: op, Detail: err.Error()})
}
