// Package gateway serves a hub (package hub) as one MCP server: go-sdk's
// server downstream, over stdio or streamable HTTP, and the hub's supervised
// servers upstream. The merged tools, prompts and resources keep the hub's
// qualified names; resource templates are named the same way
// (server__name) and routed to their server by the URI a client reads.
//
// The downstream catalog follows the hub's: every merged-catalog change (an
// event of the hub's) wakes one goroutine that adds and removes the changed
// items on the go-sdk server, which sends notifications/tools/list_changed
// (and prompts', resources') to its clients itself (MCP 2025-11-25,
// server/tools.mdx, "List Changed Notification").
//
// Fail-open: a server that is down, failing or unauthorized keeps or loses
// only its own items, as the hub decides; the others' are never touched.
//
// A Gateway is safe for concurrent use.
package gateway

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/hub"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultRelayTimeout bounds one server request (elicitation/create,
// sampling/createMessage, roots/list) relayed to a downstream client.
const DefaultRelayTimeout = 2 * time.Minute

// DefaultProgressTimeout bounds the forwarding of one progress notification
// to a downstream client: a client that does not take it in time loses it,
// and the upstream session is not held meanwhile.
const DefaultProgressTimeout = 5 * time.Second

// DefaultUpstreamIdleConns is how many idle connections the upstream HTTP
// client keeps, to one server and in all, when Config.Hub gives none: as
// many as the downstream POSTs served at once (DefaultMaxInFlight), each of
// which sends at most one request upstream at a time. net/http's
// DefaultTransport keeps 2 a host: past 2 calls in flight to one server,
// each further call would dial a connection of its own and close it after.
const DefaultUpstreamIdleConns = DefaultMaxInFlight

// ErrClosed: the gateway was closed.
var ErrClosed = errors.New("gateway: closed")

// Config configures a Gateway. The zero value serves an empty hub.
type Config struct {
	// ServersFile is the mcpServers file (hub.LoadServers) read by Start
	// and Reload. Default "": no servers until Apply is called.
	ServersFile string
	// Hub is the template of the hub's config. Its
	// Supervisor.HTTP.HTTPClient, when nil, is a client on a clone of
	// http.DefaultTransport that keeps DefaultUpstreamIdleConns idle
	// connections (the default otherwise). The gateway adds its own
	// events sink before Hub.Events, its progress and server-request relays
	// in Hub.Supervisor.Client.ClientOptions (replacing the handlers set
	// there, and turning go-sdk's multi round-trip off: see roundTrip),
	// its roots relay after Hub.Supervisor.Client.ReceivingMiddleware, and its
	// session-tracking middleware after Hub.ServerMiddleware's.
	Hub hub.Config
	// Implementation names the gateway to its clients. Default
	// {Name: "mcpsup", Version: "0"}.
	Implementation *mcp.Implementation
	// RelayTimeout bounds one relayed server request at the downstream
	// client. Default DefaultRelayTimeout (2 min).
	RelayTimeout time.Duration
	// HeldCallTimeout bounds how long a call of a 2026-07-28 client is
	// held for its retry after the gateway answered it with an
	// InputRequiredResult carrying its 2025-era server's requests; then
	// those requests get -32603 (Internal error) and the upstream call is
	// cancelled. Default DefaultHeldCallTimeout (2 min).
	HeldCallTimeout time.Duration
	// Clock times the held calls. Default the real clock.
	Clock clockwork.Clock
	// PlainNames, with a single server in the hub, lists its tools,
	// prompts and resource templates under their own names (no
	// "server__" prefix), for a client that should see the server as it
	// is; with more than one server it has no effect (qualified names keep
	// two servers' items apart). Default false.
	PlainNames bool
	// Logger receives the gateway's logs and its go-sdk server's, through
	// events.RedactingHandler: a session id go-sdk names ("session_id",
	// the downstream client's) is hashed, a credential masked. Never a
	// credential: the hub's events are masked, and the gateway logs names
	// and states only. Default: discarded.
	Logger *slog.Logger
}

