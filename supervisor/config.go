package supervisor

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/httpsession"
	"github.com/mcpsup/mcpsup/stdio"
)

// The transport options of a streamable HTTP server are httpsession's
// types; the names below keep Config's vocabulary.

// StreamPolicy chooses whether sessions open the standalone SSE stream
// (failure story S5): StreamAuto (the default), StreamOn or StreamOff (see
// httpsession.StreamMode).
type StreamPolicy = httpsession.StreamMode

const (
	StreamAuto = httpsession.StreamAuto
	StreamOn   = httpsession.StreamOn
	StreamOff  = httpsession.StreamOff
)

// HostileRule is the rule that marks a server GET-hostile under
// StreamAuto (httpsession.HostilityRule). The zero value is the default.
type HostileRule = httpsession.HostilityRule

// StreamKeeper tunes how the standalone stream is kept open and re-dialed
// when it ends (httpsession.StreamConfig). The zero value, and every zero
// field, is the default.
type StreamKeeper = httpsession.StreamConfig

// AnswerLimits bound what is read of the server's answers to requests
// (httpsession.AnswerLimits; a stdio server's messages are held to its
// message bounds too). The zero value, and every zero field, is the
// default.
type AnswerLimits = httpsession.AnswerLimits

// DefaultEraReprobe is Config.HTTP.EraReprobe's default: a fall back to the
// 2025 era lasts ten minutes of new sessions, then `server/discover` is
// tried again (one request per probe).
const DefaultEraReprobe = httpsession.DefaultEraReprobe

// Era is the protocol era a supervisor assumes for its server before a
// handshake tells it: EraAuto (the default), Era2025 or Era20260728 (see
// httpsession.Era).
type Era = httpsession.Era

const (
	EraAuto     = httpsession.EraAuto
	Era2025     = httpsession.Era2025
	Era20260728 = httpsession.Era20260728
)

// Backoff configures retries out of the failed state, and the waits of the
// listing retries on a live session (Config.Recovery.ListingRetries): exponential
// backoff with jitter (cenkalti/backoff's ExponentialBackOff). One schedule
// runs through an outage, both kinds of retry included, and starts over at
// the next ready. By default a
// transient failure is retried forever: fast at first (500ms, 1s, 2s, ...),
// then every MaxInterval (30s) for as long as the outage lasts, so a
// long-lived host is never stranded by a server that is down for a while.
// Setting MaxAttempts or MaxElapsed bounds one outage instead: past the
// bound the failed state becomes terminal with reason budget-spent. Zero
// (and out-of-range) fields take the documented defaults.
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
	// MaxAttempts, when positive, bounds the retries of one outage, listing
	// retries included: the attempt after the last one ends in budget-spent
	// (a listing retry's session is closed). Zero (or negative):
	// no bound, retry forever.
	MaxAttempts int
	// MaxElapsed, when positive, bounds the time spent retrying one outage,
	// on the supervisor's clock, ending in budget-spent. Zero (or negative):
	// no bound, retry forever.
	MaxElapsed time.Duration
}

// ResendPolicy chooses whether the supervisor sends a failed call again
// (Config.Recovery.Resend).
type ResendPolicy uint8

const (
	// ResendNever (the default): a failed call is never sent again; its
	// CallError says whether the host may (CallError.Resendable).
	ResendNever ResendPolicy = iota
	// ResendSafe sends a call that failed on the session once more, after
	// the connection recovered (ready again, the session verified or
	// replaced), when its CallError is Resendable: not sent; refused as
	// session-expired (never run: the new session serves it); or, outcome
	// unknown, a tools/call of a tool annotated readOnlyHint or
	// idempotentHint. Never any other call, never more than once; a
	// call-resent event says so, and the caller gets the second attempt's
	// result or error. A call refused locally (unknown tool, rate-limit
	// window, not ready, wait timeout) or given up by its caller is not
	// resent.
	ResendSafe
)

