package httpsession

import (
	"slices"
	"sync"
)

// maxAnswered bounds how many answered request ids a conn remembers for
// dropping their cancellations; the oldest is forgotten first.
const maxAnswered = 256

// answeredIDs remembers the ids of requests whose whole answer came with
// the HTTP response, so that a notifications/cancelled go-sdk sends for one
// afterwards is answered locally: a client cancels only requests "believed
// to still be in-progress" (basic/utilities/cancellation), and a late one
// could cancel a resumed session's request of the same id.
type answeredIDs struct {
	mu  sync.Mutex
	ids []string // oldest first
}

func (a *answeredIDs) add(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.ids) == maxAnswered {
		a.ids = a.ids[1:]
	}
	a.ids = append(a.ids, id)
}

// take reports whether id was answered, and forgets it.
func (a *answeredIDs) take(id string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	i := slices.Index(a.ids, id)
	if i >= 0 {
		a.ids = slices.Delete(a.ids, i, i+1)
	}
	return i >= 0
}
