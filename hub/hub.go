package hub

import (
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
	// Supervisor is the template of every server's supervisor.Config
	// (backoff, timeouts, stream policy, clock, HTTP client ...). Per
	// server, the hub sets Name (the server's name), Endpoint (its URL) or
	// Command (its command, args, env and cwd, on the template Command's
	// grace periods and bounds, when it has one, its Inherit withholding
	// the variables the servers' headers reference: see
	// ServerConfig.Headers), Resume (from Store),
	// Events (the hub's sink), OAuthHandler (Credentials') and, when the
	// server has headers, HTTPClient (a copy of the template's whose
	// transport adds them); Logger is wrapped to mask the headers and env
	// values. Everything else reaches every server: the template carries no
	// credential. Its OAuthHandler must be nil (Add refuses every server
	// with ErrSharedCredential otherwise), and its HTTPClient must not add
	// one (a per-server header belongs in ServerConfig.Headers).
	Supervisor supervisor.Config
	// Credentials, when set, gives each server its own OAuth handler: the
	// hub calls it once per server, in Add, with the server's entry, and
	// the handler authorizes that server's requests alone, for as long as
	// the server is in the hub (its sessions and lease terms). A token is
	// issued for one server (its audience: MCP 2025-11-25,
	// basic/authorization.mdx, Token Audience Binding): return a handler
	// per server, nil for a server without OAuth. Concurrent refusals of
	// one server's token run its Authorize once (see
	// httpsession.Config.OAuthHandler). It is called on the goroutine of Add.
	// Default nil: no server has OAuth.
	Credentials func(sc ServerConfig) auth.OAuthHandler
	// LookupEnv reads the environment variables header values reference
	// (see ServerConfig.Headers). Default os.LookupEnv.
	LookupEnv func(name string) (string, bool)
	// ServerMiddleware, when set, gives each server's sessions go-sdk
	// sending middleware of their own, named for the server: the hub calls
	// it with the server's name for every supervisor it makes, and adds
	// the result after the template's SendingMiddleware (it runs last of
	// them, still outside mcpsup's wire facts: see
	// supervisor.Config.SendingMiddleware). mcpsupotel.Observer.Middleware
	// fits it as is, so that
	// every server's spans and metrics carry its name. A nil result is
	// none for that server. Default none.
	ServerMiddleware func(server string) mcp.Middleware
	// Naming makes qualified names. Default DefaultNaming (`server__item`).
	Naming Naming
	// Store keeps each server's resume state across runs (FileStore is the
	// default implementation). Default nil: nothing is loaded or saved.
	Store Store
	// StoreTimeout bounds each Store operation. Default 10s.
	StoreTimeout time.Duration
	// Lease sets the lease rule, used when Store implements Leaser: the
	// hub then serves a server only while it holds its lease, so replicas
	// of a host share one Store and a server's session is held by one
	// replica at a time. See LeaseConfig. A stdio server (command) is a
	// process of each replica's own, with no session to share: it is never
	// leased.
	Lease LeaseConfig
	// MaxCatalogItems and MaxCatalogBytes bound one server's catalog in the
	// merged view: its tools, prompts and resources together, counted in
	// items and in bytes of their JSON. A catalog over either is not
	// merged: the server's items stay those merged before (none for its
	// first), and a KindCatalogRefused event names the server and what was
	// over. They bound the memory and the work one server's catalog costs
	// the hub (each list is bounded by the supervisor's MaxItems and
	// MaxPages, but a list of MaxPages pages of the largest answer is
	// gigabytes). Defaults 30,000 items (three lists of the supervisor's
	// default MaxItems) and 32 MiB.
	MaxCatalogItems int
	MaxCatalogBytes int64
	// MaxStarting bounds how many servers make their first connection at
	// once; the next one starts when one of them is ready or failed.
	// Default 8.
	MaxStarting int
	// Events receives every event of every server, each tagged with its
	// server name (events.Event.Server), and the hub's own (the Kind
	// constants of this package). It is called from many goroutines at once
	// and must be safe for concurrent use; see supervisor.Config.Events for
	// the rules of a sink. It may read the hub (Tools, Health ...) but must
	// not call Remove, Close or Detach, which wait for the goroutine that
	// runs it. Default: discarded.
	Events events.Sink
}