func (p ResendPolicy) String() string {
	switch p {
	case ResendNever:
		return "never"
	case ResendSafe:
		return "safe"
	}
	return "invalid"
}

// DefaultCallTimeoutCeiling is Config.Limits.CallTimeoutCeiling's default: however
// much progress it reports, a call bounded by CallTimeout ends after an
// hour.
const DefaultCallTimeoutCeiling = time.Hour

// DefaultChurnCooldown is Config.Recovery.ChurnCooldown's default: a churn failure
// lasts five minutes, then the supervisor tries again.
const DefaultChurnCooldown = 5 * time.Minute

// Defaults of the catalog's re-listing (Config.Limits.RelistMinGap,
// Config.Limits.CatalogPollInterval).
const (
	DefaultRelistMinGap        = time.Second
	DefaultCatalogPollInterval = time.Minute
)

// Config configures a Supervisor. The zero value of every field is a
// documented default; only Endpoint, or Command, is required. The fields
// are grouped by concern: what the server is (the top level), the go-sdk
// client (Client), streamable HTTP (HTTP), the standalone stream (Stream),
// recovering the connection (Recovery), bounds on calls and the catalog
// (Limits), and what the host sees (Observe).
type Config struct {
	// Endpoint is the MCP server's streamable HTTP endpoint URL.
	Endpoint string
	// Command, in place of Endpoint, is a stdio server: a process the
	// supervisor starts, and starts again when it dies (see
	// stdio.Command). New refuses Command with Endpoint, Resume, or any
	// field of HTTP or Stream set (ErrConfigConflict): a stdio server has
	// no HTTP, no standalone stream and no session to resume.
	Command *stdio.Command
	// Name names the server in events and logs. Default: Endpoint, or
	// Command.Path.
	// Credentials in it (URL userinfo, query values, path segments of 16
	// bytes or more) are masked in events, logs, errors and String
	// (events.Redactor).
	Name string
	// Era hints the protocol era of the server so that a 2025-era server
	// is not sent `server/discover` first (over stdio: the protocol
	// version of initialize). Default EraAuto: learned from the first
	// handshake (and from Resume), used for every later one; a fall back
	// to 2025 after a `server/discover` that was refused, or answered
	// without 2026-07-28 among its supportedVersions, lasts HTTP.EraReprobe
	// (see httpsession/eramemory.go).
	Era Era
	// Resume, when non-nil, re-attaches a persisted session instead of
	// opening a new one (see ResumeState).
	Resume *ResumeState

	// Client is the go-sdk client of every session.
	Client ClientConfig
	// HTTP applies to a streamable HTTP server (Endpoint) only: set with
	// Command, New refuses it (ErrConfigConflict).
	HTTP HTTPConfig
	// Stream is the standalone SSE stream of a streamable HTTP server
	// (failure story S5): set with Command, New refuses it
	// (ErrConfigConflict).
	Stream StreamConfig
	// Recovery is how a connection that failed is retried and replaced.
	Recovery RecoveryConfig
	// Limits bound calls, answers and the catalog's listing.
	Limits LimitsConfig
	// Observe is what the host sees: events, call stages, logs, and the
	// secrets masked in them.
	Observe ObserveConfig
}

// ClientConfig is the go-sdk client of every session (Config.Client).
type ClientConfig struct {
	// ClientOptions are the go-sdk client options (handlers, capabilities)
	// used for every session. The list-changed handlers are chained: the
	// supervisor re-lists the catalog and then calls the host's handler.
	ClientOptions mcp.ClientOptions
	// Roots are the client's roots (MCP roots/list), given to every
	// session; Supervisor.AddRoots and RemoveRoots change them for the
	// current session and every later one. Default none.
	//lint:ignore SA1019 roots are deprecated from protocol 2026-07-28 on (SEP-2577), and still served by 2025-era servers
	Roots []*mcp.Root
	// SendingMiddleware and ReceivingMiddleware are go-sdk middleware
	// (tracing, metrics) added to the client of every session
	// (mcp.Client.AddSendingMiddleware, AddReceivingMiddleware), in order:
	// the first runs first. The sending middleware sees every request the
	// session sends, the handshake included, with the request's context. It
	// wraps mcpsup's own (httpsession.FactsMiddleware is added to the client first,
	// and go-sdk's AddSendingMiddleware wraps the handler built so far, so
	// the first added runs innermost): the errors it sees carry their wire
	// facts (classify.HTTPError, classify.NotSentError), so classify and an
	// mcpsupotel span name the HTTP status. A nil entry is skipped.
	// Default none.
	SendingMiddleware, ReceivingMiddleware []mcp.Middleware
	// Implementation is the client's name and version sent in initialize.
	// Default {Name: "mcpsup", Version: "0"}.
	Implementation *mcp.Implementation
}

