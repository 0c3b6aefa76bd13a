package hub

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/probes"
	"github.com/mcpsup/mcpsup/supervisor"
)

// Config configures a Hub. The zero value is ready to use: servers named
// `server__item`, nothing persisted, events discarded.
type Config struct {
	// Supervisor is the template of every server's supervisor.Config; the
	// hub sets what is the server's own (Name, Endpoint or Command, Resume,
	// Events, HTTP.OAuthHandler, its headers and secrets) and masks
	// Observe.Logger. HTTP.OAuthHandler set is ErrSharedCredential.
	Supervisor supervisor.Config
	// Credentials gives each server its own OAuth handler (nil: none),
	// called once per server on Add's goroutine: a token is for one server
	// (MCP 2025-11-25, basic/authorization.mdx, Token Audience Binding).
	// Default nil: no server has OAuth.
	Credentials func(sc ServerConfig) auth.OAuthHandler
	// LookupEnv reads the variables header values reference (see
	// ServerConfig.Headers). Default os.LookupEnv.
	LookupEnv func(name string) (string, bool)
	// ServerMiddleware gives each server's supervisor a middleware (nil:
	// none) after the template's SendingMiddleware. Default none.
	ServerMiddleware func(server string) mcp.Middleware
	// Naming makes qualified names. Default DefaultNaming (`server__item`).
	Naming Naming
	// Store keeps each server's resume state across runs (see Store).
	// Default nil: nothing is loaded or saved.
	Store Store
	// StoreTimeout bounds each Store operation. Default 10s.
	StoreTimeout time.Duration
	// Lease is the lease rule, used when Store implements Leaser; a stdio
	// server (a process of each replica's own) is never leased.
	Lease LeaseConfig
	// MaxCatalogItems and MaxCatalogBytes bound one server's catalog
	// (tools, prompts and resources; bytes of their JSON): one over either
	// is not merged (KindCatalogRefused), its items merged before stay.
	// Defaults 30,000 and 32 MiB.
	MaxCatalogItems int
	MaxCatalogBytes int64
	// MaxStarting bounds the servers making their first connection at
	// once; the next starts when one is ready or failed. Default 8.
	MaxStarting int
	// Events receives every server's events and the hub's own (the Kind
	// constants) from many goroutines at once; it must not call Remove,
	// Close or Detach, which wait for it. Default: discarded.
	Events events.Sink
}

