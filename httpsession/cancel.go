package httpsession

import (
	"sync"
)

// maxAnswered bounds how many answered request ids a conn remembers
// for dropping their cancellations; the oldest is forgotten first.
const maxAnswered = 256

// answeredIDs remembers the ids of requests whose whole answer came with
// the HTTP response, so that a notifications/cancelled go-sdk sends for one
// afterwards is answered locally: a client cancels only requests "believed
// to still be in-progress" (basic/utilities/cancellation), and a late one
// could cancel a resumed session's request of the same id.
type answeredIDs struct {
	mu   sync.Mutex
	set  map[string]bool
	fifo []string
}

func (a *answeredIDs) add(id string) {
	if id == "" {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.set == nil {
		a.set = make(map[string]bool)
	}
	if a.set[id] {
		return
	}
	if len(a.fifo) == maxAnswered {
		delete(a.set, a.fifo[0])
		a.fifo = a.fifo[1:]
	}
	a.set[id] = true
	a.fifo = append(a.fifo, id)
}

// take reports whether id was answered, and forgets it.
func (a *answeredIDs) take(id string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.set[id] {
		return false
	}
	delete(a.set, id)
	return true
}