// HTTPConfig applies to a streamable HTTP server only (Config.HTTP).
type HTTPConfig struct {
	// HTTPClient carries every request (credentials, TLS, proxies). Its
	// Transport is wrapped by mcpsup's round-tripper; the client itself is
	// not modified. Default: a client on http.DefaultTransport without a
	// timeout (calls are bounded by their context and Limits.CallTimeout).
	HTTPClient *http.Client
	// OAuthHandler, when set, authorizes every request of every session
	// (go-sdk's auth.OAuthHandler; see httpsession.Config.OAuthHandler): its token
	// source's access token is sent as a Bearer token on POSTs, the
	// standalone stream and its re-dials, the resumption of a call's stream
	// and DELETE, and a 401 (or a 403 with error="insufficient_scope") runs
	// its Authorize and sends the request once more. Only a refusal it
	// cannot fix reaches the supervisor as unauthorized (the error of the
	// Authorize that failed, which the refused answer cannot carry, is
	// logged at Warn on Observe.Logger): on a call, the
	// call fails and the session lives; on the stream, the stream pauses
	// until a request gets through; on the handshake or discovery, the
	// supervisor stops in a terminal failed state (reason unauthorized),
	// keeping a resumable session for Reconnect. Its access tokens (the
	// last two, of at least events.MinSessionIDLen bytes) are masked in
	// every text the supervisor hands out, where a server may quote them.
	// nil: HTTPClient carries the credentials.
	OAuthHandler auth.OAuthHandler
	// EraReprobe is how long the 2025 era, learned because a
	// `server/discover` was refused (HTTP 400 with JSON-RPC -32020, -32021
	// or -32022, or any other non-outage error) or answered without
	// 2026-07-28 among its supportedVersions (go-sdk's stateful streamable
	// handler offers only 2025 versions), is kept: the first new
	// session after it sends `server/discover` again, so a server that
	// speaks both eras, or that was rolled back and forward, gets the
	// 2026-07-28 era (and its push channel) back. A 2025 handshake, or a
	// 2025 session still opening, that the server refuses with an error of
	// a later era (httpsession.LegacyRefusal) ends the period at once. It also
	// spaces the re-discoveries a live session makes when a request is
	// refused its era (-32022 on 2026-07-28, httpsession.LegacyRefusal on 2025:
	// one per EraReprobe). It runs on Observe.Clock. Default
	// DefaultEraReprobe (10 min); negative: a fallback is kept for the
	// supervisor's life, as before.
	EraReprobe time.Duration
}

// StreamConfig is the standalone SSE stream of a streamable HTTP server
// (Config.Stream.Policy; failure story S5).
type StreamConfig struct {
	// Policy is the standalone SSE stream policy. Default StreamAuto.
	Policy StreamPolicy
	// HostileRule is the rule that marks a server GET-hostile (see
	// [HostileRule]; zero: 3 attempts). The decision is the HTTP dialer's
	// (one switch per supervisor, shared by its sessions): a live session
	// holds its stream at once, a new one inherits the decision, and the
	// stream is dialed again once HostileMemory has passed.
	HostileRule HostileRule
	// HostileMemory is how long a GET-hostile decision (StreamAuto) is kept
	// before the stream is tried again. Default 24h.
	HostileMemory time.Duration
	// Keeper tunes how the standalone stream is kept open and
	// re-dialed when it ends (see [StreamKeeper]; zero fields are its
	// defaults: re-dial backoff 1s to 30s).
	Keeper StreamKeeper
}