func (c Config) withDefaults() Config {
	if c.Naming == nil {
		c.Naming = DefaultNaming
	}
	c.StoreTimeout = cmp.Or(max(c.StoreTimeout, 0), 10*time.Second)
	c.MaxStarting = cmp.Or(max(c.MaxStarting, 0), 8)
	c.MaxCatalogItems = cmp.Or(max(c.MaxCatalogItems, 0), 3*probes.DefaultMaxItems)
	c.MaxCatalogBytes = cmp.Or(max(c.MaxCatalogBytes, 0), 32<<20)
	if c.Supervisor.Observe.Clock == nil {
		c.Supervisor.Observe.Clock = clockwork.NewRealClock()
	}
	if c.LookupEnv == nil {
		c.LookupEnv = os.LookupEnv
	}
	if c.Supervisor.Observe.Logger == nil {
		c.Supervisor.Observe.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Hub errors; every error a Hub returns wraps one of these, or is a
// *CallError, *ServerError, *StoreError, *ConfigError or
// *CatalogRefusedError.
var (
	// ErrClosed: the hub was closed or detached.
	ErrClosed = errors.New("hub: closed")
	// ErrDuplicate: a server of that name is in the hub, being added or
	// being removed.
	ErrDuplicate = errors.New("hub: server already added")
	// ErrUnknownServer: no server of that name is in the hub.
	ErrUnknownServer = errors.New("hub: unknown server")
	// ErrUnknownName: no item has that qualified name in the merged
	// catalog; nothing was sent.
	ErrUnknownName = errors.New("hub: unknown qualified name")
	// ErrUnsupported: the server's entry cannot be connected to (see
	// ServerConfig.Supported).
	ErrUnsupported = errors.New("hub: unsupported server")
	// ErrNameTooLong: the server's name is longer than events.MaxNameBytes.
	ErrNameTooLong = errors.New("hub: server name too long")
	// ErrNotReady: WaitReady's readiness became impossible, or its context
	// ended first.
	ErrNotReady = errors.New("hub: not ready")
	// ErrServerName: the server's namespace (see Naming) is empty, longer
	// than MaxNamespaceLen, or begins another server's or is begun by it.
	ErrServerName = errors.New("hub: the server's names would not be its own")
	// ErrSharedCredential: Config.Supervisor.HTTP.OAuthHandler is set and
	// would send one server's token to every server ("MUST NOT send tokens
	// to the MCP server other than ones issued by the MCP server's
	// authorization server": MCP 2025-11-25, basic/authorization.mdx, Token
	// Handling). Config.Credentials gives each its own.
	ErrSharedCredential = errors.New("hub: the template's OAuthHandler would reach every server: set Config.Credentials instead")
	// ErrUnsetVariable: a header value names an unset environment variable.
	ErrUnsetVariable = errors.New("hub: header names an unset environment variable")
	// ErrCatalogRefused: the server's current catalog is over
	// Config.MaxCatalogItems or MaxCatalogBytes and was not merged (see
	// CatalogRefusedError).
	ErrCatalogRefused = errors.New("hub: catalog refused")
)

// CatalogRefusedError says why a server's current catalog was not merged:
// Count (items, or bytes of their JSON) is over Bound. It stands until a
// catalog of the server within both bounds is merged. It wraps
// ErrCatalogRefused.
type CatalogRefusedError struct {
	Server string
	// Op is "items" (Bound is Config.MaxCatalogItems) or "bytes"
	// (Config.MaxCatalogBytes), as the KindCatalogRefused event's.
	Op    string
	Count int64
	Bound int64
}

// Error names the server cut to events.MaxNameBytes.
func (e *CatalogRefusedError) Error() string {
	return fmt.Sprintf("hub: server %q: catalog refused: %d %s over the bound of %d", events.CutName(e.Server), e.Count, e.Op, e.Bound)
}
func (e *CatalogRefusedError) Unwrap() error { return ErrCatalogRefused }

// ServerError is an error about one server of the hub.
type ServerError struct {
	Server string
	Err    error
}

// Error names the server cut to events.MaxNameBytes.
func (e *ServerError) Error() string {
	return fmt.Sprintf("hub: server %q: %v", events.CutName(e.Server), e.Err)
}
func (e *ServerError) Unwrap() error { return e.Err }

// Hub shows a set of supervisors by server name as one. Safe for
// concurrent use; Close and Detach wait for every goroutine it started.
type Hub struct {
	cfg    Config
	redact events.Redactor // the servers' header values
	creds  credentialVars  // the variables the servers' headers reference
	life   context.Context // ends on Close or Detach, under mu
	end    context.CancelFunc
	saves  *saver
	leaser Leaser // Config.Store, when it grants leases

	mu       sync.Mutex
	servers  map[string]*entry
	taken    takenNames    // the servers' names and those being added or removed
	changed  chan struct{} // closed and replaced on every state change
	starting chan struct{} // a slot per server starting (Config.MaxStarting)
	workers  sync.WaitGroup

	catMu     sync.Mutex
	tools     *merged[mcp.Tool]
	prompts   *merged[mcp.Prompt]
	resources *merged[mcp.Resource]
}

type entry struct {
	name      string
	sc        ServerConfig
	headers   map[string]string // sc.Headers, their ${NAME} references read
	secrets   []string          // the header values and what their references took
	oauth     auth.OAuthHandler // Config.Credentials', this server's alone
	ctx       context.Context   // ends when the server leaves the hub
	stop      context.CancelFunc
	leaseDone chan struct{} // closed when its lease loop returned; nil without a Leaser

	update sync.Mutex // one updateCatalog of the server at a time

	mu      sync.Mutex
	sup     *supervisor.Supervisor  // this term's (replaced when a lease is acquired or lost)
	lease   Lease                   // this term's; nil when standby or without a Leaser
	last    *supervisor.ResumeState // the state of the last term, kept when its lease was lost
	since   time.Time
	verdict classify.Verdict     // last failure seen
	merged  uint64               // generation of the catalog merged (or refused) last
	refused *CatalogRefusedError // that catalog was over a bound; nil when merged
	gone    bool                 // removed: its events no longer change the hub
}

func (e *entry) current() *supervisor.Supervisor {
	sup, _ := e.term()
	return sup
}

func (e *entry) term() (*supervisor.Supervisor, Lease) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.sup, e.lease
}

// setTerm makes sup and lease (nil: standby) the server's term, returning
// the old supervisor.
func (e *entry) setTerm(sup *supervisor.Supervisor, lease Lease, since time.Time) *supervisor.Supervisor {
	e.mu.Lock()
	defer e.mu.Unlock()
	old := e.sup
	e.sup, e.lease, e.since = sup, lease, since
	return old
}

// New returns an empty hub.
func New(cfg Config) *Hub {
	cfg = cfg.withDefaults()
	life, end := context.WithCancel(context.Background())
	h := &Hub{cfg: cfg, life: life, end: end, servers: map[string]*entry{}, changed: make(chan struct{}), starting: make(chan struct{}, cfg.MaxStarting)}
	h.saves = &saver{store: cfg.Store, timeout: cfg.StoreTimeout, failed: h.storeFailed, queues: map[string]*queue{}}
	h.leaser, _ = cfg.Store.(Leaser)
	// The secrets alone: the redactor's patterns would rewrite ordinary names.
	mask := h.redact.MaskSecrets
	h.tools = newMerged(cfg.Naming, mask, func(t *mcp.Tool) (string, string) { return t.Name, t.Name },
		func(t *mcp.Tool, n string) *mcp.Tool { c := *t; c.Name = n; return &c })
	h.prompts = newMerged(cfg.Naming, mask, func(p *mcp.Prompt) (string, string) { return p.Name, p.Name },
		func(p *mcp.Prompt, n string) *mcp.Prompt { c := *p; c.Name = n; return &c })
	h.resources = newMerged(cfg.Naming, mask, func(r *mcp.Resource) (string, string) { return r.URI, cmp.Or(r.Name, r.URI) },
		func(r *mcp.Resource, n string) *mcp.Resource { c := *r; c.Name = n; return &c })
	return h
}

// notifyLocked wakes WaitReady; h.mu held.
func (h *Hub) notifyLocked() {
	close(h.changed)
	h.changed = make(chan struct{})
}

func (h *Hub) notify() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.notifyLocked()
}

// Names returns the names of the servers in the hub, sorted.
func (h *Hub) Names() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Sorted(maps.Keys(h.servers))
}

// Supervisor returns the server's supervisor, or nil; Remove, not its
// Close or Detach, stops it.
func (h *Hub) Supervisor(name string) *supervisor.Supervisor {
	if e := h.entry(name); e != nil {
		return e.current()
	}
	return nil
}

func (h *Hub) entry(name string) *entry {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.servers[name]
}
