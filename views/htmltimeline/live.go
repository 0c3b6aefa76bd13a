package htmltimeline

import (
	"bytes"
	"cmp"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/mcpsup/mcpsup/events"
)

// DefaultLiveKeep is the number of events a [Live] keeps when NewLive is
// given none.
const DefaultLiveKeep = 20000

// Live serves the timeline page live: an [events.Sink] and an
// [http.Handler]. GET or HEAD of ".../events" streams the kept events, then
// each new one, as server-sent events (WHATWG HTML "Server-sent events"; id
// the event's number from 1, data its JSON line; Last-Event-ID resumes); of
// any other path, the page; any other method is 405. It keeps the last keep
// events. It neither redacts nor checks who asks (bind it to loopback).
// Emit never blocks on a client. Safe for concurrent use.
type Live struct {
	mu      sync.Mutex
	keep    int
	lines   [][]byte // the kept events' JSON lines, oldest first
	next    uint64   // the id the next event gets
	skipped uint64
	changed chan struct{} // closed and replaced on every event
	done    chan struct{} // closed by Close
	closed  bool
}

// NewLive returns a Live that keeps the last keep events ([DefaultLiveKeep]
// when keep < 1).
func NewLive(keep int) *Live {
	if keep < 1 {
		keep = DefaultLiveKeep
	}
	return &Live{keep: keep, next: 1, changed: make(chan struct{}), done: make(chan struct{})}
}

// Emit keeps e and sends it to every connected page.
func (l *Live) Emit(e events.Event) {
	b, err := e.MarshalJSON()
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil || l.closed {
		l.skipped++
		return
	}
	if len(l.lines) == l.keep {
		// Re-slice, never copy over: a stream may be writing from a
		// subslice of the old lines without the lock.
		l.lines = l.lines[1:]
	}
	l.lines = append(l.lines, b)
	l.next++
	close(l.changed)
	l.changed = make(chan struct{})
}

// Skipped returns the number of events not kept: they could not be
// marshalled, or came after Close.
func (l *Live) Skipped() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.skipped
}

// Close ends every event stream; the handler then serves streams that end at
// once with the events kept. Closing twice is a no-op.
func (l *Live) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		l.closed = true
		close(l.done)
	}
}

// ServeHTTP serves the page or the event stream.
func (l *Live) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if strings.HasSuffix(r.URL.Path, "/events") || r.URL.Path == "events" {
		l.stream(w, r)
		return
	}
	if !setHeaders(w, r, "text/html; charset=utf-8") {
		return
	}
	l.mu.Lock()
	data := bytes.Join(l.lines, []byte("\n"))
	last := l.next - 1
	l.mu.Unlock()
	// "events" relative to the page, wherever the handler is mounted.
	_ = writePage(w, data, "events?after="+strconv.FormatUint(last, 10)) // a write error is the client gone
}

// stream writes the kept events after the client's Last-Event-ID, then each
// new one, until the client goes, the server shuts down or Close.
func (l *Live) stream(w http.ResponseWriter, r *http.Request) {
	if !setHeaders(w, r, "text/event-stream") {
		return
	}
	from := cmp.Or(r.Header.Get("Last-Event-ID"), r.URL.Query().Get("after"))
	after, _ := strconv.ParseUint(from, 10, 64) // absent or bad: from the first kept
	rc := http.NewResponseController(w)
	w.WriteHeader(http.StatusOK)
	for {
		l.mu.Lock()
		first := l.next - uint64(len(l.lines)) // id of l.lines[0]
		if after >= l.next {
			// An id this Live never gave: the client saw another one (the
			// process restarted). Start over; the page reloads on the drop.
			after = 0
		}
		next := max(after+1, first)
		pending := l.lines[min(next-first, uint64(len(l.lines))):]
		changed, closed := l.changed, l.closed
		l.mu.Unlock()

		for i, line := range pending { // net/http buffers the writes
			if _, err := fmt.Fprintf(w, "id: %d\ndata: %s\n\n", next+uint64(i), line); err != nil {
				return
			}
		}
		after = next + uint64(len(pending)) - 1
		if err := rc.Flush(); err != nil || closed {
			return
		}
		select {
		case <-changed:
		case <-l.done:
		case <-r.Context().Done():
			return
		}
	}
}

// setHeaders sets the headers both responses share (neither is cached) and
// reports whether a body follows (not for HEAD).
func setHeaders(w http.ResponseWriter, r *http.Request, contentType string) bool {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	return r.Method != http.MethodHead
}