// RecoveryConfig is how a connection that failed is retried and replaced
// (Config.Recovery).
type RecoveryConfig struct {
	// Backoff configures retries out of the failed state.
	Backoff Backoff
	// KeepAlive, when positive, pings the server at this interval on
	// Observe.Clock, each ping bounded by the interval. A ping answered with transport (no
	// HTTP answer) or session-expired, or two pings in a row without an
	// answer, end the session without DELETE, and the supervisor replaces
	// it ("the session died"); any other failure (a 401, 429, 5xx, 403 ...)
	// keeps the session, as it does on a call. A ping answered -32601
	// (method not found: a server that serves no ping) or canceled stops
	// the session's keepalive for good; the next session has its own.
	// go-sdk's own
	// ClientOptions.KeepAlive, which sends DELETE on any failed ping, is
	// never used: a positive Client.ClientOptions.KeepAlive is taken as this field
	// (New refuses the two naming different intervals with
	// ErrConfigConflict; KeepAliveFailureThreshold is not used). The
	// 2026-07-28 era has no ping: a 2026-07-28 session's keepalive request
	// is `server/discover` (stateless, served by every such server, no side
	// effect; a 400 -32022 answer tells of a server rolled back to 2025,
	// see HTTP.EraReprobe); a stdio session (Command) pings on every version,
	// and takes a 2026-07-28 server's -32601 answer as life. Default 0
	// (off). Without it, an idle session whose server went away stays
	// Ready (and a hub's Health says so) until a call, or the standalone
	// stream's next re-dial once the server is back (Stream.Keeper's
	// backoff, up to 30 s), finds out: a re-dial that gets no HTTP answer
	// is not taken for the session's death. Useful with the stream off,
	// and for a host that reports health.
	KeepAlive time.Duration
	// ProbeTimeout bounds each blind probe of a resumed session, each list
	// of a discovery, and the ping that verifies a live session after a
	// call's transport failure. Default 10s.
	ProbeTimeout time.Duration
	// DiscoveryTimeout bounds one handshake, attach or catalog listing.
	// Default 30s.
	DiscoveryTimeout time.Duration
	// ListingRetries is how many times the catalog listing of a new session
	// whose handshake succeeded is retried on that same session when it
	// fails with a verdict that says the session is fine (forbidden,
	// rate-limited, server-error, application, timeout: a new session
	// cannot fix what the server answered). Each retry waits for the
	// Backoff schedule, as a retry from failed does, and sends only the
	// lists that did not settle: no initialize, no DELETE. A listing that
	// fails with transport or session-expired (the session may be gone),
	// or once the retries are spent, closes the session and retries from
	// failed with a new one. A listing that fails forever is retried at the
	// Backoff's pace, session after session, until Backoff.MaxAttempts or
	// MaxElapsed (when set) ends it in budget-spent, or Close. Default 4
	// (fsm.DefaultListingRetries: five listings on one session); negative:
	// none.
	ListingRetries int
	// MaxSessions and ChurnWindow: more than MaxSessions new sessions within
	// ChurnWindow moves to a terminal failed state whose reason is churn.
	// Defaults 10 and 1m (fsm.DefaultMaxSessions, fsm.DefaultWindow, where
	// the machine applies them). Reconnect opens a session like any other
	// and counts toward the limit.
	MaxSessions int
	ChurnWindow time.Duration
	// ChurnCooldown is how long a churn failure lasts before the supervisor
	// tries again with a new session (a Reconnect held by churn starts it
	// over). Default 5m (DefaultChurnCooldown).
	ChurnCooldown time.Duration
	// Resend chooses whether a failed call is sent again (see
	// ResendPolicy). Default ResendNever: never replayed.
	Resend ResendPolicy
	// NoReissue keeps the supervisor from re-issuing a call whose response
	// stream broke on a 2026-07-28 session. By default (false) such a call
	// is re-issued once, as a new request with a new JSON-RPC id, as soon
	// as the connection serves calls again (after a reset, once the session
	// answered its check: one server/discover), because the 2026-07-28
	// changelog (item 9, SEP-2575) removed stream resumption and says "A
	// broken response stream loses the in-flight request; clients MUST
	// re-issue it as a new request with a new request ID". The first request may have run on the server (a stream that
	// broke after the server began), so a tool that is not idempotent may
	// run twice; a call-reissued event says so, and a re-issued call that
	// fails again names both attempts (CallError.First). A host that needs
	// at-most-once calls sets NoReissue: the call then fails with the
	// broken stream's verdict (transport, or protocol for a stream that
	// ended cleanly; Delivery OutcomeUnknown), and the host decides. The
	// 2025-11-25 era resumes a broken stream instead (Last-Event-ID) and is
	// not affected. At most one extra request per call: a re-issued call is
	// not resent under ResendSafe as well.
	NoReissue bool
}

