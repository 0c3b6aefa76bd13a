package events

// Kind says what an [Event] reports. A reader must accept kinds it does not
// know.
type Kind string

// Event kinds; each names the fields it carries.
const (
	// KindTransition: a state machine transition, internal ones included.
	// Fields: From, To, Trigger, Guard, Verdict, Generation, Attempt, Reason.
	KindTransition Kind = "transition"
	// KindProbeReport: how each list method of a discovery fared (failure
	// story S1). Fields: Lists, Generation.
	KindProbeReport Kind = "probe-report"
	// KindCatalogChanged: the published catalog changed. Fields: Added,
	// Removed, Changed (tool names), Omitted, Tools, Prompts, Resources,
	// ResourceTemplates (nil when unchanged), Generation.
	KindCatalogChanged Kind = "catalog-changed"
	// KindCallFailed: a call failed; it moves no state (failure story S4).
	// Fields: Op, Name, Delivery, Verdict, Generation.
	KindCallFailed Kind = "call-failed"
	// KindSessionVerified: a request got no answer and one liveness request
	// verified the session. Fields: Generation, Alive, Verdict.
	KindSessionVerified Kind = "session-verified"
	// KindStreamDisabled: the standalone SSE stream is no longer opened
	// (failure story S5). Fields: Why.
	KindStreamDisabled Kind = "stream-disabled"
	// KindStreamEnabled: the standalone SSE stream is opened again. Fields:
	// Why.
	KindStreamEnabled Kind = "stream-enabled"
	// KindStreamEventDropped: a standalone SSE event was not handed to
	// go-sdk. Sent for a session's first 16 drops, then every 1024th.
	// Fields: Count, Why, Bytes, Bound (DropOversized), Generation.
	KindStreamEventDropped Kind = "stream-event-dropped"
	// KindStreamDeclined: the server declined the session's push stream:
	// its catalog is polled. Fields: Generation, HTTPStatus, ContentType.
	KindStreamDeclined Kind = "stream-declined"
	// KindRetryScheduled: a retry is scheduled, from failed or of a listing.
	// Fields: Attempt, Delay, Verdict.
	KindRetryScheduled Kind = "retry-scheduled"
	// KindRateLimitWindow: calls fail at once until a 429's Retry-After
	// window ends. Fields: Delay, Verdict.
	KindRateLimitWindow Kind = "rate-limit-window"
	// KindSessionOpened: a go-sdk client session was created. Fields:
	// SessionID, Connection, Generation.
	KindSessionOpened Kind = "session-opened"
	// KindSessionEnded: a go-sdk client session ended. Fields: SessionID,
	// Connection, Generation, Verdict, Detail.
	KindSessionEnded Kind = "session-ended"
	// KindCallResent: the resend policy sends a failed call once more.
	// Fields: Op, Name, the first attempt's Delivery, Verdict, Generation.
	KindCallResent Kind = "call-resent"
	// KindCallReissued: a 2026-07-28 call whose response stream broke was
	// re-issued once with a new id (changelog item 9, SEP-2575). Fields:
	// those of KindCallResent, RequestID, ReissuedAs.
	KindCallReissued Kind = "call-reissued"
	// KindResponseDropped: a response to a request of the server was not
	// sent: Bound were already waiting. Throttled as stream-event-dropped.
	// Fields: Bound, Count, Generation.
	KindResponseDropped Kind = "response-dropped"
	// KindServerRequestRefused: a request of the server for a host handler
	// was answered -32603 (internal error): Bound were being handled.
	// Throttled as stream-event-dropped. Fields: Op, Bound, Count,
	// Generation.
	KindServerRequestRefused Kind = "server-request-refused"
	// KindStdoutLineDropped: a stdio server's stdout line was not one
	// JSON-RPC message, past a bound, or answered an id never sent. Throttled as
	// stream-event-dropped. Fields: Count, Why, Bound (the line bound
	// broken), RequestID, Generation.
	KindStdoutLineDropped Kind = "stdout-line-dropped"
	// KindProcessExited: a stdio server's process exited (not by Close or
	// Detach). Fields: ExitCode, Signal, Stop, Detail (stderr's tail),
	// Generation.
	KindProcessExited Kind = "process-exited"
	// KindEraChanged: the protocol era of new sessions changed. Fields:
	// EraFrom, EraTo, EraWhy, Op, HTTPStatus, RPCCode, Generation.
	KindEraChanged Kind = "era-changed"
)

