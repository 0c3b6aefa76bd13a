package probes

import (
	"context"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// step is one scripted answer of a fake list.
type step struct {
	n     int           // items in the page
	next  string        // next cursor
	err   error         // error to return
	hang  bool          // block until ctx is done, then return ctx.Err() wrapped
	gate  chan struct{} // block until closed (or ctx done) before answering
	after func()        // called just before answering
}

// call records one request the fake received.
type call struct {
	cursor      string
	ctxErr      error // the request context's error when the fake returned
	hasDeadline bool  // the request context had a deadline
}

// fake is a scripted Lister. Each list answers its steps in order; the last
// step repeats. A list without steps answers one empty page.
type fake struct {
	mu      sync.Mutex
	steps   map[List][]step
	calls   map[List][]call
	started map[List]chan struct{} // closed at the first request of a list
}

func newFake() *fake {
	f := &fake{steps: map[List][]step{}, calls: map[List][]call{}, started: map[List]chan struct{}{}}
	for _, l := range Lists() {
		f.started[l] = make(chan struct{})
	}
	return f
}

func (f *fake) script(l List, s ...step) *fake {
	f.steps[l] = s
	return f
}

func (f *fake) calls0(l List) []call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]call(nil), f.calls[l]...)
}

func (f *fake) count(l List) int { return len(f.calls0(l)) }

func (f *fake) page(ctx context.Context, l List, cursor string) (int, string, error) {
	f.mu.Lock()
	i := len(f.calls[l])
	_, dl := ctx.Deadline()
	f.calls[l] = append(f.calls[l], call{cursor: cursor, hasDeadline: dl})
	if i == 0 {
		close(f.started[l])
	}
	s := step{}
	if ss := f.steps[l]; len(ss) > 0 {
		s = ss[min(i, len(ss)-1)]
	}
	f.mu.Unlock()

	record := func() {
		f.mu.Lock()
		f.calls[l][i].ctxErr = ctx.Err()
		f.mu.Unlock()
	}
	defer record()
	if s.gate != nil {
		select {
		case <-s.gate:
		case <-ctx.Done():
			return 0, "", fmt.Errorf("calling %q: %w", l.Method(), ctx.Err())
		}
	}
	if s.hang {
		<-ctx.Done()
		return 0, "", fmt.Errorf("calling %q: %w", l.Method(), ctx.Err())
	}
	if s.after != nil {
		s.after()
	}
	return s.n, s.next, s.err
}

func (f *fake) ListTools(ctx context.Context, cursor string) ([]*mcp.Tool, string, error) {
	n, next, err := f.page(ctx, Tools, cursor)
	if err != nil {
		return nil, "", err
	}
	out := make([]*mcp.Tool, n)
	for i := range out {
		out[i] = &mcp.Tool{Name: fmt.Sprintf("tool-%s-%d", cursor, i)}
	}
	return out, next, nil
}

func (f *fake) ListResources(ctx context.Context, cursor string) ([]*mcp.Resource, string, error) {
	n, next, err := f.page(ctx, Resources, cursor)
	if err != nil {
		return nil, "", err
	}
	out := make([]*mcp.Resource, n)
	for i := range out {
		out[i] = &mcp.Resource{URI: fmt.Sprintf("file:///%s/%d", cursor, i)}
	}
	return out, next, nil
}

func (f *fake) ListPrompts(ctx context.Context, cursor string) ([]*mcp.Prompt, string, error) {
	n, next, err := f.page(ctx, Prompts, cursor)
	if err != nil {
		return nil, "", err
	}
	out := make([]*mcp.Prompt, n)
	for i := range out {
		out[i] = &mcp.Prompt{Name: fmt.Sprintf("prompt-%s-%d", cursor, i)}
	}
	return out, next, nil
}

func (f *fake) ListResourceTemplates(ctx context.Context, cursor string) ([]*mcp.ResourceTemplate, string, error) {
	n, next, err := f.page(ctx, ResourceTemplates, cursor)
	if err != nil {
		return nil, "", err
	}
	out := make([]*mcp.ResourceTemplate, n)
	for i := range out {
		out[i] = &mcp.ResourceTemplate{URITemplate: fmt.Sprintf("file:///%s/{%d}", cursor, i)}
	}
	return out, next, nil
}
