package mcptest

import (
	"context"
	"sync"
)

// Answerer tells who wrote the response to a request.
type Answerer int

const (
	// ByServer means the request reached the server behind the gateway.
	ByServer Answerer = iota
	// ByGateway means a gateway rule answered (or dropped) the request and the
	// server never saw it.
	ByGateway
)

// String returns "server" or "gateway".
func (a Answerer) String() string {
	if a == ByGateway {
		return "gateway"
	}
	return "server"
}

// Entry is one HTTP request seen by a [Gateway].
type Entry struct {
	// Seq numbers the requests from 1 in arrival order (it continues across
	// [Log.Reset]).
	Seq int
	// Verb is the HTTP method: "POST", "GET", "DELETE" ...
	Verb string
	// Method is the JSON-RPC method of a POST body ("" for GET, DELETE, a
	// JSON-RPC response, or a body that is not JSON-RPC). For a batch it is
	// the method of the first message.
	Method string
	// ID is the JSON-RPC id as raw JSON text ("3", `"abc"`, "null"), or ""
	// when the message has no id (a notification).
	ID string
	// SessionID is the Mcp-Session-Id header sent with the request ("" when
	// none).
	SessionID string
	// ProtocolVersion is the Mcp-Protocol-Version header sent ("" when none).
	ProtocolVersion string
	// LastEventID is the Last-Event-ID header sent ("" when none): a
	// resumption of an SSE stream (2025-11-25; removed in 2026-07-28).
	LastEventID string
	// Status is the HTTP status returned; 0 until the response headers are
	// written, and 0 for good when the gateway reset or dropped the
	// connection without a response.
	Status int
	// By tells whether the server or the gateway answered.
	By Answerer
	// Rule is the rule that acted on the request (0 when none did).
	Rule RuleID
	// Done is set when the gateway has finished with the request: the
	// response is complete, the stream ended, or the connection was dropped.
	Done bool
}

// Log records every request a [Gateway] sees. Its methods are safe for
// concurrent use.
type Log struct {
	mu      sync.Mutex
	seq     int
	entries []*Entry
	changed chan struct{} // closed and replaced on every change
}

func newLog() *Log {
	return &Log{changed: make(chan struct{})}
}

// add appends e, numbering it, and returns the stored entry.
func (l *Log) add(e Entry) *Entry {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	e.Seq = l.seq
	p := &e
	l.entries = append(l.entries, p)
	l.notifyLocked()
	return p
}

// update applies f to a stored entry under the log's lock.
func (l *Log) update(e *Entry, f func(*Entry)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f(e)
	l.notifyLocked()
}

func (l *Log) notifyLocked() {
	close(l.changed)
	l.changed = make(chan struct{})
}

// Entries returns a copy of the entries recorded since the last
// [Log.Reset], in arrival order.
func (l *Log) Entries() []Entry {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Entry, len(l.entries))
	for i, e := range l.entries {
		out[i] = *e
	}
	return out
}

// CountFunc returns how many recorded entries satisfy keep.
func (l *Log) CountFunc(keep func(Entry) bool) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.countLocked(keep)
}

func (l *Log) countLocked(keep func(Entry) bool) int {
	n := 0
	for _, e := range l.entries {
		if keep(*e) {
			n++
		}
	}
	return n
}

// Count returns how many requests carried the JSON-RPC method (for example
// "initialize", "tools/call", "notifications/initialized"), whoever
// answered them.
func (l *Log) Count(method string) int {
	return l.CountFunc(withMethod(method))
}

// CountVerb returns how many requests used the HTTP verb ("GET", "POST",
// "DELETE").
func (l *Log) CountVerb(verb string) int {
	return l.CountFunc(withVerb(verb))
}

// Reset forgets every entry; counts start again from zero. Sequence numbers
// keep growing.
func (l *Log) Reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = nil
	l.notifyLocked()
}

// WaitFunc blocks until at least n recorded entries satisfy keep, or ctx
// ends, in which case it returns ctx's error. Entries are re-checked on
// every change (a new request or a status written), so keep may look at
// Status.
func (l *Log) WaitFunc(ctx context.Context, n int, keep func(Entry) bool) error {
	for {
		l.mu.Lock()
		count := l.countLocked(keep)
		changed := l.changed
		l.mu.Unlock()
		if count >= n {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		}
	}
}

// WaitCount blocks until [Log.Count](method) >= n or ctx ends (it then
// returns ctx's error).
func (l *Log) WaitCount(ctx context.Context, method string, n int) error {
	return l.WaitFunc(ctx, n, withMethod(method))
}

// WaitVerb blocks until [Log.CountVerb](verb) >= n or ctx ends (it then
// returns ctx's error).
func (l *Log) WaitVerb(ctx context.Context, verb string, n int) error {
	return l.WaitFunc(ctx, n, withVerb(verb))
}

func withMethod(method string) func(Entry) bool {
	return func(e Entry) bool { return e.Method == method }
}

func withVerb(verb string) func(Entry) bool {
	return func(e Entry) bool { return e.Verb == verb }
}