// State is a connection state (DESIGN.md section 2; docs/statechart.md).
type State string

// The states.
const (
	StateIdle State = "idle"
	// StateConnecting: a new session with a full handshake, then listing.
	StateConnecting State = "connecting"
	// StateResumingBlind: re-attaching a persisted session id, capabilities
	// unknown.
	StateResumingBlind State = "resuming-blind"
	// StateResumingKnown: re-attaching a persisted session id with its
	// persisted capabilities.
	StateResumingKnown State = "resuming-known"
	// StateProbing: blind probes of the lists on a resumed session (S1, S2).
	StateProbing State = "probing"
	// StateListingDeclared: a known resume lists what was declared.
	StateListingDeclared State = "listing-declared"
	// StateReady: serving calls; a failed call never leaves it (S4).
	StateReady State = "ready"
	// StateStaleRecovering: the resumed id was dropped; one full
	// re-handshake.
	StateStaleRecovering State = "stale-recovering"
	// StateFailed: retrying without a [Reason], terminal with one.
	StateFailed State = "failed"
	// StateClosed: absorbing.
	StateClosed State = "closed"
)

// String returns the kebab-case name, e.g. "stale-recovering".
func (s State) String() string { return string(s) }

// Trigger names the fact that caused a transition (DESIGN.md section 2).
type Trigger string

// The triggers.
const (
	TriggerStarted            Trigger = "started"
	TriggerHandshakeSucceeded Trigger = "handshake-succeeded"
	TriggerHandshakeFailed    Trigger = "handshake-failed"
	TriggerAttached           Trigger = "attached"
	// TriggerAttachRefused: the persisted session could not be attached
	// locally (e.g. an id that is not visible ASCII).
	TriggerAttachRefused      Trigger = "attach-refused"
	TriggerDiscoverySucceeded Trigger = "discovery-succeeded"
	TriggerDiscoveryFailed    Trigger = "discovery-failed"
	// TriggerCatalogListed: a re-list while ready succeeded.
	TriggerCatalogListed Trigger = "catalog-listed"
	// TriggerSessionDied: the session ended by itself; carries its cause's
	// verdict, if any.
	TriggerSessionDied Trigger = "session-died"
	TriggerRetryDue    Trigger = "retry-due"
	// TriggerRetriesExhausted: the backoff returned Stop.
	TriggerRetriesExhausted Trigger = "retries-exhausted"
	// TriggerReconnectRequested: the host asked for a fresh session; resets
	// the attempts, counts toward the churn limit.
	TriggerReconnectRequested Trigger = "reconnect-requested"
	// TriggerCloseRequested: close, ending the server-side session (DELETE).
	TriggerCloseRequested Trigger = "close-requested"
	// TriggerDetachRequested: stop, keeping the session resumable.
	TriggerDetachRequested Trigger = "detach-requested"
	// TriggerChurnCooled: the churn cool-down elapsed; resets the attempts.
	TriggerChurnCooled Trigger = "churn-cooled"
)

// String returns the kebab-case name, e.g. "session-died".
func (t Trigger) String() string { return string(t) }

// Reason says why a failed state is terminal; [ReasonNone] means it is not
// (DESIGN.md section 2).
type Reason string

// The reasons.
const (
	ReasonNone Reason = ""
	// ReasonUnauthorized: the host re-authorizes and requests a reconnect.
	ReasonUnauthorized Reason = "unauthorized"
	// ReasonCanceled: our own context was canceled.
	ReasonCanceled Reason = "canceled"
	// ReasonBudgetSpent: a configured retry budget is spent.
	ReasonBudgetSpent Reason = "budget-spent"
	// ReasonChurn: one more session would exceed the churn limit; ends by
	// itself after the cool-down (trigger churn-cooled).
	ReasonChurn Reason = "churn"
)

// String returns the kebab-case name, e.g. "budget-spent"; "" for ReasonNone.
func (r Reason) String() string { return string(r) }