// LimitsConfig bounds calls, answers and the catalog's listing
// (Config.Limits).
type LimitsConfig struct {
	// MaxCallWait bounds how long a call made while the connection recovers
	// waits for ready, also when its context has no deadline. Default 30s.
	MaxCallWait time.Duration
	// CallTimeout bounds a call sent on the live session when the caller's
	// context has no deadline, so a stuck connection (an answer that never
	// comes) cannot hold a call forever; the call then fails with a timeout
	// verdict, outcome unknown. Each progress notification for the call
	// (MCP notifications/progress with the progressToken of the call's
	// params, which the host sets: params.SetProgressToken) starts it over,
	// up to CallTimeoutCeiling; notifications with a token no call carries
	// change nothing. A caller's own deadline is never extended. It bounds
	// each send: a call re-issued or resent (Recovery.NoReissue,
	// Recovery.Resend) is bounded by it once per send, so twice in all at
	// most. Default 5m.
	CallTimeout time.Duration
	// CallTimeoutCeiling is the hard bound of a call bounded by
	// CallTimeout, however much progress it reports, measured on
	// Observe.Clock from the call's send. Default 1h
	// (DefaultCallTimeoutCeiling); never less than CallTimeout.
	CallTimeoutCeiling time.Duration
	// DisableRateLimitWindow turns off the rate-limit window. By default,
	// after a 429 with Retry-After, calls made before the window ends fail
	// at once with the 429's verdict (ErrRateLimited) instead of feeding the
	// server's request budget (failure story S4). The window lasts the
	// Retry-After (at most classify.MaxRetryAfter, 1h: the same value the
	// call's error and the rate-limit-window event carry); Reconnect ends
	// it.
	DisableRateLimitWindow bool
	// AnswerLimits bound the answers to requests (see [AnswerLimits]; zero
	// fields are its defaults).
	AnswerLimits AnswerLimits
	// MaxResponsesInFlight bounds the client's responses to the server's
	// requests (ping, roots/list, sampling/createMessage,
	// elicitation/create) still on their way at once: POSTs waiting for
	// the server's answer (each also cut after httpsession.DefaultResponseTimeout,
	// 30 s), or writes to a stdio server's stdin. One past it is dropped,
	// with a response-dropped event, and the server's request stays
	// unanswered: a server that sends requests and never takes their
	// answers would otherwise hold a goroutine (and a connection) per
	// request. It also bounds the server's sampling/createMessage and
	// elicitation/create requests being handled at once (go-sdk runs each
	// on a goroutine of its own, the host's handler in it): one past it is
	// answered with a JSON-RPC error (-32603, internal error, naming the
	// bound) without reaching its handler, with a server-request-refused
	// event. Every handler's context (requests' and notifications') ends
	// with its session, so a handler waiting on it never holds Close.
	// Raise it for a server that sends many requests at
	// once through a slow path. Default httpsession.DefaultMaxResponsesInFlight
	// (16).
	MaxResponsesInFlight int
	// MaxPages and MaxItems cap the pagination of each catalog list, against
	// servers that never stop returning a cursor. A tools/list past a cap
	// fails discovery (and is retried on the backoff schedule); a side list
	// past a cap is degraded. A page that alone holds more than MaxItems
	// items is refused before go-sdk decodes it (a protocol verdict naming
	// the bound; over stdio a JSON-RPC error of code httpsession.CodeHTTPAnswer
	// naming it), so its items cost no memory. Defaults 100 pages and
	// 10,000 items (probes.DefaultMaxPages, probes.DefaultMaxItems).
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
	// or a GET-hostile decision), the server declined the session's push
	// stream (its standalone GET or subscriptions/listen answered 405,
	// another 4xx or not as a stream), or a 2025-era server issued no
	// session id (a stateless server has no standalone stream). The interval runs on
	// Observe.Clock from the last publish; each poll lists what the server
	// declared. Default 1m; negative never polls.
	CatalogPollInterval time.Duration
	// MinListTTL bounds from below how often a list is re-fetched because
	// its ttlMs ran out (SEP-2549: a 2026-07-28 server's hint of how long a
	// list result stays fresh). Each list result whose ttlMs is positive
	// arms its list's timer for max(ttlMs, MinListTTL) (a day at most),
	// plus up to a fifth of it at random, on Observe.Clock, from that result; when
	// it fires that list alone is re-listed, once, through the same
	// re-listing as list_changed (RelistMinGap applies), and its result
	// arms the next. A failed ttl re-list keeps the list's last items and
	// is tried again after 1, 2, 4... times max(ttlMs, MinListTTL) (at
	// most 5m, or the ttl when longer), jittered alike (caching.mdx:
	// "MUST apply jitter and backoff"). Default DefaultMinListTTL (10s);
	// negative ignores ttlMs.
	MinListTTL time.Duration
}

