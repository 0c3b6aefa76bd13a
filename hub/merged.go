package hub

import (
	"cmp"
	"crypto/sha256"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpsup/mcpsup/events"
)

// Item is a tool, prompt or resource of one server under the name a model
// sees.
type Item[T any] struct {
	// Name is the qualified name, unique in the hub, valid for model APIs.
	Name string
	// Server is the server's name in the hub.
	Server string
	// ID is the item on its server: the tool or prompt name, the resource URI.
	ID string
	// Def is the server's definition with Name set to the qualified name
	// (a shallow copy: its maps and slices are the server's, read-only).
	Def *T
}

// A Collision is two items asking for one qualified name: the winner (the
// lower server name, then the lower ID) keeps it, the other gets Renamed,
// the name with a short hash no item asks for (docs/decisions/0019).
type Collision struct {
	Name              string
	Winner, Loser     string // server names
	WinnerID, LoserID string
	Renamed           string
}

type claimant struct{ server, id string }

func (a claimant) compare(b claimant) int {
	return cmp.Or(strings.Compare(a.server, b.server), strings.Compare(a.id, b.id))
}

// slot is one claimant's item: made by prepare, held by merged.
type slot[T any] struct {
	cl      claimant
	base    string            // the qualified name it asks for
	name    string            // the name it got
	named   *T                // the definition under name, what the view shows (the server's own until placed)
	sum     [sha256.Size]byte // of the definition's JSON, to tell a changed one
	skipped []string          // alternates it passed over as some item's base ([merged.nameFor])
}

// merged is the merged view of one kind (tools, prompts or resources) of
// every server: an update costs in proportion to the server's items (and
// the few they collide with); the sorted list is made when read.
type merged[T any] struct {
	naming Naming
	mask   func(string) string
	idOf   func(*T) (id, label string) // the item on its server; what its qualified name is made of
	rename func(*T, string) *T

	claims    map[string][]claimant // base name -> claimants, sorted
	slots     map[claimant]*slot[T]
	owner     map[string]claimant          // qualified name -> claimant
	byServer  map[string]map[string]bool   // server -> ids
	skippedBy map[string]map[claimant]bool // base name -> who skipped it, placed again once it is free
	list      []Item[T]                    // sorted view as last read; nil before the first read
	dirty     map[string]bool              // names changed since list was built
}

func newMerged[T any](naming Naming, mask func(string) string, idOf func(*T) (string, string), rename func(*T, string) *T) *merged[T] {
	return &merged[T]{naming: naming, mask: mask, idOf: idOf, rename: rename,
		claims: map[string][]claimant{}, slots: map[claimant]*slot[T]{}, owner: map[string]claimant{}, byServer: map[string]map[string]bool{},
		skippedBy: map[string]map[claimant]bool{}}
}

// change is what an update did.
type change[T any] struct {
	before     map[string]*slot[T] // name -> slot before (nil: free)
	collisions []Collision
}

func (m *merged[T]) touch(c *change[T], name string) {
	if _, seen := c.before[name]; seen {
		return
	}
	var prev *slot[T]
	if o, ok := m.owner[name]; ok {
		s := *m.slots[o]
		prev = &s
	}
	c.before[name] = prev
}

// prepared is a server's new catalog of one kind: its items without an
// empty or repeated id (the first counts), and their JSON's bytes.
type prepared[T any] struct {
	items []*slot[T]
	bytes int64
}

// prepare makes items ready for apply; it reads only m's functions, so it
// runs without the routing lock.
func (m *merged[T]) prepare(server string, items []*T) prepared[T] {
	var p prepared[T]
	seen := make(map[string]bool, len(items))
	for _, it := range items {
		if it == nil {
			continue
		}
		id, label := m.idOf(it)
		if seen[id] || id == "" {
			continue
		}
		seen[id] = true
		raw, _ := json.Marshal(it) // an error leaves it empty: sums alike
		p.bytes += int64(len(raw))
		base := qualify(m.naming, server, m.mask(label))
		p.items = append(p.items, &slot[T]{cl: claimant{server, id}, base: base, named: it, sum: sha256.Sum256(raw)})
	}
	return p
}

// apply replaces the items of server with p (empty: the server is gone)
// under the routing lock and returns the change of the view (qualified
// names, each list sorted, unbounded) and the collisions it created.
func (m *merged[T]) apply(server string, p prepared[T]) (events.ListChange, []Collision) {
	c := &change[T]{before: map[string]*slot[T]{}}
	ids := make(map[string]bool, len(p.items))
	for _, in := range p.items {
		ids[in.cl.id] = true
	}
	for id := range m.byServer[server] {
		if !ids[id] {
			m.release(c, claimant{server, id})
		}
	}
	for _, in := range p.items {
		if s, ok := m.slots[in.cl]; ok {
			if in.base == s.base {
				if in.sum != s.sum {
					m.touch(c, s.name)
					s.sum, s.named = in.sum, m.rename(in.named, s.name)
				}
				continue
			}
			m.release(c, in.cl) // its label changed: a new name
		}
		m.claim(c, in)
	}
	if len(ids) == 0 {
		delete(m.byServer, server)
	} else {
		m.byServer[server] = ids
	}
	return m.diff(c), c.collisions
}

// candidate is the k-th name a claimant of base may get when another holds
// it: base with the short hash of (server, id), for k > 0 of (server, id, k).
func candidate(base string, cl claimant, k int) string {
	if k == 0 {
		return hashed(base, cl.server, cl.id)
	}
	return hashed(base, cl.server, cl.id+"\x00"+strconv.Itoa(k))
}

