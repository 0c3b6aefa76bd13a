package supervisor

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/wire"
)

// StreamPolicy chooses whether sessions open the standalone SSE stream (the
// optional GET of the MCP streamable HTTP transport). Failure story S5.
type StreamPolicy uint8

const (
	// StreamAuto (the default) opens the stream and stops opening it when
	// the server proves GET-hostile (see Config.HostileRule). The decision
	// is kept in the resume state for Config.HostileMemory.
	StreamAuto StreamPolicy = iota
	// StreamOn always opens the stream; it is still never fatal to a
	// session. A GET-hostile server is re-dialed on the backoff, at most
	// once per StreamKeeper.MaxBackoff (30s by default).
	StreamOn
	// StreamOff never opens the stream. A dead session is then found by the
	// next call, or by the keepalive ping when Config.KeepAlive is set.
	StreamOff
)

// wireMode is the wire switch's mode of the policy.
func (p StreamPolicy) wireMode() wire.StreamMode {
	switch p {
	case StreamOn:
		return wire.StreamOn
	case StreamOff:
		return wire.StreamOff
	}
	return wire.StreamAuto
}

func (p StreamPolicy) String() string {
	switch p {
	case StreamAuto:
		return "auto"
	case StreamOn:
		return "on"
	case StreamOff:
		return "off"
	}
	return "invalid"
}

// Backoff configures retries out of the failed state: exponential backoff
// with jitter (cenkalti/backoff's ExponentialBackOff), bounded by attempts
// and elapsed time. Zero (and out-of-range) fields take the documented
// defaults.
type Backoff struct {
	// InitialInterval is the first wait. Default 500ms.
	InitialInterval time.Duration
	// MaxInterval caps the exponential growth and a wait lengthened by
	// Retry-After (jitter may still draw up to (1+RandomizationFactor) times
	// it). Default 30s.
	MaxInterval time.Duration
	// Multiplier grows the wait after each attempt; 1 keeps it constant.
	// Default 2 (also for values below 1).
	Multiplier float64
	// RandomizationFactor is the jitter: each wait is drawn from
	// [w*(1-f), w*(1+f)], 0 < f < 1. Default 0.5 (also outside that
	// range); set NoJitter for deterministic tests.
	RandomizationFactor float64
	// NoJitter sets the randomization factor to 0.
	NoJitter bool
	// MaxAttempts bounds the retries of one outage. Default 8.
	MaxAttempts int
	// MaxElapsed bounds the time spent retrying one outage, on the
	// supervisor's clock. Default 5m.
	MaxElapsed time.Duration
}

// Defaults of the catalog's re-listing (Config.RelistMinGap,
// Config.CatalogPollInterval).
const (
	DefaultRelistMinGap        = time.Second
	DefaultCatalogPollInterval = time.Minute
)

