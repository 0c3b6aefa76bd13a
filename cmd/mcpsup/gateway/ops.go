package gateway

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/mcpsup/mcpsup/hub"
	"github.com/mcpsup/mcpsup/supervisor"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultSessionTimeout ends a downstream HTTP session idle this long (no
// request), so clients that go away without DELETE do not hold a session
// each for ever.
const DefaultSessionTimeout = 30 * time.Minute

// DefaultMaxRequestBytes bounds one downstream HTTP request's body.
const DefaultMaxRequestBytes = 4 << 20

// DefaultMaxSessions bounds the downstream sessions open at once.
const DefaultMaxSessions = 1024

// DefaultMaxInFlight bounds the downstream POSTs being served at once.
const DefaultMaxInFlight = 256

// HTTPOptions configures Handler.
type HTTPOptions struct {
	// Token, when not empty, is the bearer token every request but
	// /healthz must carry (`Authorization: Bearer <token>`), compared in
	// constant time; a request without it is answered 401 (RFC 6750,
	// section 3). Required by the command when it listens on an address
	// that is not loopback.
	Token string
	// SessionTimeout ends idle downstream sessions. Default
	// DefaultSessionTimeout (30 min).
	SessionTimeout time.Duration
	// MaxSessions bounds the downstream sessions open at once: an
	// initialize past it is answered 503 (Service Unavailable) with
	// Retry-After. Default DefaultMaxSessions (1024).
	MaxSessions int
	// MaxInFlight bounds the downstream POSTs (requests, notifications,
	// responses) being served at once; one past it is answered 503 with
	// Retry-After. A session's standalone SSE stream (GET) is bounded by
	// MaxSessions instead. Default DefaultMaxInFlight (256).
	MaxInFlight int
	// Extra are more operations endpoints (path: handler), such as
	// /metrics and /timeline, served behind the same token.
	Extra map[string]http.Handler
}

// Handler serves the gateway over streamable HTTP at /mcp (MCP 2025-11-25,
// basic/transports/streamable-http.mdx) and its operations endpoints:
// /healthz (200 "ok" while the process serves), /readyz (see Readiness).
func (g *Gateway) Handler(opts HTTPOptions) http.Handler {
	if opts.SessionTimeout <= 0 {
		opts.SessionTimeout = DefaultSessionTimeout
	}
	if opts.MaxSessions <= 0 {
		opts.MaxSessions = DefaultMaxSessions
	}
	if opts.MaxInFlight <= 0 {
		opts.MaxInFlight = DefaultMaxInFlight
	}
	mcpH := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return g.server },
		&mcp.StreamableHTTPOptions{
			Logger:              g.log,
			SessionTimeout:      opts.SessionTimeout,
			MaxRequestBodyBytes: DefaultMaxRequestBytes,
		})
	mux := http.NewServeMux()
	inFlight := make(chan struct{}, opts.MaxInFlight)
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			if r.Header.Get("Mcp-Session-Id") == "" && isInitialize(r) && g.sessions() >= opts.MaxSessions {
				busy(w, "too many sessions")
				return
			}
			select {
			case inFlight <- struct{}{}:
				defer func() { <-inFlight }()
			default:
				busy(w, "too many requests in flight")
				return
			}
		}
		mcpH.ServeHTTP(w, r)
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", g.serveReady)
	for path, h := range opts.Extra {
		mux.Handle(path, h)
	}
	if opts.Token == "" {
		return mux
	}
	want := sha256.Sum256([]byte(opts.Token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" {
			mux.ServeHTTP(w, r)
			return
		}
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		// Hashed first: the comparison takes the same time whatever
		// the lengths.
		sum := sha256.Sum256([]byte(got))
		if !ok || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="mcpsup"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// isInitialize reports whether r's body is an initialize request, leaving
// the body to be read again. Only a POST without a session id is read so: a
// session's first request (the others, server/discover say, open none).
func isInitialize(r *http.Request) bool {
	b, err := io.ReadAll(io.LimitReader(r.Body, DefaultMaxRequestBytes+1))
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(b), r.Body))
	if err != nil {
		return false
	}
	var msg struct {
		Method string `json:"method"`
	}
	return json.Unmarshal(b, &msg) == nil && msg.Method == "initialize"
}

// busy answers 503 with Retry-After: 1 (RFC 9110, section 10.2.3).
func busy(w http.ResponseWriter, why string) {
	w.Header().Set("Retry-After", "1")
	http.Error(w, why, http.StatusServiceUnavailable)
}

// sessions counts the downstream sessions open now that were initialized
// (go-sdk keeps a short-lived one for a server/discover too).
func (g *Gateway) sessions() int {
	n := 0
	for ss := range g.server.Sessions() {
		if ss.InitializeParams() != nil {
			n++
		}
	}
	return n
}

