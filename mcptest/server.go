package mcptest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ErrClosed is returned by [Server] methods called after [Server.Close].
var ErrClosed = errors.New("mcptest: server closed")

// ErrInvalidOptions is wrapped by the error [NewServer] returns for
// [Options] it cannot honour.
var ErrInvalidOptions = errors.New("mcptest: invalid options")

// Mode is the protocol era and session style of a [Server].
type Mode int

const (
	// Stateful2025 is a 2025-era server with sessions (the zero Mode): it
	// issues an Mcp-Session-Id on initialize, serves the standalone GET
	// stream and DELETE, and answers an unknown session id with 404. Its
	// versions are pinned to 2025-11-25 and older, so go-sdk never
	// negotiates 2026-07-28: go-sdk's client, which sends server/discover
	// first, gets HTTP 400 with a JSON-RPC error and falls back to
	// initialize (set mcp.ClientSessionOptions.ProtocolVersion to a 2025
	// version to skip that request).
	Stateful2025 Mode = iota
	// Stateless2025 is a 2025-era server that never issues a session id
	// (go-sdk's StreamableHTTPOptions.Stateless, versions pinned as in
	// Stateful2025): GET and DELETE are answered 405.
	Stateless2025
	// Sessionless2026 is a 2026-07-28 server (stateless, server/discover);
	// it still accepts a 2025-era initialize from older clients.
	Sessionless2026
)

// String names the mode.
func (m Mode) String() string {
	switch m {
	case Stateful2025:
		return "stateful-2025"
	case Stateless2025:
		return "stateless-2025"
	case Sessionless2026:
		return "sessionless-2026"
	}
	return "mode(" + strconv.Itoa(int(m)) + ")"
}

// protocolVersions2025 are the versions a 2025-era server negotiates.
var protocolVersions2025 = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

func (m Mode) protocolVersions() []string {
	if m == Sessionless2026 {
		return nil // every version go-sdk supports
	}
	return slices.Clone(protocolVersions2025)
}

// Options configures a [Server]. The zero value is a stateful 2025-era
// server whose only features are the tools [RecordTool] and [BlockTool].
//
// A kind with no items is not declared in the server's capabilities, and
// its list method is answered with JSON-RPC -32601 Method not found (go-sdk
// alone would answer an empty list). Resource templates have no capability
// of their own: the resources capability is declared when there are
// resources or templates.
type Options struct {
	// Mode is the protocol era and session style; zero is [Stateful2025].
	Mode Mode
	// Tools is the number of plain tools besides the fixed ones, named
	// [ToolName](1..Tools); each echoes its "text" argument.
	Tools int
	// WithoutTools drops [RecordTool] and [BlockTool]; with Tools == 0 the
	// server then has no tools at all.
	WithoutTools bool
	// IdempotentRecord adds [IdempotentRecordTool], a recording tool
	// annotated idempotentHint (MCP ToolAnnotations), for tests of what a
	// client may send again.
	IdempotentRecord bool
	// UndeclaredTools leaves the tools capability out of what the server
	// declares (the initialize and server/discover results) while it still
	// lists and serves its tools, as some servers do.
	UndeclaredTools bool
	// Resources is the number of resources, [ResourceURI](1..Resources).
	Resources int
	// Prompts is the number of prompts, [PromptName](1..Prompts).
	Prompts int
	// Templates is the number of resource templates,
	// [TemplateURI](1..Templates).
	Templates int
	// MaxBlock bounds how long a [BlockTool] call waits for its release.
	// Zero means 30 s.
	MaxBlock time.Duration
	// MaxHold bounds every gateway delay and hold
	// ([GatewayOptions.MaxHold]). Zero means 30 s.
	MaxHold time.Duration
	// Name is the server's implementation name; "" means "mcptest".
	Name string
	// Logger receives the go-sdk server's and the gateway's logs; nil
	// discards them.
	Logger *slog.Logger
}

// Server is a real go-sdk MCP server over streamable HTTP, listening on
// 127.0.0.1 behind a [Gateway]. Its methods are safe for concurrent use.
type Server struct {
	opts   Options
	logger *slog.Logger
	cat    *catalog
	calls  counter
	blocks *blocker
	gw     *Gateway
	ts     *httptest.Server
	gen    atomic.Pointer[generation]

	mu     sync.Mutex // serialises Restart, Close and catalog changes
	closed atomic.Bool
}

// generation is one incarnation of the go-sdk server; Restart replaces it.
// Ending it ends the requests it still serves, as a process that stops
// drops its connections: a stateless server's listen handler waits for its
// request's end, and go-sdk's ServerSession.Close waits for that handler.
type generation struct {
	srv     *mcp.Server
	handler http.Handler
	life    context.Context
	end     context.CancelFunc

	// requests ends the requests in flight when a sessionless server's
	// sessions are expired: go-sdk's ServerSession.Close waits for their
	// handlers (a live subscriptions/listen among them), which nothing else
	// ends.
	mu       sync.Mutex
	requests context.Context
	endReqs  context.CancelFunc
}

