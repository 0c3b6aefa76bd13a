package httpsession

import (
	"sync"
)

// maxAnswered bounds how many answered request ids a Transport remembers
// for dropping their cancellations; the oldest is forgotten first.
const maxAnswered = 256

// answeredIDs remembers the JSON-RPC ids of this session's requests whose
// whole answer arrived with the HTTP response (a JSON body, or any non-2xx
// status, refused or rewritten), so that a notifications/cancelled go-sdk
// sends for one of them afterwards is answered locally. The MCP spec
// (basic/utilities/cancellation) has a client cancel only requests "believed
// to still be in-progress": the server already answered these, or never saw
// them (a gateway's 401). Sent anyway, such a cancellation is not only
// useless: go-sdk numbers requests from 1 in every ClientSession, so a late
// one can reach a server-side session that a resumed go-sdk session already
// uses, and cancel its request of the same id.
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
