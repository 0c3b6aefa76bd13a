// Package handshakectx holds the context a transport hands go-sdk's
// Connect. go-sdk keeps that context for the session's life (the root of
// its reader and of the server requests' handlers, for values alone:
// mcp/transport.go connect, internal/jsonrpc2 notDone), so a dial's
// context, its deadline's timer and the values it carries would live as
// long as the session.
package handshakectx

import (
	"context"
	"sync/atomic"
	"time"
)

// Context is the caller's context until [Context.Release], then, unless
// the caller's had ended, the background context. One seen done stays
// done. Safe for concurrent use.
type Context struct {
	caller atomic.Pointer[context.Context]
}

// New returns the Context of a handshake run under caller.
func New(caller context.Context) *Context {
	h := &Context{}
	h.caller.Store(&caller)
	return h
}

// Release lets go of the caller's context once the handshake returned,
// leaving the session live.
func (h *Context) Release() {
	if h.ctx().Err() == nil {
		bg := context.Background()
		h.caller.Store(&bg)
	}
}

func (h *Context) ctx() context.Context                    { return *h.caller.Load() }
func (h *Context) Deadline() (deadline time.Time, ok bool) { return h.ctx().Deadline() }
func (h *Context) Done() <-chan struct{}                   { return h.ctx().Done() }
func (h *Context) Err() error                              { return h.ctx().Err() }
func (h *Context) Value(key any) any                       { return h.ctx().Value(key) }

// AfterFunc registers f with the caller's context: a context derived from
// h starts no goroutine (context.AfterFunc's contract).
func (h *Context) AfterFunc(f func()) (stop func() bool) {
	return context.AfterFunc(h.ctx(), f)
}