// Config configures a Supervisor. The zero value of every field is a
// documented default; only Endpoint is required.
type Config struct {
	// Endpoint is the MCP server's streamable HTTP endpoint URL.
	Endpoint string
	// Name names the server in events and logs. Default: Endpoint.
	// Credentials in it (URL userinfo, token query values) are masked in
	// events, logs, errors and String (events.Redactor).
	Name string
	// HTTPClient carries every request (credentials, TLS, proxies). Its
	// Transport is wrapped by mcpsup's round-tripper; the client itself is
	// not modified. Default: a client on http.DefaultTransport without a
	// timeout (calls are bounded by their context and CallTimeout).
	HTTPClient *http.Client
	// ClientOptions are the go-sdk client options (handlers, capabilities)
	// used for every session. The list-changed handlers are chained: the
	// supervisor re-lists the catalog and then calls the host's handler.
	ClientOptions mcp.ClientOptions
	// Implementation is the client's name and version sent in initialize.
	// Default {Name: "mcpsup", Version: "0"}.
	Implementation *mcp.Implementation
	// Resume, when non-nil, re-attaches a persisted session instead of
	// opening a new one (see ResumeState).
	Resume *ResumeState
	// Stream is the standalone SSE stream policy. Default StreamAuto.
	Stream StreamPolicy
	// HostileMemory is how long a GET-hostile decision (StreamAuto) is kept
	// before the stream is tried again. Default 24h.
	HostileMemory time.Duration
	// HostileRule is the rule that marks a server GET-hostile: by default 3
	// consecutive standalone stream attempts that are answered and end
	// within StreamKeeper.Span (2s) with no message, while a POST of the
	// same session succeeds after the first of them (wire.HostilityRule).
	// A stream that lives longer or delivers a message resets the count, so
	// a proxy that cuts idle streams now and then never trips it; an outage
	// (no answer, 5xx, 429, 408) never counts, so a restarting server is not
	// GET-hostile. The decision is the wire layer's (wire.StreamSwitch, one
	// per supervisor, shared by its sessions): a live session holds its
	// stream at once, a new one inherits the decision, and the stream is
	// dialed again once HostileMemory has passed.
	HostileRule wire.HostilityRule
	// StreamKeeper tunes how the standalone stream is kept open and
	// re-dialed when it ends (wire.StreamConfig; zero fields are its
	// defaults: re-dial backoff 1s to 30s).
	StreamKeeper wire.StreamConfig
	// Era hints the protocol era of the server so that a 2025-era server
	// is not sent `server/discover` first. Default wire.EraAuto: learned
	// from the first handshake (and from Resume), used for every later one.
	Era wire.Era
	// KeepAlive, when positive, pings the server at this interval on Clock,
	// each ping bounded by the interval. A ping answered with transport (no
	// HTTP answer) or session-expired, or two pings in a row without an
	// answer, end the session without DELETE, and the supervisor replaces
	// it ("the session died"); any other failure (a 401, 429, 5xx, 403 ...)
	// keeps the session, as it does on a call. go-sdk's own
	// ClientOptions.KeepAlive, which sends DELETE on any failed ping, is
	// never used (ClientOptions.KeepAlive is ignored). Pings are not sent to
	// 2026-07-28 servers. Default 0 (off). Useful with the stream off.
	KeepAlive time.Duration
	// Backoff configures retries out of the failed state.
	Backoff Backoff
	// DiscoveryTimeout bounds one handshake, attach or catalog listing.
	// Default 30s.
	DiscoveryTimeout time.Duration
	// ProbeTimeout bounds each blind probe of a resumed session. Default 10s.
	ProbeTimeout time.Duration
	// MaxCallWait bounds how long a call made while the connection recovers
	// waits for ready, also when its context has no deadline. Default 30s.
	MaxCallWait time.Duration
	// CallTimeout bounds a call sent on the live session when the caller's
	// context has no deadline, so a stuck connection (an answer that never
	// comes) cannot hold a call forever; the call then fails with a timeout
	// verdict, outcome unknown. Default 5m.
	CallTimeout time.Duration
	// MaxPages and MaxItems cap the pagination of each catalog list, against
	// servers that never stop returning a cursor. A tools/list past a cap
	// fails discovery (and is retried on the backoff schedule); a side list
	// past a cap is degraded. Defaults 100 pages and 10,000 items
	// (probes.DefaultMaxPages, probes.DefaultMaxItems).
	MaxPages, MaxItems int
	// RelistMinGap is the least time between the starts of two re-lists of
	// the catalog on one session (after list_changed notifications,
	// RefreshCatalog or a poll). Re-lists are coalesced: at most one runs
	// and one waits, holding every list asked for meanwhile, so a server
	// that notifies after every list gets at most one re-list per gap.
	// Default 1s.
	RelistMinGap time.Duration
	// CatalogPollInterval is how often the catalog is re-listed when no
	// list_changed notification can arrive: the stream is off (StreamOff,
	// or a GET-hostile decision), or a 2025-era server issued no session id
	// (a stateless server has no standalone stream). The interval runs on
	// Clock from the last publish; each poll lists what the server
	// declared. Default 1m; negative never polls.
	CatalogPollInterval time.Duration
	// DisableRateLimitWindow turns off the rate-limit window. By default,
	// after a 429 with Retry-After, calls made before the window ends fail
	// at once with the 429's verdict (ErrRateLimited) instead of feeding the
	// server's request budget (failure story S4). The window lasts the
	// Retry-After (at most classify.MaxRetryAfter, 1h: the same value the
	// call's error and the rate-limit-window event carry); Reconnect ends
	// it.
	DisableRateLimitWindow bool
	// MaxSessions and ChurnWindow: more than MaxSessions new sessions within
	// ChurnWindow moves to a terminal failed state whose reason is churn.
	// Defaults 10 and 1m (fsm.DefaultMaxSessions, fsm.DefaultWindow, where
	// the machine applies them).
	MaxSessions int
	ChurnWindow time.Duration
	// Events receives every event, in order, one at a time, on a goroutine
	// of the supervisor's that runs only while events wait, outside any
	// lock. A transition's event is emitted once its state is published, so
	// State read on it is that state or a later one. A sink that blocks
	// delays the events behind it, not the connection (the queue is
	// unbounded: use events.NewSubscription to bound it); a sink that panics
	// has the panic logged and the event dropped. A sink may call any method
	// of the supervisor, Close and Detach included. Default: discarded.
	Events events.Sink
	// Clock drives timers (backoff, windows, event times). Default: the
	// real clock.
	Clock clockwork.Clock
	// Logger receives diagnostic logs. Default: discarded. Its records, and
	// those of ClientOptions.Logger (go-sdk logs keepalive failures with
	// its error text), pass through events.RedactingHandler first: no
	// session id or credential reaches them in clear.
	Logger *slog.Logger
}