// Readiness is the JSON of /readyz.
type Readiness struct {
	// Ready is the answer: 200 when true, 503 when false.
	Ready bool `json:"ready"`
	// Settled: every server has been ready or failed at least once since
	// it was added (or stands by for another replica's lease).
	Settled bool `json:"settled"`
	// Why lists what keeps the gateway not ready.
	Why []string `json:"why,omitempty"`
	// Servers are the servers, sorted by name.
	Servers []ServerStatus `json:"servers"`
}

// ServerStatus is one server in Readiness.
type ServerStatus struct {
	Name string `json:"name"`
	// State is the supervisor's state ("ready", "failed", "connecting" ...).
	State string `json:"state"`
	// Reason is why a failed state is terminal ("unauthorized", "churn" ...).
	Reason string `json:"reason,omitempty"`
	// LastFailure is the class of the server's last failure ("" when none).
	LastFailure string `json:"lastFailure,omitempty"`
	// Lease is "held" or "standby" with a leasing store, else "".
	Lease string `json:"lease,omitempty"`
	// CatalogRefused says why its last catalog was not merged (over the
	// hub's MaxCatalogItems or MaxCatalogBytes: "30001 items over the
	// bound of 30000"), "" when it was.
	CatalogRefused string `json:"catalogRefused,omitempty"`
	// Tools, Prompts and Resources count its items in the merged catalog.
	Tools     int `json:"tools"`
	Prompts   int `json:"prompts"`
	Resources int `json:"resources"`
}

// Readiness reports whether the gateway serves what it should: not ready
// while a server has not settled since it was added (its first connection
// still under way), while a ready server that declares tools (its
// initialize result's capabilities.tools) has 0 tools in the merged catalog
// (a server "connected" with nothing to call), while a ready server's
// catalog was refused (hub.Health.CatalogRefused: over a bound, not
// merged), or while no server at all is ready. A server that failed after it settled does not make the gateway not
// ready (fail-open: the others serve); its state says it.
func (g *Gateway) Readiness() Readiness {
	hs := g.hub.Health()
	g.mu.Lock()
	settled := make(map[string]bool, len(g.settled))
	for k, v := range g.settled {
		settled[k] = v
	}
	g.mu.Unlock()
	rd := Readiness{Settled: true, Servers: make([]ServerStatus, 0, len(hs))}
	ready := 0
	for _, h := range hs {
		st := ServerStatus{
			Name:      h.Server,
			State:     string(h.State),
			Reason:    string(h.Reason),
			Lease:     string(h.Lease),
			Tools:     h.Tools,
			Prompts:   h.Prompts,
			Resources: h.Resources,
		}
		if h.Verdict.Class != 0 {
			st.LastFailure = h.Verdict.Class.String()
		}
		if r := h.CatalogRefused; r != nil {
			st.CatalogRefused = fmt.Sprintf("%d %s over the bound of %d", r.Count, r.Op, r.Bound)
		}
		rd.Servers = append(rd.Servers, st)
		if h.Lease == hub.LeaseStandby {
			continue
		}
		// Settled by its state now, or by an event seen before (a server
		// recovering after a ready stays settled). The state is read
		// first: events reach the gateway after the state they announce.
		switch h.State {
		case supervisor.Ready, supervisor.Failed, supervisor.Closed:
			settled[h.Server] = true
		}
		if !settled[h.Server] {
			rd.Settled = false
			rd.Why = append(rd.Why, fmt.Sprintf("%s: not settled (%s)", h.Server, h.State))
			continue
		}
		if h.Ready() {
			ready++
			if st.CatalogRefused != "" {
				rd.Why = append(rd.Why, fmt.Sprintf("%s: catalog refused: %s", h.Server, st.CatalogRefused))
			} else if h.Tools == 0 && g.declaresTools(h.Server) {
				rd.Why = append(rd.Why, fmt.Sprintf("%s: ready with 0 tools though it declares tools", h.Server))
			}
		}
	}
	if len(hs) > 0 && ready == 0 && rd.Settled {
		rd.Why = append(rd.Why, "no server is ready")
	}
	rd.Ready = len(rd.Why) == 0
	return rd
}

func (g *Gateway) declaresTools(server string) bool {
	sup := g.hub.Supervisor(server)
	if sup == nil {
		return false
	}
	ir := sup.InitializeResult()
	return ir != nil && ir.Capabilities != nil && ir.Capabilities.Tools != nil
}

func (g *Gateway) serveReady(w http.ResponseWriter, _ *http.Request) {
	rd := g.Readiness()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if !rd.Ready {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_ = json.NewEncoder(w).Encode(rd)
}