func (c Config) withDefaults() Config {
	if c.Naming == nil {
		c.Naming = DefaultNaming
	}
	if c.StoreTimeout <= 0 {
		c.StoreTimeout = 10 * time.Second
	}
	if c.MaxStarting <= 0 {
		c.MaxStarting = 8
	}
	if c.MaxCatalogItems <= 0 {
		c.MaxCatalogItems = 3 * probes.DefaultMaxItems
	}
	if c.MaxCatalogBytes <= 0 {
		c.MaxCatalogBytes = 32 << 20
	}
	if c.Supervisor.Clock == nil {
		c.Supervisor.Clock = clockwork.NewRealClock()
	}
	if c.LookupEnv == nil {
		c.LookupEnv = os.LookupEnv
	}
	if c.Supervisor.Logger == nil {
		c.Supervisor.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Hub errors; every error a Hub returns wraps one of these, or is a
// *CallError, *ServerError, *StoreError or *ConfigError.
var (
	// ErrClosed: the hub was closed or detached.
	ErrClosed = errors.New("hub: closed")
	// ErrDuplicate: a server of that name is already in the hub, being
	// added, or being removed (its Remove has not returned).
	ErrDuplicate = errors.New("hub: server already added")
	// ErrUnknownServer: no server of that name is in the hub.
	ErrUnknownServer = errors.New("hub: unknown server")
	// ErrUnknownName: no tool, prompt or resource has that qualified name in
	// the merged catalog; nothing was sent. A server's items are in it only
	// while it is ready here (not before its first ready, nor while this
	// replica stands by for another's lease): the *CallError's text names
	// the servers not serving their items then, with their state.
	ErrUnknownName = errors.New("hub: unknown qualified name")
	// ErrUnsupported: the server's entry cannot be connected to (see
	// ServerConfig.Supported).
	ErrUnsupported = errors.New("hub: unsupported server")
	// ErrNameTooLong: the server's name is longer than
	// events.MaxNameBytes, the bound of a name an event carries: the name
	// is in every event of the server, its qualified names and its errors.
	ErrNameTooLong = errors.New("hub: server name too long")
	// ErrNotReady: WaitReady found no way to the readiness it waited for
	// (servers in a terminal failed state), or its context ended first.
	ErrNotReady = errors.New("hub: not ready")
	// ErrServerName: the server's name cannot make a namespace of its own
	// (see Naming): its namespace is empty or longer than MaxNamespaceLen, or
	// it begins another server's namespace, or another's begins it ("gh__" and
	// "gh__ent__": gh's item "ent__record" would be gh__ent's "record").
	ErrServerName = errors.New("hub: the server's names would not be its own")
	// ErrSharedCredential: Config.Supervisor.OAuthHandler is set. The
	// template is every server's config, so its handler's token would go
	// to every server; OAuth tokens are bound to the server they were
	// issued for ("MCP clients MUST NOT send tokens to the MCP server
	// other than ones issued by the MCP server's authorization server":
	// MCP 2025-11-25, basic/authorization.mdx, Token Handling). Give each
	// server its own with Config.Credentials.
	ErrSharedCredential = errors.New("hub: the template's OAuthHandler would reach every server: set Config.Credentials instead")
	// ErrUnsetVariable: a header value names an environment variable that
	// is not set (see ServerConfig.Headers).
	ErrUnsetVariable = errors.New("hub: header names an unset environment variable")
)

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

// Hub holds a set of supervisors by server name and shows them as one: a
// merged catalog of qualified names, calls routed by those names, health as
// a value, one events sink, resume states kept in a Store.
//
// All methods are safe for concurrent use. The hub starts no goroutine of
// its own while idle: a few run while servers start and while states are
// saved, and Close and Detach wait for them and for every supervisor.
type Hub struct {
	cfg    Config
	redact events.Redactor // the servers' header values
	creds  credentialVars  // the variables the servers' headers reference
	life   context.Context // ends on Close or Detach: stops the starters
	end    context.CancelFunc
	saves  *saver
	leaser Leaser // Config.Store, when it grants leases

	mu       sync.Mutex
	servers  map[string]*entry
	taken    takenNames // the servers' names and those being added or removed
	closed   bool
	changed  chan struct{} // closed and replaced on every state change
	pending  []startJob    // waiting to start
	starters int
	workers  sync.WaitGroup

	catMu     sync.Mutex
	tools     *merged[mcp.Tool]
	prompts   *merged[mcp.Prompt]
	resources *merged[mcp.Resource]
}

// entry is one server of the hub.
type entry struct {
	name    string
	sc      ServerConfig
	headers map[string]string // sc.Headers, their ${NAME} references read
	secrets []string          // the header values and what their references took
	oauth   auth.OAuthHandler // Config.Credentials', this server's alone
	ctx     context.Context   // ends when the server leaves the hub
	stop    context.CancelFunc
	// leaseDone is closed when the server's lease loop has returned; nil
	// without a Leaser.
	leaseDone chan struct{}

	update sync.Mutex // held by updateCatalog: one update of the server's catalog at a time

	mu         sync.Mutex
	sup        *supervisor.Supervisor // this term's (replaced when a lease is acquired or lost)
	lease      Lease                  // this term's; nil when standby or without a Leaser
	leaseState LeaseState
	last       *supervisor.ResumeState // the state of the last term, kept when its lease was lost
	since      time.Time
	verdict    classify.Verdict // last failure seen
	merged     uint64           // generation of the catalog merged last
	gone       bool             // removed: its events no longer change the hub
}

// current returns the server's supervisor of this term.
func (e *entry) current() *supervisor.Supervisor {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.sup
}

// term returns the supervisor and the lease of this term.
func (e *entry) term() (*supervisor.Supervisor, Lease) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.sup, e.lease
}

// ready reports whether the server is ready and its catalog of this session
// is merged: only then do its items route.
func (e *entry) ready() bool {
	sup := e.current()
	if sup.State() != supervisor.Ready {
		return false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.merged == sup.Generation()
}

// startJob is a supervisor waiting to start; ctx ends when it no longer
// should (its server left, its lease was lost).
type startJob struct {
	e   *entry
	sup *supervisor.Supervisor
	ctx context.Context
}

// New returns an empty hub.
func New(cfg Config) *Hub {
	cfg = cfg.withDefaults()
	life, end := context.WithCancel(context.Background())
	h := &Hub{cfg: cfg, life: life, end: end, servers: map[string]*entry{}, changed: make(chan struct{})}
	h.saves = &saver{store: cfg.Store, timeout: cfg.StoreTimeout, failed: h.storeFailed}
	h.leaser, _ = cfg.Store.(Leaser)
	h.tools = newMerged(cfg.Naming, func(t *mcp.Tool) string { return t.Name }, masked(h, func(t *mcp.Tool) string { return t.Name }),
		func(t *mcp.Tool, n string) *mcp.Tool { c := *t; c.Name = n; return &c })
	h.prompts = newMerged(cfg.Naming, func(p *mcp.Prompt) string { return p.Name }, masked(h, func(p *mcp.Prompt) string { return p.Name }),
		func(p *mcp.Prompt, n string) *mcp.Prompt { c := *p; c.Name = n; return &c })
	h.resources = newMerged(cfg.Naming, func(r *mcp.Resource) string { return r.URI }, masked(h, resourceLabel),
		func(r *mcp.Resource, n string) *mcp.Resource { c := *r; c.Name = n; return &c })
	return h
}

// masked is label with the servers' registered secrets masked by the
// hub's redactor (its patterns are not applied: they would rewrite ordinary
// names, "auth:login" read as a credential header): a qualified name is
// made of it, and a secret a server puts in an item's name (one of its env
// values, say) would otherwise reach the qualified name, and every event
// naming it, with its bytes outside the name pattern replaced, where the
// redactor no longer knows it.
func masked[T any](h *Hub, label func(*T) string) func(*T) string {
	return func(it *T) string { return h.redact.MaskSecrets(label(it)) }
}

func resourceLabel(r *mcp.Resource) string {
	if r.Name != "" {
		return r.Name
	}
	return r.URI
}

// AddServers adds every supported server of f (see Add) and reports each
// of f's warnings as a KindConfigWarning event. It returns the errors of the
// servers it could not add, joined; the others are added all the same.
func (h *Hub) AddServers(ctx context.Context, f *ServersFile) error {
	for _, w := range f.Warnings {
		h.emit(events.Event{Kind: KindConfigWarning, Server: w.Server, Detail: w.String()})
	}
	// Every entry's credentials first (also those not added now): a stdio
	// server added, and started, before the server whose header names a
	// variable does not inherit it.
	for _, sc := range slices.Concat(f.Servers, f.Unsupported, f.Disabled) {
		h.creds.note(sc)
	}
	var errs []error
	for _, sc := range f.Servers {
		if err := h.Add(ctx, sc); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Add adds a server and queues it to start (at most Config.MaxStarting
// make their first connection at once). Its resume state is loaded from the
// Store first: a missing one starts it fresh; a corrupt or foreign one, or
// one its supervisor refuses, starts it fresh too, after a KindStoreFailed
// event. Other servers are not affected in any case. When the Store is a
// Leaser, the server starts standby instead: it is loaded and started once
// its lease is acquired (LeaseConfig).
//
// Errors: a *ServerError wrapping ErrDuplicate, ErrNameTooLong (a name of
// more than events.MaxNameBytes bytes), ErrServerName (its namespace
// overlaps another server's: see Naming), ErrUnsupported, ErrClosed,
// ErrSharedCredential, ErrUnsetVariable or the supervisor's validation
// error (a bad URL).
func (h *Hub) Add(ctx context.Context, sc ServerConfig) error {
	fail := func(err error) error { return &ServerError{Server: sc.Name, Err: err} }
	if sc.Name == "" {
		return fail(errors.New("empty server name"))
	}
	if err := checkNameLength(sc.Name); err != nil {
		return fail(err)
	}
	if ok, why := sc.Supported(); !ok {
		return fail(fmt.Errorf("%w: %s", ErrUnsupported, why))
	}
	if h.cfg.Supervisor.OAuthHandler != nil {
		return fail(ErrSharedCredential)
	}
	h.creds.note(sc)
	headers, took, err := expandHeaders(sc.Headers, h.cfg.LookupEnv)
	if err != nil {
		return fail(err)
	}
	ns, err := namespace(h.cfg.Naming, sc.Name)
	if err != nil {
		return fail(err)
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return fail(ErrClosed)
	}
	if err := h.taken.take(sc.Name, ns); err != nil {
		h.mu.Unlock()
		return fail(err)
	}
	h.mu.Unlock()
	added := false
	defer func() {
		if !added {
			h.mu.Lock()
			h.taken.free(sc.Name)
			h.mu.Unlock()
		}
	}()

	h.redact.AddEndpointSecrets(sc.URL)
	// The header values (and what their references took) are the server's
	// secrets: the hub's redactor masks them in its texts, the server's
	// supervisor where its own texts are made (its errors and verdicts
	// reach the host unwrapped too: errors.As, Health).
	secrets := append(slices.Collect(maps.Values(headers)), took...)
	for _, v := range secrets {
		h.redact.AddLikelySecret(v)
	}
	for _, v := range sc.Env {
		h.redact.AddLikelySecret(v)
	}
	h.redact.AddCommandLineSecrets(sc.Args)
	e := &entry{name: sc.Name, sc: sc, headers: headers, secrets: secrets}
	if h.cfg.Credentials != nil {
		e.oauth = h.cfg.Credentials(sc)
	}
	e.ctx, e.stop = context.WithCancel(h.life)
	// A stdio server is a process of this replica's own: never leased.
	leased := h.leaser != nil && sc.Command == ""
	var rs *supervisor.ResumeState
	if !leased {
		rs, _ = h.load(ctx, sc)
	} else {
		e.leaseState = LeaseStandby
		e.leaseDone = make(chan struct{})
	}
	sup, rs, err := h.newSupervisor(e, rs, nil)
	if err != nil {
		e.stop()
		return fail(err)
	}
	e.sup = sup
	e.since = h.cfg.Supervisor.Clock.Now()

	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		e.stop()
		return fail(ErrClosed)
	}
	h.servers[sc.Name] = e
	added = true
	h.notifyLocked()
	h.mu.Unlock()
	// Announced before it starts, so its own events follow.
	detail := resumeDetail(rs)
	if leased {
		detail = "standby until its lease is acquired"
	}
	h.emit(events.Event{Kind: KindServerAdded, Server: sc.Name, Detail: detail})
	if leased {
		h.mu.Lock()
		if !h.closed && e.ctx.Err() == nil {
			h.workers.Go(func() { h.holdLease(e) })
		} else {
			close(e.leaseDone)
		}
		h.mu.Unlock()
		return nil
	}
	h.queueStart(startJob{e: e, sup: sup, ctx: e.ctx})
	return nil
}

// queueStart queues a supervisor to start, on at most Config.MaxStarting
// starters.
func (h *Hub) queueStart(j startJob) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed || j.ctx.Err() != nil { // not stopped or removed meanwhile
		return
	}
	h.pending = append(h.pending, j)
	if h.starters < h.cfg.MaxStarting {
		h.starters++
		h.workers.Go(h.starter)
	}
}

// newSupervisor makes a supervisor of the server that resumes rs; when its
// supervisor refuses rs, one that starts fresh, after a KindStoreFailed
// event. It returns the state it resumes. With a gate, every request it
// sends passes the gate.
func (h *Hub) newSupervisor(e *entry, rs *supervisor.ResumeState, gate *holdGate) (*supervisor.Supervisor, *supervisor.ResumeState, error) {
	var self *supervisor.Supervisor // set before it starts, read by its sink
	scfg := h.supervisorConfig(e, rs)
	if gate != nil {
		scfg.HTTPClient = gate.client(scfg.HTTPClient)
	}
	scfg.Events = events.SinkFunc(func(ev events.Event) { h.observe(e, self, ev) })
	sup, err := supervisor.New(scfg)
	if err != nil && rs != nil {
		h.storeFailed("load", e.name, err)
		scfg.Resume, rs = nil, nil
		sup, err = supervisor.New(scfg)
	}
	if err != nil {
		return nil, nil, err
	}
	self = sup
	return sup, rs, nil
}

func resumeDetail(rs *supervisor.ResumeState) string {
	if rs == nil {
		return "fresh"
	}
	return "resuming " + events.HashSessionID(rs.SessionID)
}

// load returns the server's stored resume state, or nil: none, or one that
// cannot be used (an event says why). The error is the Store's when it
// could not answer (not ErrNotFound, ErrCorrupt or ErrForeign).
func (h *Hub) load(ctx context.Context, sc ServerConfig) (*supervisor.ResumeState, error) {
	if h.cfg.Store == nil || sc.Command != "" { // a process has no state to resume
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, h.cfg.StoreTimeout)
	defer cancel()
	rs, err := h.cfg.Store.Load(ctx, sc.Name)
	switch {
	case errors.Is(err, ErrNotFound):
		return nil, nil
	case err != nil:
		h.storeFailed("load", sc.Name, err)
		if errors.Is(err, ErrCorrupt) || errors.Is(err, ErrForeign) {
			return nil, nil
		}
		return nil, err
	case rs == nil:
		return nil, nil
	case rs.Endpoint != sc.URL:
		// Named in the event with its own secrets masked, by a redactor of
		// its own: registered in the hub's, the stored endpoint's query
		// values (anyone's words: a server's name, "tools/call") would be
		// masked in every event, error and qualified name of the hub.
		var foreign events.Redactor
		foreign.AddEndpointSecrets(rs.Endpoint)
		h.storeFailed("load", sc.Name, &StoreError{Op: "load", Server: sc.Name,
			Err: fmt.Errorf("%w: saved for endpoint %q, not %q", ErrForeign, foreign.Text(cutText(rs.Endpoint, 200)), sc.URL)})
		return nil, nil
	}
	return rs, nil
}

// supervisorConfig is the template with the server's own fields.
func (h *Hub) supervisorConfig(e *entry, rs *supervisor.ResumeState) supervisor.Config {
	c := h.cfg.Supervisor
	c.Name = e.name
	c.Endpoint = e.sc.URL
	c.Command = e.sc.command(c.Command)
	if c.Command != nil {
		c.Command.Inherit = h.creds.inherit(c.Command.Inherit)
	}
	c.Resume = rs
	c.Logger = slog.New(events.RedactingHandler(&h.redact, c.Logger.Handler()))
	if h.cfg.ServerMiddleware != nil {
		// Clipped: the template's array is never written to.
		c.SendingMiddleware = append(slices.Clip(c.SendingMiddleware), h.cfg.ServerMiddleware(e.name))
	}
	c.OAuthHandler = e.oauth
	c.Secrets = append(slices.Clip(c.Secrets), e.secrets...)
	if len(e.headers) > 0 {
		c.HTTPClient = withHeaders(c.HTTPClient, e.headers)
	}
	return c
}

// starter starts queued servers one after another until none is left.
func (h *Hub) starter() {
	for {
		h.mu.Lock()
		if len(h.pending) == 0 || h.life.Err() != nil {
			h.pending = nil
			h.starters--
			h.mu.Unlock()
			return
		}
		j := h.pending[0]
		h.pending = h.pending[1:]
		h.mu.Unlock()
		if j.ctx.Err() != nil {
			continue // removed (or its lease lost) before it started
		}
		j.sup.Start()
		settle(j.ctx, j.sup)
	}
}

// settle waits until sup is ready, failed or closed, or ctx ends.
func settle(ctx context.Context, sup *supervisor.Supervisor) {
	for {
		st := sup.State()
		if st == supervisor.Ready || st == supervisor.Failed || st == supervisor.Closed {
			return
		}
		if !sup.WaitForStateChange(ctx, st) {
			return
		}
	}
}

func (h *Hub) notifyLocked() {
	close(h.changed)
	h.changed = make(chan struct{})
}

func (h *Hub) notify() {
	h.mu.Lock()
	h.notifyLocked()
	h.mu.Unlock()
}

// Leave says what Remove does with the server-side session.
type Leave uint8

const (
	// EndSession closes the supervisor (DELETE ends the server-side
	// session) and deletes the stored resume state.
	EndSession Leave = iota
	// KeepSession detaches the supervisor (no DELETE) and saves its resume
	// state, so that a later Add of the same name resumes it.
	KeepSession
)

// Remove takes the server out of the hub: its items leave the merged
// catalog (a KindMergedCatalogChanged event), its calls in flight are
// canceled, and its session is ended or kept as leave says; calls to the
// other servers go on meanwhile. It returns once the supervisor has stopped
// and the store has been written, or ctx ended first: the error joins the
// server's store errors, each a *StoreError (also an event), and one
// *StoreError wrapping ctx's error for each of its writes not done then
// (which still runs, within Config.StoreTimeout); or it is a *ServerError
// wrapping ErrUnknownServer. With a Leaser, the writes are fenced by the
// server's lease (none when this replica is standby) and the lease is
// released after them, within Config.StoreTimeout. The name stays taken
// until Remove returns (an Add of it meanwhile is ErrDuplicate), so that
// nothing of the removed server reaches one added again under its name.
func (h *Hub) Remove(ctx context.Context, name string, leave Leave) error {
	h.mu.Lock()
	e := h.servers[name]
	delete(h.servers, name)
	if e != nil {
		h.notifyLocked()
	}
	h.mu.Unlock()
	if e == nil {
		return &ServerError{Server: name, Err: ErrUnknownServer}
	}
	// The name is freed last: the removed server's last work (its items
	// leaving the merged catalog, its store write) is done by name, and
	// would reach a server added again under it meanwhile.
	defer func() {
		h.mu.Lock()
		h.taken.free(name)
		h.mu.Unlock()
	}()
	last := h.leave(e, leave)
	h.emit(events.Event{Kind: KindServerRemoved, Server: name})
	// The write runs within its own StoreTimeout, also past ctx.
	last(context.Background())
	err := h.saves.flush(ctx, name)
	storeCtx, cancel := context.WithTimeout(context.Background(), h.cfg.StoreTimeout)
	defer cancel()
	h.release(storeCtx, e)
	return err
}

// leave stops one server and returns its last store write (fenced by its
// lease; none without the lease), to be queued under the caller's deadline.
func (h *Hub) leave(e *entry, leave Leave) (last func(context.Context)) {
	e.mu.Lock()
	e.gone = true
	e.mu.Unlock()
	e.stop()
	if e.leaseDone != nil {
		<-e.leaseDone // the term no longer changes
	}
	sup, lease := e.term()
	h.updateCatalog(e, supervisor.Catalog{}, true)
	if leave == KeepSession {
		_ = sup.Detach()
	} else {
		_ = sup.Close()
	}
	if e.leaseDone != nil && lease == nil {
		return func(context.Context) {} // standby: the state is the holder's
	}
	var rs *supervisor.ResumeState // nil: a delete
	if leave == KeepSession {
		rs = sup.ResumeState()
	}
	return func(ctx context.Context) { h.saves.put(ctx, e.name, rs, lease) }
}

// release gives up the server's lease, after its last write, bounded by ctx.
func (h *Hub) release(ctx context.Context, e *entry) {
	if _, lease := e.term(); lease != nil {
		h.releaseLease(ctx, e.name, lease)
	}
}

// Close stops every server, ending their server-side sessions (DELETE), and
// deletes their stored resume states. Detach keeps them instead.
//
// Close and Detach take one stop and one Config.StoreTimeout, whatever the
// number of servers: every supervisor is stopped at once (an HTTP server's
// DELETE; a stdio server's stdin closed, then its Command's StopGrace and
// KillGrace at most), then every server's last store write runs at once,
// each followed by its lease's release, all under one deadline
// StoreTimeout away. A lease being lost or given up when Close began is
// released within one StoreTimeout more. They return once every write is
// done or the deadline passed; the error joins the store's errors, each a
// *StoreError (also an event), and one *StoreError wrapping
// context.DeadlineExceeded for each write not done by the deadline (which
// ends it, for a Store that honours its context). Close and Detach are
// idempotent: only the first call acts.
func (h *Hub) Close() error { return h.stopAll(EndSession) }

// Detach stops every server without ending their sessions and saves each
// resume state, so the next run of the host resumes them without
// `initialize`. See Close for its bound.
func (h *Hub) Detach() error { return h.stopAll(KeepSession) }

func (h *Hub) stopAll(leave Leave) error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	all := make([]*entry, 0, len(h.servers))
	for _, e := range h.servers {
		all = append(all, e)
	}
	h.servers = map[string]*entry{}
	h.notifyLocked()
	h.mu.Unlock()
	h.end()
	h.workers.Wait()

	// Every server at once: a stdio server that ignores the end of its
	// stdin holds its stop for its grace periods, and servers stopped a
	// few at a time would add them up.
	lasts := make([]func(context.Context), len(all))
	var wg sync.WaitGroup
	for i, e := range all {
		wg.Go(func() { lasts[i] = h.leave(e, leave) })
	}
	wg.Wait()

	// One deadline for every store operation left.
	ctx, cancel := context.WithTimeout(context.Background(), h.cfg.StoreTimeout)
	defer cancel()
	for _, last := range lasts {
		last(ctx)
	}
	for _, e := range all {
		wg.Go(func() {
			h.saves.wait(ctx, e.name)
			h.release(ctx, e)
		})
	}
	wg.Wait()
	return h.saves.flush(ctx, "")
}

// Names returns the names of the servers in the hub, sorted.
func (h *Hub) Names() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	names := make([]string, 0, len(h.servers))
	for n := range h.servers {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Supervisor returns the server's supervisor, or nil. It belongs to the
// hub: do not Close or Detach it (use Remove).
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