// Gateway is one MCP server in front of a hub.
type Gateway struct {
	cfg    Config
	log    *slog.Logger
	hub    *hub.Hub
	server *mcp.Server
	relay  *relay

	dirty chan struct{} // cap 1: a catalog sync is due
	done  chan struct{}
	wg    sync.WaitGroup

	syncMu sync.Mutex // the downstream catalog's owner: held by sync
	shown  shown

	subMu   sync.Mutex
	subs    map[string]map[*mcp.ServerSession]struct{} // resource URI: the downstream sessions subscribed to it
	watched map[*mcp.ServerSession]struct{}            // sessions whose end watchSession waits for

	routeMu sync.RWMutex
	routes  map[string]string // downstream tool or prompt name: qualified name

	mu       sync.Mutex
	settled  map[string]bool             // server name: it has been ready or failed since it was added
	applied  map[string]hub.ServerConfig // the servers the gateway added, by name
	closed   bool
	reloadMu sync.Mutex // one Apply at a time
}

// New returns a gateway and its hub; Start adds the servers.
func New(cfg Config) *Gateway {
	if cfg.Implementation == nil {
		cfg.Implementation = &mcp.Implementation{Name: "mcpsup", Version: "0"}
	}
	if cfg.RelayTimeout <= 0 {
		cfg.RelayTimeout = DefaultRelayTimeout
	}
	if cfg.HeldCallTimeout <= 0 {
		cfg.HeldCallTimeout = DefaultHeldCallTimeout
	}
	if cfg.Clock == nil {
		cfg.Clock = clockwork.NewRealClock()
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// go-sdk's server and streamable handler log the downstream session id
	// in full ("server session disconnected", session_id).
	log = slog.New(events.RedactingHandler(nil, log.Handler()))
	g := &Gateway{
		cfg:     cfg,
		log:     log,
		dirty:   make(chan struct{}, 1),
		done:    make(chan struct{}),
		settled: map[string]bool{},
		applied: map[string]hub.ServerConfig{},
		shown:   newShown(),
		subs:    map[string]map[*mcp.ServerSession]struct{}{},
		watched: map[*mcp.ServerSession]struct{}{},
	}
	g.relay = newRelay(g, cfg.RelayTimeout, &holds{clock: cfg.Clock, timeout: cfg.HeldCallTimeout,
		byState: map[string]*held{}, bySession: map[*mcp.ServerSession]int{}})

	hc := cfg.Hub
	if hc.Supervisor.HTTP.HTTPClient == nil {
		hc.Supervisor.HTTP.HTTPClient = &http.Client{Transport: upstreamTransport()}
	}
	next := hc.Events
	hc.Events = sinkFunc(func(e events.Event) {
		g.observe(e)
		if next != nil {
			next.Emit(e)
		}
	})
	co := &hc.Supervisor.Client.ClientOptions
	co.ProgressNotificationHandler = g.relay.forwardProgress
	co.ElicitationHandler = g.relay.elicit
	//lint:ignore SA1019 sampling is deprecated from protocol 2026-07-28 on (SEP-2577), and still sent by 2025-era servers
	co.CreateMessageHandler = g.relay.createMessage
	//lint:ignore SA1019 logging is deprecated from protocol 2026-07-28 on (SEP-2577), and still sent by 2025-era servers
	co.LoggingMessageHandler = g.relay.logMessage
	co.ResourceUpdatedHandler = g.resourceUpdated
	// A 2026-07-28 server's input requests are carried to the client of
	// the call by roundTrip, which knows that client's era; go-sdk's
	// client would answer them itself, from the handlers above.
	co.MultiRoundTrip = &mcp.MultiRoundTripOptions{Disabled: true}
	sc := &hc.Supervisor
	sc.Client.ReceivingMiddleware = append(slices.Clip(sc.Client.ReceivingMiddleware), g.relay.rootsMiddleware)
	mw := hc.ServerMiddleware
	hc.ServerMiddleware = func(server string) mcp.Middleware {
		track := g.relay.track(server)
		if mw == nil {
			return track
		}
		if m := mw(server); m != nil {
			return func(h mcp.MethodHandler) mcp.MethodHandler { return track(m(h)) }
		}
		return track
	}
	g.hub = hub.New(hc)

	g.server = mcp.NewServer(cfg.Implementation, &mcp.ServerOptions{
		Logger:             log,
		CompletionHandler:  g.complete,
		SubscribeHandler:   g.subscribe,
		UnsubscribeHandler: g.unsubscribe,
		// Declared from the start: a client that initializes before the
		// first server is ready still learns the kinds and their
		// list_changed notifications. Completions are inferred from the
		// handler.
		Capabilities: &mcp.ServerCapabilities{
			Tools:     &mcp.ToolCapabilities{ListChanged: true},
			Prompts:   &mcp.PromptCapabilities{ListChanged: true},
			Resources: &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true},
			//lint:ignore SA1019 logging is deprecated from protocol 2026-07-28 on (SEP-2577); 2025-era clients still set its level
			Logging: &mcp.LoggingCapabilities{},
		},
	})
	g.server.AddReceivingMiddleware(g.logLevelMiddleware)
	g.wg.Add(1)
	go g.syncLoop()
	return g
}

