//lint:file-ignore SA1019 roots are deprecated from protocol 2026-07-28 on (SEP-2577), and still served by 2025-era servers

package supervisor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	seam "github.com/mcpsup/mcpsup/session"
)

// ErrConfigConflict: two fields of a Config ask for different things (see
// New). The error names both.
var ErrConfigConflict = errors.New("mcpsup: conflicting configuration")

// hostOptions maps the go-sdk options the supervisor replaces onto its own
// fields: ClientOptions.KeepAlive becomes Config.Recovery.KeepAlive (go-sdk's own
// keepalive sends DELETE on any failed ping, see keepalive), and is refused
// with ErrConfigConflict when Config.Recovery.KeepAlive names another interval.
func (c Config) hostOptions() (Config, error) {
	ka := c.Client.ClientOptions.KeepAlive
	switch {
	case ka <= 0:
	case c.Recovery.KeepAlive <= 0:
		c.Recovery.KeepAlive = ka
	case c.Recovery.KeepAlive != ka:
		return c, fmt.Errorf("%w: ClientOptions.KeepAlive %s and Config.Recovery.KeepAlive %s: set one (both mean the supervisor's keepalive)", ErrConfigConflict, ka, c.Recovery.KeepAlive)
	}
	c.Client.ClientOptions.KeepAlive = 0
	return c, nil
}

// InitializeResult returns what the server declared in its initialize
// answer (server info, capabilities, instructions): the live session's, or
// else the last session's, which a resume state persists (so a known
// resume has it at once, from Config.Resume). It is nil before the first
// handshake, and after a blind resume (a resume state without an
// InitializeResult) for as long as no handshake ran: the server's answer is
// then unknown. The result is shared: do not modify it. Safe for
// concurrent use.
func (s *Supervisor) InitializeResult() *mcp.InitializeResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h := s.snap.live; h != nil {
		if r := h.sess.Info().Initialize; r != nil {
			return r
		}
	}
	if rs := s.snap.resume; rs != nil {
		return rs.InitializeResult
	}
	return nil
}

// Ping asks the live session's server whether it answers, waiting for
// ready as a call does (Config.Limits.MaxCallWait), and fails with a *CallError as
// a call does: MCP `ping` before protocol 2026-07-28; from it, which has no
// ping (a go-sdk server answers -32601), `server/discover` over HTTP, as the
// keepalive does, and over stdio a -32601 answer is taken as life. A failed
// ping is judged as a call: only transport and session-expired replace the
// session. Safe for concurrent use.
func (s *Supervisor) Ping(ctx context.Context) error {
	_, err := do(s, ctx, "ping", "", nil, func(ctx context.Context, sess seam.Session) (struct{}, error) {
		return struct{}{}, sess.Alive(ctx)
	})
	return err
}

// AddRoots adds roots (replacing any with the same URI) to the current
// session and every later one; a live session's server is sent
// `notifications/roots/list_changed` (go-sdk Client.AddRoots). Safe for
// concurrent use.
//
// Roots are deprecated from protocol 2026-07-28 on (SEP-2577) and still
// served by 2025-era servers.
func (s *Supervisor) AddRoots(roots ...*mcp.Root) { s.roots.add(roots) }

// RemoveRoots removes the roots with these URIs from the current session and
// every later one, as AddRoots does. Removing an absent root is no error.
func (s *Supervisor) RemoveRoots(uris ...string) { s.roots.remove(uris) }

// rootSet holds the host's roots and the go-sdk clients of the sessions
// they apply to. One lock orders root changes and new clients, so a client
// never misses a change.
type rootSet struct {
	mu    sync.Mutex
	roots []*mcp.Root // by URI, in the order first added
	// clients are the sessions' clients: a slice, not a map, since a
	// supervisor holds one or two sessions at a time.
	clients []*mcp.Client
}

func (r *rootSet) add(roots []*mcp.Root) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, root := range roots {
		if root == nil {
			continue
		}
		if i := slices.IndexFunc(r.roots, func(x *mcp.Root) bool { return x.URI == root.URI }); i >= 0 {
			r.roots[i] = root
		} else {
			r.roots = append(r.roots, root)
		}
	}
	for _, cl := range r.clients {
		cl.AddRoots(roots...)
	}
}

func (r *rootSet) remove(uris []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.roots = slices.DeleteFunc(r.roots, func(x *mcp.Root) bool { return slices.Contains(uris, x.URI) })
	for _, cl := range r.clients {
		cl.RemoveRoots(uris...)
	}
}

// attach gives a new session's client the current roots (before it
// connects: nothing is sent) and the later changes, until detach.
func (r *rootSet) attach(cl *mcp.Client) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.roots) > 0 {
		cl.AddRoots(r.roots...)
	}
	if !slices.Contains(r.clients, cl) {
		r.clients = append(r.clients, cl)
	}
}

func (r *rootSet) detach(cl *mcp.Client) {
	r.mu.Lock()
	r.clients = slices.DeleteFunc(r.clients, func(x *mcp.Client) bool { return x == cl })
	r.mu.Unlock()
}