// ObserveConfig is what the host sees of a supervisor: events, call
// stages, logs, the secrets masked in them, and the clock their times
// are read on (Config.Observe).
type ObserveConfig struct {
	// Events receives every event, in order, one at a time, on a goroutine
	// of the supervisor's that runs only while events wait, outside any
	// lock. A transition's event is emitted once its state is published, so
	// State read on it is that state or a later one. A sink that blocks
	// delays the events behind it, not the connection (the queue is
	// unbounded: use events.NewSubscription to bound it); a sink that panics
	// has the panic logged and the event dropped. A sink may call any method
	// of the supervisor, Close and Detach included. Default: discarded.
	Events events.Sink
	// CallHandler, when set, is told of each host call's stages inside the
	// supervisor: the wait for ready, the session a failure cost, the end
	// (see [CallHandler]; mcpsupotel.Observer.CallHandler makes a span of
	// them). Default none, at no cost to a call.
	CallHandler CallHandler
	// Logger receives diagnostic logs. Default: discarded. Its records, and
	// those of Client.ClientOptions.Logger (go-sdk logs keepalive failures
	// with its error text), pass through events.RedactingHandler first: no
	// session id or credential reaches them in clear.
	Logger *slog.Logger
	// Secrets are credentials the host configured outside Config (the
	// values of headers its HTTP.HTTPClient adds, say): each of at least
	// events.MinSessionIDLen bytes is masked wherever it appears in every
	// text the supervisor hands out (events, errors and their verdicts,
	// logs), as Command.Env's values are (events.Redactor.AddLikelySecret);
	// a shorter one is left to the redactor's patterns. The hub sets each
	// server's header values here. Default none.
	Secrets []string
	// Clock drives timers (backoff, windows, event times). Default: the
	// real clock.
	Clock clockwork.Clock
}

// discardLogger is the default Logger; a slog.Logger cannot be changed, so
// every supervisor shares it.
var discardLogger = slog.New(slog.DiscardHandler)

