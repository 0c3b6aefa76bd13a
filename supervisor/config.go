package supervisor

import (
	"cmp"
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

// StreamPolicy chooses whether sessions open the standalone SSE stream
// (failure story S5): StreamAuto (the default), StreamOn or StreamOff.
type StreamPolicy = httpsession.StreamMode

const (
	StreamAuto = httpsession.StreamAuto
	StreamOn   = httpsession.StreamOn
	StreamOff  = httpsession.StreamOff
)

// HostileRule marks a server GET-hostile under StreamAuto; zero: default.
type HostileRule = httpsession.HostilityRule

// StreamKeeper tunes the standalone stream's re-dials; zero fields: defaults.
type StreamKeeper = httpsession.StreamConfig

// AnswerLimits bound what is read of the server's answers (over stdio, its
// message bounds); zero fields: defaults.
type AnswerLimits = httpsession.AnswerLimits

// DefaultEraReprobe is Config.HTTP.EraReprobe's default (10 min).
const DefaultEraReprobe = httpsession.DefaultEraReprobe

// Era is the protocol era assumed before a handshake tells: EraAuto (the
// default), Era2025 or Era20260728.
type Era = httpsession.Era

const (
	EraAuto     = httpsession.EraAuto
	Era2025     = httpsession.Era2025
	Era20260728 = httpsession.Era20260728
)

// Backoff is the schedule of the retries out of the failed state and of
// the listing retries (cenkalti/backoff's ExponentialBackOff), one per
// outage, reset at the next ready. By default retried forever (500ms, 1s,
// 2s, ... then every 30s); MaxAttempts or MaxElapsed end one outage in a
// terminal failed state (budget-spent). Zero and out-of-range fields take
// the defaults.
type Backoff struct {
	InitialInterval time.Duration // default 500ms
	// MaxInterval caps the growth and a Retry-After wait (jitter may draw
	// up to 1+RandomizationFactor times it). Default 30s.
	MaxInterval         time.Duration
	Multiplier          float64       // default 2 (also below 1)
	RandomizationFactor float64       // a wait w is drawn from [w*(1-f), w*(1+f)]; default 0.5 (also outside (0, 1))
	NoJitter            bool          // RandomizationFactor 0
	MaxAttempts         int           // when positive, bounds one outage's retries (listing retries too)
	MaxElapsed          time.Duration // when positive, as MaxAttempts, on Observe.Clock
}

// ResendPolicy chooses whether the supervisor sends a failed call again.
type ResendPolicy uint8

const (
	// ResendNever (the default): CallError.Resendable tells the host.
	ResendNever ResendPolicy = iota
	// ResendSafe sends a call whose CallError is Resendable once more once
	// the connection recovered (call-resent); the caller gets the second
	// outcome. A call refused locally or given up is not resent.
	ResendSafe
)

func (p ResendPolicy) String() string {
	if p <= ResendSafe {
		return [...]string{"never", "safe"}[p]
	}
	return "invalid"
}

// Defaults of LimitsConfig and RecoveryConfig fields.
const (
	DefaultCallTimeoutCeiling  = time.Hour
	DefaultChurnCooldown       = 5 * time.Minute
	DefaultRelistMinGap        = time.Second
	DefaultCatalogPollInterval = time.Minute
	DefaultMinListTTL          = 10 * time.Second
)

// Config configures a Supervisor. Every zero field is a documented
// default; Endpoint or Command is required.
type Config struct {
	Endpoint string // the MCP server's streamable HTTP endpoint URL
	// Command, in place of Endpoint, is a stdio server, started again when
	// it dies; with Endpoint, Resume, HTTP or Stream: ErrConfigConflict.
	Command *stdio.Command
	// Name names the server in events and logs, credentials masked.
	// Default Endpoint, or Command.Path.
	Name string
	// Era hints the server's protocol era, so a 2025-era server is not sent
	// `server/discover` first (over stdio: initialize's version). Default
	// EraAuto: learned from the first handshake and from Resume.
	Era    Era
	Resume *ResumeState // when non-nil, re-attached instead of a new session

	Client   ClientConfig   // the go-sdk client of every session
	HTTP     HTTPConfig     // Endpoint only
	Stream   StreamConfig   // Endpoint's standalone SSE stream (failure story S5)
	Recovery RecoveryConfig // how a failed connection is retried and replaced
	Limits   LimitsConfig   // bounds on calls, answers and the catalog's listing
	Observe  ObserveConfig  // events, call stages, logs, secrets
}

// ClientConfig is the go-sdk client of every session.
type ClientConfig struct {
	// ClientOptions: the list-changed and progress handlers run after the
	// supervisor's; KeepAlive is taken as RecoveryConfig.KeepAlive.
	ClientOptions mcp.ClientOptions
	// Roots are served to roots/list; AddRoots and RemoveRoots change them.
	//lint:ignore SA1019 roots are deprecated from protocol 2026-07-28 on (SEP-2577), and still served by 2025-era servers
	Roots []*mcp.Root
	// SendingMiddleware and ReceivingMiddleware wrap every session's client
	// in order, the first innermost, outside mcpsup's own (their errors
	// carry classify.HTTPError, classify.NotSentError); nil entries skipped.
	SendingMiddleware, ReceivingMiddleware []mcp.Middleware
	// Implementation is sent in initialize. Default {mcpsup, 0}.
	Implementation *mcp.Implementation
}

// HTTPConfig applies to a streamable HTTP server only.
type HTTPConfig struct {
	HTTPClient *http.Client // its Transport is wrapped, the client not modified; default: no timeout
	// OAuthHandler, when set, authorizes every request: a 401, or a 403
	// with error="insufficient_scope", runs its Authorize and sends the
	// request once more; a refusal it cannot fix is unauthorized (a
	// handshake's: a terminal failed state). Its last two access tokens are
	// masked. Default nil: HTTPClient carries the credentials.
	OAuthHandler auth.OAuthHandler
	// EraReprobe is how long a fall back to the 2025 era (`server/discover`
	// refused, or without 2026-07-28) lasts before a new session tries
	// again; it also spaces a live session's re-discoveries. On
	// Observe.Clock. Default DefaultEraReprobe; negative: for good.
	EraReprobe time.Duration
}

// StreamConfig is the standalone SSE stream of a streamable HTTP server
// (failure story S5).
type StreamConfig struct {
	Policy        StreamPolicy  // default StreamAuto
	HostileRule   HostileRule   // marks a server GET-hostile for all sessions; zero: 3 attempts
	HostileMemory time.Duration // how long a GET-hostile decision is kept; default 24h
	Keeper        StreamKeeper  // the stream's re-dials; default backoff 1s to 30s
}

// RecoveryConfig is how a failed connection is retried and replaced.
type RecoveryConfig struct {
	Backoff Backoff // retries out of the failed state
	// KeepAlive, when positive, pings the server at this interval on
	// Observe.Clock, each ping bounded by it (Supervisor.Ping). A ping failed
	// by transport or session-expired, or two unanswered in a row, end the
	// session without DELETE; -32601 or canceled stop the keepalive. Taken
	// from a positive ClientOptions.KeepAlive (ErrConfigConflict when both
	// differ). Default 0: off.
	KeepAlive        time.Duration
	ProbeTimeout     time.Duration // each blind probe, list of a discovery, verification ping; default 10s
	DiscoveryTimeout time.Duration // one handshake, attach or catalog listing; default 30s
	// ListingRetries is how often a new session's failed listing is retried
	// on it, on the Backoff schedule, when the verdict leaves the session
	// fine (unsettled lists only). Default fsm.DefaultListingRetries (4);
	// negative: none.
	ListingRetries int
	// MaxSessions new sessions within ChurnWindow, and one more is a
	// terminal failed state, reason churn; Reconnect counts. Defaults
	// fsm.DefaultMaxSessions (10) and fsm.DefaultWindow (1m).
	MaxSessions   int
	ChurnWindow   time.Duration
	ChurnCooldown time.Duration // a churn failure's length; default DefaultChurnCooldown
	Resend        ResendPolicy
	// NoReissue fails (OutcomeUnknown) a call whose 2026-07-28 response
	// stream broke, instead of re-issuing it once with a new JSON-RPC id
	// (2026-07-28 changelog item 9: "clients MUST re-issue it as a new
	// request with a new request ID"; a tool may then run twice).
	NoReissue bool
}

// LimitsConfig bounds calls, answers and the catalog's listing.
type LimitsConfig struct {
	MaxCallWait time.Duration // bounds a call's wait for ready; default 30s
	// CallTimeout bounds each send of a call whose context has no
	// deadline (then a timeout verdict, outcome unknown). Each
	// notifications/progress carrying the call's progressToken starts it
	// over, up to CallTimeoutCeiling. Default 5m.
	CallTimeout time.Duration
	// CallTimeoutCeiling bounds a call bounded by CallTimeout, from its
	// send, on Observe.Clock; at least CallTimeout. Default
	// DefaultCallTimeoutCeiling.
	CallTimeoutCeiling time.Duration
	// DisableRateLimitWindow: by default, after a 429 with Retry-After (at
	// most classify.MaxRetryAfter), calls fail at once with ErrRateLimited
	// until it ends or Reconnect (S4).
	DisableRateLimitWindow bool
	AnswerLimits           AnswerLimits
	// MaxResponsesInFlight bounds the responses to the server's requests
	// on their way at once (one past it dropped: response-dropped) and its
	// sampling/createMessage and elicitation/create requests handled at
	// once (one past it answered -32603, internal error:
	// server-request-refused). Default 16.
	MaxResponsesInFlight int
	// MaxPages and MaxItems cap each list's pagination: past a cap (class
	// protocol) tools/list fails discovery and a side list is degraded; a
	// page over MaxItems is refused undecoded. Defaults
	// probes.DefaultMaxPages (100) and probes.DefaultMaxItems (10,000).
	MaxPages, MaxItems int
	// RelistMinGap is the least time between the starts of two (coalesced)
	// re-lists on one session. Default DefaultRelistMinGap.
	RelistMinGap time.Duration
	// CatalogPollInterval spaces re-lists, on Observe.Clock from the last
	// publish, when no list_changed can arrive (stream off or declined, or
	// a 2025-era server without a session id). Default
	// DefaultCatalogPollInterval; negative: never.
	CatalogPollInterval time.Duration
	// MinListTTL bounds from below the re-fetch of a list whose ttlMs ran
	// out (SEP-2549). Default DefaultMinListTTL; negative ignores ttlMs.
	MinListTTL time.Duration
}

// ObserveConfig is what the host sees of a supervisor.
type ObserveConfig struct {
	// Events receives every event, in order, one at a time, off the loop,
	// after the state it announces is published, from an unbounded queue
	// (events.NewSubscription bounds one); a panic drops the event; a sink
	// may call any method, Close included. Default: discarded.
	Events      events.Sink
	CallHandler CallHandler  // when set, told each host call's stages
	Logger      *slog.Logger // redacted, as is ClientOptions.Logger; default discarded
	// Secrets are credentials set outside Config (header values), masked in
	// every text the supervisor hands out when of at least
	// events.MinSessionIDLen bytes.
	Secrets []string
	Clock   clockwork.Clock // timers and event times; default the real clock
}

// withDefaults returns c with every zero field set to its default.
func (c Config) withDefaults() Config {
	c.Name = cmp.Or(c.Name, c.Endpoint)
	if c.Command != nil {
		cmd := c.Command.WithDefaults()
		c.Command, c.Name = &cmd, cmp.Or(c.Name, cmd.Path)
	}
	if c.Recovery.KeepAlive <= 0 && c.Client.ClientOptions.KeepAlive > 0 {
		c.Recovery.KeepAlive = c.Client.ClientOptions.KeepAlive // go-sdk's (DELETE on a failed ping) is never used
	}
	c.Client.ClientOptions.KeepAlive = 0
	c.HTTP.HTTPClient = cmp.Or(c.HTTP.HTTPClient, &http.Client{})
	c.Client.Implementation = cmp.Or(c.Client.Implementation, &mcp.Implementation{Name: "mcpsup", Version: "0"})
	c.Observe.Clock = cmp.Or[clockwork.Clock](c.Observe.Clock, clockwork.NewRealClock())
	c.Observe.Logger = cmp.Or(c.Observe.Logger, slog.New(slog.DiscardHandler))
	c.Limits.MaxResponsesInFlight = cmp.Or(max(c.Limits.MaxResponsesInFlight, 0), httpsession.DefaultMaxResponsesInFlight)
	c.Recovery.DiscoveryTimeout = cmp.Or(max(c.Recovery.DiscoveryTimeout, 0), 30*time.Second)
	c.Recovery.ProbeTimeout = cmp.Or(max(c.Recovery.ProbeTimeout, 0), 10*time.Second)
	c.Recovery.ChurnCooldown = cmp.Or(max(c.Recovery.ChurnCooldown, 0), DefaultChurnCooldown)
	c.Limits.MaxCallWait = cmp.Or(max(c.Limits.MaxCallWait, 0), 30*time.Second)
	c.Limits.CallTimeout = cmp.Or(max(c.Limits.CallTimeout, 0), 5*time.Minute)
	c.Limits.CallTimeoutCeiling = max(cmp.Or(max(c.Limits.CallTimeoutCeiling, 0), DefaultCallTimeoutCeiling), c.Limits.CallTimeout)
	c.Limits.RelistMinGap = cmp.Or(max(c.Limits.RelistMinGap, 0), DefaultRelistMinGap)
	// Negative is meaningful for these two: only zero takes the default.
	c.Limits.CatalogPollInterval = cmp.Or(c.Limits.CatalogPollInterval, DefaultCatalogPollInterval)
	c.Limits.MinListTTL = cmp.Or(c.Limits.MinListTTL, DefaultMinListTTL)
	b := &c.Recovery.Backoff
	b.InitialInterval = cmp.Or(max(b.InitialInterval, 0), 500*time.Millisecond)
	b.MaxInterval = cmp.Or(max(b.MaxInterval, 0), 30*time.Second)
	if b.Multiplier < 1 {
		b.Multiplier = 2
	}
	if b.RandomizationFactor <= 0 || b.RandomizationFactor >= 1 {
		b.RandomizationFactor = 0.5
	}
	if b.NoJitter {
		b.RandomizationFactor = 0
	}
	b.MaxAttempts, b.MaxElapsed = max(b.MaxAttempts, 0), max(b.MaxElapsed, 0)
	return c
}

// newBackOff builds the retry schedule; unbounded, it never stops.
func (b Backoff) newBackOff(clock clockwork.Clock) backoff.BackOff {
	eb := backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(b.InitialInterval),
		backoff.WithMaxInterval(b.MaxInterval),
		backoff.WithMultiplier(b.Multiplier),
		backoff.WithRandomizationFactor(b.RandomizationFactor),
		backoff.WithMaxElapsedTime(b.MaxElapsed),
		backoff.WithClockProvider(clock),
	)
	if b.MaxAttempts <= 0 {
		return eb
	}
	return backoff.WithMaxRetries(eb, uint64(b.MaxAttempts))
}
