package httpsession

import (
	"slices"
	"sync"
)

// maxAnswered bounds how many answered request ids a conn remembers for
// dropping their cancellations: a client cancels only requests "believed
// to still be in-progress" (basic/utilities/cancellation), and a late one
// could cancel a resumed session's request of the same id.
const maxAnswered = 256

// recent remembers values by key, the oldest forgotten first past the
// bound add is given. The zero value is ready; safe for concurrent use.
type recent[V any] struct {
	mu    sync.Mutex
	items []keyed[V] // oldest first
}

type keyed[V any] struct {
	key string
	v   V
}

func (r *recent[V]) add(key string, v V, bound int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.items) == bound {
		r.items = r.items[1:]
	}
	r.items = append(r.items, keyed[V]{key, v})
}

// take returns the value of key, and forgets it.
func (r *recent[V]) take(key string) (v V, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	i := slices.IndexFunc(r.items, func(k keyed[V]) bool { return k.key == key })
	if i < 0 {
		return v, false
	}
	v = r.items[i].v
	r.items = slices.Delete(r.items, i, i+1)
	return v, true
}

func (r *recent[V]) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.items)
}