// Hub returns the gateway's hub. It belongs to the gateway: do not Close or
// Detach it (Close and Detach the gateway).
func (g *Gateway) Hub() *hub.Hub { return g.hub }

// Server returns the downstream go-sdk server, to run on a transport
// (mcp.StdioTransport) or behind mcp.NewStreamableHTTPHandler.
func (g *Gateway) Server() *mcp.Server { return g.server }

// Start reads Config.ServersFile and adds its servers (see Apply).
func (g *Gateway) Start(ctx context.Context) error {
	if g.cfg.ServersFile == "" {
		return nil
	}
	return g.Reload(ctx)
}

// Close ends every server's session (hub.Close); Detach keeps them for the
// next run. Either stops the catalog sync first; both are idempotent.
func (g *Gateway) Close() error { return g.stop(g.hub.Close) }

// Detach stops every server and saves its resume state (hub.Detach), so the
// next run resumes the sessions without `initialize`.
func (g *Gateway) Detach() error { return g.stop(g.hub.Detach) }

func (g *Gateway) stop(end func() error) error {
	g.mu.Lock()
	first := !g.closed
	g.closed = true
	g.mu.Unlock()
	if first {
		close(g.done)
	}
	g.wg.Wait()
	g.relay.close()
	return end()
}

// observe is the gateway's events sink: it marks servers settled and asks
// for a catalog sync when the merged catalog, or a server's resource
// templates, may have changed.
func (g *Gateway) observe(e events.Event) {
	switch e.Kind {
	case events.KindTransition:
		if e.To == events.StateReady || e.To == events.StateFailed || e.To == events.StateClosed {
			g.mu.Lock()
			if _, ok := g.applied[e.Server]; ok {
				g.settled[e.Server] = true
			}
			g.mu.Unlock()
		}
		if e.To == events.StateReady || e.From == events.StateReady {
			g.kick()
		}
	case hub.KindMergedCatalogChanged, hub.KindServerAdded, hub.KindServerRemoved,
		hub.KindLeaseAcquired, hub.KindLeaseLost, events.KindCatalogChanged, events.KindProbeReport:
		g.kick()
	}
}

// kick asks for a catalog sync; one pending sync covers every kick before
// it runs.
func (g *Gateway) kick() {
	select {
	case g.dirty <- struct{}{}:
	default:
	}
}

func (g *Gateway) syncLoop() {
	defer g.wg.Done()
	for {
		select {
		case <-g.done:
			return
		case <-g.dirty:
			g.sync()
		}
	}
}

// upstreamTransport is http.DefaultTransport's clone keeping
// DefaultUpstreamIdleConns idle connections, to one host and in all (idle
// ones close after its IdleConnTimeout, 90 s).
func upstreamTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = DefaultUpstreamIdleConns
	t.MaxIdleConnsPerHost = DefaultUpstreamIdleConns
	return t
}

type sinkFunc func(events.Event)

func (f sinkFunc) Emit(e events.Event) { f(e) }
