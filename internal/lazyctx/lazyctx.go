// Package lazyctx holds a cancelable context made at its first use, so a
// session that stays idle carries none: a context that ever had a child
// keeps its children map and its Done channel (docs/benchmarks.md
// section 5 counts what an idle connection costs).
package lazyctx

import (
	"context"
	"sync"
)

// Life is a context made from a parent at its first use and ended by End,
// now or at its making. The zero value is ready; safe for concurrent use.
type Life struct {
	mu     sync.Mutex
	ctx    context.Context
	cancel context.CancelFunc
	ended  bool
}

// Context returns the context, made from parent now if need be (the
// parent of its first use is its parent); after End it is done.
func (l *Life) Context(parent context.Context) context.Context {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ctx == nil {
		l.ctx, l.cancel = context.WithCancel(parent)
		if l.ended {
			l.cancel()
		}
	}
	return l.ctx
}

// End ends the context, now or at its making. Idempotent.
func (l *Life) End() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ended = true
	if l.cancel != nil {
		l.cancel()
	}
}

// Ended reports whether End was called.
func (l *Life) Ended() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ended
}
