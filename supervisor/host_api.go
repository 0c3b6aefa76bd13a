//lint:file-ignore SA1019 roots and logging/setLevel are deprecated from protocol 2026-07-28 on (SEP-2577), and still served by 2025-era servers

package supervisor

import (
	"context"
	"maps"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/msgcheck"
	seam "github.com/mcpsup/mcpsup/session"
)

// InitializeResult returns the server's initialize answer: the live
// session's, else the last (or Config.Resume's); nil before the first
// handshake and after a blind resume. It is shared: do not modify it.
func (s *Supervisor) InitializeResult() *mcp.InitializeResult {
	return read(s, func(sn *snapshot) *mcp.InitializeResult {
		if h := sn.live; h != nil {
			if r := h.sess.Info().Initialize; r != nil {
				return r
			}
		}
		if sn.resume != nil {
			return sn.resume.InitializeResult
		}
		return nil
	})
}

// Ping asks the live session's server whether it answers, as a call (a
// *CallError on failure): MCP `ping`; on 2026-07-28, which has none,
// `server/discover` over HTTP, and over stdio -32601 is life.
func (s *Supervisor) Ping(ctx context.Context) error {
	_, err := request(s, ctx, "Ping", "ping", &struct{}{}, func(*struct{}) (string, any) { return "", nil },
		noResult(func(sess seam.Session, ctx context.Context, _ *struct{}) error { return sess.Alive(ctx) }))
	return err
}

// SetLoggingLevel sets the level of the server's log messages: MCP
// `logging/setLevel` on a 2025-era session, restored on every new one; a
// 2026-07-28 session (changelog.mdx item 5 removed it) gets the level in
// each later request's `_meta` (logging.mdx, "Per-request log level").
func (s *Supervisor) SetLoggingLevel(ctx context.Context, params *mcp.SetLoggingLevelParams) error {
	_, err := request(s, ctx, "SetLoggingLevel", "logging/setLevel", params, func(p *mcp.SetLoggingLevelParams) (string, any) { return string(p.Level), nil },
		noResult(func(sess seam.Session, ctx context.Context, p *mcp.SetLoggingLevelParams) error {
			if msgcheck.ModernVersion(sess.Info().ProtocolVersion) {
				return nil // the next requests carry it (logLevelMeta)
			}
			return sess.SetLoggingLevel(ctx, p)
		}))
	if err == nil {
		s.logLevel.Store(string(params.Level))
	}
	return err
}

// AddRoots adds roots (replacing any of the same URI; nil skipped) to the
// current and later sessions. Deprecated from 2026-07-28 on (SEP-2577).
func (s *Supervisor) AddRoots(roots ...*mcp.Root) { s.roots.add(roots) }

// RemoveRoots removes the roots of these URIs, as AddRoots adds them.
func (s *Supervisor) RemoveRoots(uris ...string) { s.roots.remove(uris) }

// rootSet holds the host's roots and the sessions' clients under one lock,
// so a client never misses a change.
type rootSet struct {
	mu      sync.Mutex
	roots   map[string]*mcp.Root // by URI: go-sdk keys and lists them so
	clients []*mcp.Client
}

// add skips nil roots: go-sdk's AddRoots would panic on one, its lock held.
func (r *rootSet) add(roots []*mcp.Root) {
	roots = slices.DeleteFunc(slices.Clone(roots), func(x *mcp.Root) bool { return x == nil })
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.roots == nil {
		r.roots = map[string]*mcp.Root{}
	}
	for _, root := range roots {
		r.roots[root.URI] = root
	}
	for _, cl := range r.clients {
		cl.AddRoots(roots...)
	}
}

func (r *rootSet) remove(uris []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, uri := range uris {
		delete(r.roots, uri)
	}
	for _, cl := range r.clients {
		cl.RemoveRoots(uris...)
	}
}

func (r *rootSet) attach(cl *mcp.Client) {
	r.mu.Lock()
	defer r.mu.Unlock()
	cl.AddRoots(slices.Collect(maps.Values(r.roots))...) // none: nothing
	r.clients = append(r.clients, cl)
}

func (r *rootSet) detach(cl *mcp.Client) {
	r.mu.Lock()
	r.clients = slices.DeleteFunc(r.clients, func(x *mcp.Client) bool { return x == cl })
	r.mu.Unlock()
}