// defaultImplementation is the default Implementation, shared like
// discardLogger: go-sdk only reads it (clientInfo of initialize and of
// 2026-07-28 requests' _meta).
var defaultImplementation = &mcp.Implementation{Name: "mcpsup", Version: "0"}

// withDefaults returns a copy of c with every zero field set to its default.
func (c Config) withDefaults() Config {
	if c.Name == "" {
		c.Name = c.Endpoint
	}
	if c.Limits.MaxResponsesInFlight <= 0 {
		c.Limits.MaxResponsesInFlight = httpsession.DefaultMaxResponsesInFlight
	}
	if c.Command != nil {
		cmd := c.Command.WithDefaults()
		c.Command = &cmd
		if c.Name == "" {
			c.Name = cmd.Path
		}
	}
	if c.HTTP.HTTPClient == nil {
		c.HTTP.HTTPClient = &http.Client{}
	}
	if c.Client.Implementation == nil {
		c.Client.Implementation = defaultImplementation
	}
	if c.Stream.HostileMemory <= 0 {
		c.Stream.HostileMemory = 24 * time.Hour
	}
	if c.Recovery.DiscoveryTimeout <= 0 {
		c.Recovery.DiscoveryTimeout = 30 * time.Second
	}
	if c.Recovery.ProbeTimeout <= 0 {
		c.Recovery.ProbeTimeout = 10 * time.Second
	}
	if c.Limits.MaxCallWait <= 0 {
		c.Limits.MaxCallWait = 30 * time.Second
	}
	if c.Limits.CallTimeout <= 0 {
		c.Limits.CallTimeout = 5 * time.Minute
	}
	if c.Limits.CallTimeoutCeiling <= 0 {
		c.Limits.CallTimeoutCeiling = DefaultCallTimeoutCeiling
	}
	c.Limits.CallTimeoutCeiling = max(c.Limits.CallTimeoutCeiling, c.Limits.CallTimeout)
	if c.Limits.RelistMinGap <= 0 {
		c.Limits.RelistMinGap = DefaultRelistMinGap
	}
	if c.Limits.CatalogPollInterval == 0 {
		c.Limits.CatalogPollInterval = DefaultCatalogPollInterval
	}
	if c.Limits.MinListTTL == 0 {
		c.Limits.MinListTTL = DefaultMinListTTL
	}
	if c.HTTP.EraReprobe == 0 {
		c.HTTP.EraReprobe = DefaultEraReprobe
	}
	b := &c.Recovery.Backoff
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
	if b.MaxAttempts < 0 {
		b.MaxAttempts = 0
	}
	if b.MaxElapsed < 0 {
		b.MaxElapsed = 0
	}
	if c.Recovery.ChurnCooldown <= 0 {
		c.Recovery.ChurnCooldown = DefaultChurnCooldown
	}
	if c.Observe.Clock == nil {
		c.Observe.Clock = clockwork.NewRealClock()
	}
	if c.Observe.Logger == nil {
		c.Observe.Logger = discardLogger
	}
	return c
}

// newBackOff builds the retry schedule from the config, on the supervisor's
// clock so MaxElapsed runs on fake time in tests. Unbounded (the default),
// it never returns backoff.Stop: cenkalti's MaxElapsedTime 0 means no limit.
func (b Backoff) newBackOff(clock clockwork.Clock) backoff.BackOff {
	eb := backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(b.InitialInterval),
		backoff.WithMaxInterval(b.MaxInterval),
		backoff.WithMultiplier(b.Multiplier),
		backoff.WithRandomizationFactor(b.RandomizationFactor),
		backoff.WithMaxElapsedTime(b.MaxElapsed),
		backoff.WithClockProvider(clockAdapter{clock}),
	)
	if b.MaxAttempts <= 0 {
		return eb
	}
	return backoff.WithMaxRetries(eb, uint64(b.MaxAttempts))
}

// clockAdapter lets cenkalti/backoff read a clockwork clock.
type clockAdapter struct{ c clockwork.Clock }

func (a clockAdapter) Now() time.Time { return a.c.Now() }