// inFlight returns the context that ends the requests served now.
func (g *generation) inFlight() context.Context {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.requests
}

// endInFlight ends the requests served now; later ones get a new context.
func (g *generation) endInFlight() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.endReqs()
	g.requests, g.endReqs = context.WithCancel(g.life)
}

// NewServer starts a server on 127.0.0.1 (a free port). It returns an error
// wrapping [ErrInvalidOptions] for a negative count or an unknown mode, or
// the listener's error. Call [Server.Close] when done.
func NewServer(opts Options) (*Server, error) {
	if opts.Tools < 0 || opts.Resources < 0 || opts.Prompts < 0 || opts.Templates < 0 {
		return nil, fmt.Errorf("%w: negative count in %+v", ErrInvalidOptions, opts)
	}
	if opts.Mode < Stateful2025 || opts.Mode > Sessionless2026 {
		return nil, fmt.Errorf("%w: unknown mode %d", ErrInvalidOptions, int(opts.Mode))
	}
	if opts.MaxBlock <= 0 {
		opts.MaxBlock = 30 * time.Second
	}
	if opts.Name == "" {
		opts.Name = "mcptest"
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{opts: opts, logger: logger, cat: newCatalog(opts), blocks: newBlocker()}
	s.gen.Store(s.newGeneration())
	s.gw = NewGateway(http.HandlerFunc(s.serveMCP), GatewayOptions{
		KnownSession: s.KnownSession,
		MaxHold:      opts.MaxHold,
		Logger:       logger,
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("mcptest: listen: %w", err)
	}
	s.ts = &httptest.Server{Listener: l, Config: &http.Server{Handler: s.gw, ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelDebug)}}
	s.ts.Start()
	return s, nil
}

func (s *Server) newGeneration() *generation {
	srv := s.newMCPServer()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		Stateless: s.opts.Mode != Stateful2025,
		Logger:    s.logger,
	})
	life, end := context.WithCancel(context.Background())
	g := &generation{srv: srv, handler: h, life: life, end: end}
	g.requests, g.endReqs = context.WithCancel(life)
	return g
}

// serveMCP hands a request to the current go-sdk server.
func (s *Server) serveMCP(w http.ResponseWriter, r *http.Request) {
	if s.closed.Load() {
		http.Error(w, "mcptest: server closing", http.StatusServiceUnavailable)
		return
	}
	g := s.gen.Load()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stop := context.AfterFunc(g.inFlight(), cancel) // the generation, or its sessions, ended: so does the request
	defer stop()
	g.handler.ServeHTTP(w, r.WithContext(ctx))
}

// URL is the MCP endpoint, http://127.0.0.1:<port>/mcp. It stays the same
// across [Server.Restart].
func (s *Server) URL() string { return s.ts.URL + "/mcp" }

// HTTPClient returns an http.Client for the server whose idle connections
// [Server.Close] closes.
func (s *Server) HTTPClient() *http.Client { return s.ts.Client() }

// Gateway returns the gateway in front of the server.
func (s *Server) Gateway() *Gateway { return s.gw }

// Log returns the gateway's request log (Gateway().Log()).
func (s *Server) Log() *Log { return s.gw.Log() }

// Mode returns the server's mode.
func (s *Server) Mode() Mode { return s.opts.Mode }