// nameFor is the name cl, whose slot is s, gets: its base for the first of
// the base's claimants; for another, the first candidate no item asks for
// as its base. So every name is a function of the items present. The bases
// skipped are recorded, so that cl is placed again when one is free.
func (m *merged[T]) nameFor(cl claimant, s *slot[T]) string {
	m.unskip(cl, s)
	if m.claims[s.base][0] == cl {
		return s.base
	}
	for k := 0; ; k++ {
		name := candidate(s.base, cl, k)
		if _, asked := m.claims[name]; !asked {
			return name
		}
		s.skipped = append(s.skipped, name)
		if m.skippedBy[name] == nil {
			m.skippedBy[name] = map[claimant]bool{}
		}
		m.skippedBy[name][cl] = true
	}
}

func (m *merged[T]) unskip(cl claimant, s *slot[T]) {
	for _, name := range s.skipped {
		delete(m.skippedBy[name], cl)
		if len(m.skippedBy[name]) == 0 {
			delete(m.skippedBy, name)
		}
	}
	s.skipped = nil
}

func (m *merged[T]) place(c *change[T], cl claimant) {
	s := m.slots[cl]
	name := m.nameFor(cl, s)
	if s.name == name {
		return
	}
	if s.name != "" && m.owner[s.name] == cl {
		m.touch(c, s.name)
		delete(m.owner, s.name)
	}
	m.touch(c, name)
	s.name = name
	s.named = m.rename(s.named, name)
	m.owner[name] = cl
}

func (m *merged[T]) claim(c *change[T], in *slot[T]) {
	cl, base := in.cl, in.base
	m.slots[cl] = in
	cls := m.claims[base]
	i, _ := slices.BinarySearchFunc(cls, cl, claimant.compare)
	cls = slices.Insert(cls, i, cl)
	m.claims[base] = cls
	if h, held := m.owner[base]; held && len(cls) == 1 {
		m.place(c, h) // a renamed item steps aside for an item asking for its name
	}
	if i == 0 && len(cls) > 1 {
		m.place(c, cls[1]) // the old winner steps aside
	}
	m.place(c, cl)
	if len(cls) > 1 {
		w, l := cls[0], cl
		if i == 0 {
			l = cls[1]
		}
		c.collisions = append(c.collisions, Collision{Name: base, Winner: w.server, WinnerID: w.id,
			Loser: l.server, LoserID: l.id, Renamed: m.slots[l].name})
	}
}

func (m *merged[T]) release(c *change[T], cl claimant) {
	s := m.slots[cl]
	if s == nil {
		return
	}
	m.unskip(cl, s)
	cls := m.claims[s.base]
	i, found := slices.BinarySearchFunc(cls, cl, claimant.compare)
	if found {
		cls = slices.Delete(cls, i, i+1)
	}
	if m.owner[s.name] == cl {
		m.touch(c, s.name)
		delete(m.owner, s.name)
	}
	delete(m.slots, cl)
	if len(cls) == 0 {
		delete(m.claims, s.base)
		// No item asks for the name now: those that skipped it may take it.
		for _, h := range slices.SortedFunc(maps.Keys(m.skippedBy[s.base]), claimant.compare) {
			m.place(c, h)
		}
		return
	}
	m.claims[s.base] = cls
	if i == 0 {
		m.place(c, cls[0]) // the next in order takes the name
	}
}

func (m *merged[T]) diff(c *change[T]) events.ListChange {
	var d events.ListChange
	if m.dirty == nil {
		m.dirty = map[string]bool{}
	}
	for _, name := range slices.Sorted(maps.Keys(c.before)) {
		prev := c.before[name]
		m.dirty[name] = true // also when unchanged: items rebuilds it alike
		o, now := m.owner[name]
		switch {
		case prev == nil && now:
			d.Added = append(d.Added, name)
		case prev != nil && !now:
			d.Removed = append(d.Removed, name)
		case prev != nil && now:
			cur := m.slots[o]
			if prev.cl != o || prev.sum != cur.sum {
				d.Changed = append(d.Changed, name)
			}
		}
	}
	return d
}

// items returns the view sorted by qualified name, shared until the next
// change; after a change, the last list merged with the changed names, not
// a sort of the whole (docs/benchmarks.md section 8).
func (m *merged[T]) items() []Item[T] {
	if m.list != nil && len(m.dirty) == 0 {
		return m.list
	}
	names, n, old := maps.Keys(m.dirty), len(m.dirty), m.list
	if old == nil || n > len(m.owner)/4 {
		names, n, old = maps.Keys(m.owner), len(m.owner), nil
	}
	fresh := make([]Item[T], 0, n)
	for name := range names {
		if cl, ok := m.owner[name]; ok {
			fresh = append(fresh, Item[T]{Name: name, Server: cl.server, ID: cl.id, Def: m.slots[cl].named})
		}
	}
	slices.SortFunc(fresh, func(a, b Item[T]) int { return strings.Compare(a.Name, b.Name) })
	list := make([]Item[T], 0, len(m.owner))
	for _, it := range old {
		if m.dirty[it.Name] {
			continue
		}
		for len(fresh) > 0 && fresh[0].Name < it.Name {
			list, fresh = append(list, fresh[0]), fresh[1:]
		}
		list = append(list, it)
	}
	m.list, m.dirty = append(list, fresh...), nil
	return m.list
}