// discardLogger is the default Logger; a slog.Logger cannot be changed, so
// every supervisor shares it.
var discardLogger = slog.New(slog.DiscardHandler)

// withDefaults returns a copy of c with every zero field set to its default.
func (c Config) withDefaults() Config {
	if c.Name == "" {
		c.Name = c.Endpoint
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{}
	}
	if c.Implementation == nil {
		c.Implementation = &mcp.Implementation{Name: "mcpsup", Version: "0"}
	}
	if c.HostileMemory <= 0 {
		c.HostileMemory = 24 * time.Hour
	}
	if c.DiscoveryTimeout <= 0 {
		c.DiscoveryTimeout = 30 * time.Second
	}
	if c.ProbeTimeout <= 0 {
		c.ProbeTimeout = 10 * time.Second
	}
	if c.MaxCallWait <= 0 {
		c.MaxCallWait = 30 * time.Second
	}
	if c.CallTimeout <= 0 {
		c.CallTimeout = 5 * time.Minute
	}
	if c.RelistMinGap <= 0 {
		c.RelistMinGap = DefaultRelistMinGap
	}
	if c.CatalogPollInterval == 0 {
		c.CatalogPollInterval = DefaultCatalogPollInterval
	}
	b := &c.Backoff
	if b.InitialInterval <= 0 {
		b.InitialInterval = 500 * time.Millisecond
	}
	if b.MaxInterval <= 0 {
		b.MaxInterval = 30 * time.Second
	}
	if b.Multiplier < 1 {
		b.Multiplier = 2
	}
	if b.RandomizationFactor <= 0 || b.RandomizationFactor >= 1 {
		b.RandomizationFactor = 0.5
	}
	if b.NoJitter {
		b.RandomizationFactor = 0
	}
	if b.MaxAttempts <= 0 {
		b.MaxAttempts = 8
	}
	if b.MaxElapsed <= 0 {
		b.MaxElapsed = 5 * time.Minute
	}
	if c.Clock == nil {
		c.Clock = clockwork.NewRealClock()
	}
	if c.Logger == nil {
		c.Logger = discardLogger
	}
	return c
}

// newBackOff builds the retry schedule from the config, on the supervisor's
// clock so MaxElapsed runs on fake time in tests.
func (b Backoff) newBackOff(clock clockwork.Clock) backoff.BackOff {
	eb := backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(b.InitialInterval),
		backoff.WithMaxInterval(b.MaxInterval),
		backoff.WithMultiplier(b.Multiplier),
		backoff.WithRandomizationFactor(b.RandomizationFactor),
		backoff.WithMaxElapsedTime(b.MaxElapsed),
		backoff.WithClockProvider(clockAdapter{clock}),
	)
	return backoff.WithMaxRetries(eb, uint64(b.MaxAttempts))
}

// clockAdapter lets cenkalti/backoff read a clockwork clock.
type clockAdapter struct{ c clockwork.Clock }

func (a clockAdapter) Now() time.Time { return a.c.Now() }