// SessionIDs returns the ids of the sessions the server currently knows,
// sorted (always empty for the sessionless modes).
func (s *Server) SessionIDs() []string {
	var ids []string
	for ss := range s.gen.Load().srv.Sessions() {
		if id := ss.ID(); id != "" {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// KnownSession reports whether the server knows the session id.
func (s *Server) KnownSession(id string) bool { return s.session(id) != nil }

// ExpireSession ends the server-side session id, as a session timeout
// does: later requests carrying it are answered 404 by go-sdk (the
// gateway's [UnknownSession] rules see it as unknown). Its blocked
// [BlockTool] calls end with an error (go-sdk's ServerSession.Close waits
// for the session's handlers, so they would hold it). It reports whether
// the session existed.
func (s *Server) ExpireSession(id string) bool {
	ss := s.session(id)
	if ss != nil {
		s.blocks.expire(ss)
		_ = ss.Close()
	}
	return ss != nil
}

// session returns the current server's session id, or nil.
func (s *Server) session(id string) *mcp.ServerSession {
	if id == "" {
		return nil
	}
	for ss := range s.gen.Load().srv.Sessions() {
		if ss.ID() == id {
			return ss
		}
	}
	return nil
}

// ExpireAll ends every session the server knows, as ExpireSession does,
// and returns how many.
func (s *Server) ExpireAll() int {
	g := s.gen.Load()
	if s.opts.Mode != Stateful2025 {
		g.endInFlight() // a sessionless server's sessions are its requests
	}
	return closeSessions(g.srv, s.blocks)
}

// closeSessions closes every session of srv (Sessions iterates over a
// snapshot), ending their blocked calls first, and returns how many had an
// id.
func closeSessions(srv *mcp.Server, blocks *blocker) int {
	n := 0
	for ss := range srv.Sessions() {
		if ss.ID() != "" {
			n++
		}
		blocks.expire(ss)
		_ = ss.Close()
	}
	return n
}

// Restart replaces the go-sdk server with a fresh one holding the same
// catalog, at the same URL: every session id issued before is unknown
// afterwards (404 from go-sdk), and the old sessions' streams end. Tool
// invocation counts are kept. It returns [ErrClosed] after Close.
func (s *Server) Restart() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Load() {
		return ErrClosed
	}
	old := s.gen.Swap(s.newGeneration())
	old.end()
	closeSessions(old.srv, s.blocks)
	return nil
}

// Invocations returns how many times tool ([RecordTool], [BlockTool] or
// [IdempotentRecordTool]) ran with the id argument, across restarts.
func (s *Server) Invocations(tool, id string) int { return s.calls.get(tool, id) }

// RecordedMeta returns a copy of the _meta the latest [RecordTool] call with
// the id argument carried (e.g. the caller's trace context, "traceparent"),
// nil when there was none. Values are as JSON decodes them.
func (s *Server) RecordedMeta(id string) map[string]any { return s.calls.meta(RecordTool, id) }

// Progress makes a [BlockTool] call with id that is blocked (or the next
// one) send one notifications/progress for its request, when the request
// carries a progressToken (MCP spec, progress).
func (s *Server) Progress(id string) { s.blocks.askProgress(id) }

// Release lets every [BlockTool] call with id return, now and later.
func (s *Server) Release(id string) { s.blocks.release(id) }

// WaitBlocked waits until a [BlockTool] call with id has started, or ctx
// ends (it then returns ctx's error).
func (s *Server) WaitBlocked(ctx context.Context, id string) error {
	return s.blocks.waitArrived(ctx, id)
}

// AddTool adds a plain echo tool named name (replacing one of that name)
// and keeps it across restarts; connected 2025-era sessions receive
// notifications/tools/list_changed (go-sdk sends it after a short delay).
func (s *Server) AddTool(name string) {
	s.mu.Lock() // not during a Restart
	defer s.mu.Unlock()
	s.cat.mu.Lock()
	if !slices.Contains(s.cat.tools, name) {
		s.cat.tools = append(s.cat.tools, name)
		slices.Sort(s.cat.tools)
	}
	s.cat.mu.Unlock()
	addEchoTool(s.gen.Load().srv, name)
}

// RemoveTool removes the tool name (a plain tool, or [RecordTool] /
// [BlockTool], which removes both fixed tools) and reports whether it was
// present; sessions receive notifications/tools/list_changed.
func (s *Server) RemoveTool(name string) bool {
	s.mu.Lock() // not during a Restart
	defer s.mu.Unlock()
	s.cat.mu.Lock()
	removed := []string{name}
	found := false
	if i := slices.Index(s.cat.tools, name); i >= 0 {
		s.cat.tools = slices.Delete(s.cat.tools, i, i+1)
		found = true
	} else if s.cat.fixed && (name == RecordTool || name == BlockTool) {
		s.cat.fixed = false
		removed = []string{RecordTool, BlockTool}
		found = true
	}
	s.cat.mu.Unlock()
	if found {
		s.gen.Load().srv.RemoveTools(removed...)
	}
	return found
}

// ToolNames returns the names of the server's tools, sorted.
func (s *Server) ToolNames() []string { return s.cat.toolNames() }

// ResourceURIs returns the URIs of the server's resources, sorted.
func (s *Server) ResourceURIs() []string {
	return s.numbered(func(c *catalog) int { return c.resources }, ResourceURI)
}

// PromptNames returns the names of the server's prompts, sorted.
func (s *Server) PromptNames() []string {
	return s.numbered(func(c *catalog) int { return c.prompts }, PromptName)
}

// TemplateURIs returns the URI templates of the server's resource
// templates, sorted.
func (s *Server) TemplateURIs() []string {
	return s.numbered(func(c *catalog) int { return c.templates }, TemplateURI)
}

func (s *Server) numbered(count func(*catalog) int, name func(int) string) []string {
	s.cat.mu.Lock()
	n := count(s.cat)
	s.cat.mu.Unlock()
	out := make([]string, 0, n)
	for i := 1; i <= n; i++ {
		out = append(out, name(i))
	}
	slices.Sort(out)
	return out
}

// Close releases every hold, delay and blocked tool call, ends every
// session, drops the remaining client connections and waits for every
// handler to return. It is idempotent.
func (s *Server) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Swap(true) {
		return
	}
	s.gw.Close()
	close(s.blocks.closing)
	s.gen.Load().end()
	closeSessions(s.gen.Load().srv, s.blocks)
	s.ts.CloseClientConnections()
	s.ts.Close()
	s.gw.waitServing()
	closeSessions(s.gen.Load().srv, s.blocks)
}
