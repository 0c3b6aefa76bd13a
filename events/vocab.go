package events

// The vocabulary of events (see the package doc): named string types whose
// values are the kebab-case names of the JSON form.

// Kind says what an [Event] reports; see the Kind constants.
type Kind string

// Event kinds, the values of [Event.Kind]. A reader must accept kinds it
// does not know: new kinds may be added.
const (
	// KindTransition: a state machine transition, internal transitions
	// included. Fields: From, To, Trigger, Guard, Verdict, Generation,
	// Attempt, Reason.
	KindTransition Kind = "transition"
	// KindProbeReport: the outcome of each list method of a discovery
	// (failure story S1). Fields: Lists, Generation.
	KindProbeReport Kind = "probe-report"
	// KindCatalogChanged: the published catalog changed (sent only when a
	// list changed). Fields: Added, Removed, Changed (tool names), Omitted,
	// Tools (tools now), Prompts, Resources, ResourceTemplates (nil when
	// unchanged), Generation.
	KindCatalogChanged Kind = "catalog-changed"
	// KindCallFailed: a call failed. It moves no state: a session it cost
	// reports its end as session-ended and a session-died transition
	// (failure story S4). Fields: Op, Name, Delivery, Verdict, Generation.
	KindCallFailed Kind = "call-failed"
	// KindSessionVerified: a request got no answer (transport) and one
	// liveness request (ping, or server/discover from 2026-07-28) verified
	// the session: answered, it lives; not, it ended. Fields: Generation,
	// Alive, Verdict (the liveness request's, when not answered).
	KindSessionVerified Kind = "session-verified"
	// KindStreamDisabled: the standalone SSE stream is no longer opened for
	// this server (failure story S5). Fields: Detail (the rule that fired).
	KindStreamDisabled Kind = "stream-disabled"
	// KindStreamEnabled: the standalone SSE stream is opened again. Fields:
	// Detail.
	KindStreamEnabled Kind = "stream-enabled"
	// KindStreamEventDropped: an event of the standalone SSE stream was not
	// handed to go-sdk (malformed, not one JSON-RPC message, oversized);
	// the session is unaffected. Each of a session's first 16 drops has
	// one, then every 1024th. Fields: Count, Detail (the error's text),
	// Generation.
	KindStreamEventDropped Kind = "stream-event-dropped"
	// KindStreamDeclined: the server declined this session's push stream
	// (its first standalone GET or subscriptions/listen POST answered 405,
	// another 4xx or not as an event stream): its catalog is polled; a
	// later session asks again. Fields: Generation, HTTPStatus, ContentType.
	KindStreamDeclined Kind = "stream-declined"
	// KindRetryScheduled: a retry is scheduled: from failed, or of a listing
	// on its live session. Fields: Attempt, Delay, Verdict.
	KindRetryScheduled Kind = "retry-scheduled"
	// KindRateLimitWindow: calls fail at once until a 429's Retry-After
	// window ends. Fields: Delay (the window), Verdict.
	KindRateLimitWindow Kind = "rate-limit-window"
	// KindSessionOpened: a go-sdk client session was created. Fields:
	// SessionID (hashed), Connection, Generation.
	KindSessionOpened Kind = "session-opened"
	// KindSessionEnded: a go-sdk client session ended. Fields: SessionID
	// (hashed), Connection, Generation, Verdict, Detail (how).
	KindSessionEnded Kind = "session-ended"
	// KindCallResent: a failed call is sent once more, as the resend policy
	// allows (not sent, or outcome unknown and its tool annotated
	// readOnlyHint or idempotentHint). Fields: Op, Name, and the first
	// attempt's Delivery, Verdict and Generation.
	KindCallResent Kind = "call-resent"
	// KindCallReissued: a 2026-07-28 call whose response stream broke was
	// re-issued once with a new id (changelog item 9, SEP-2575: "clients
	// MUST re-issue it as a new request with a new request ID"), reported
	// at the new request's outcome. Fields: Op, Name, the first attempt's
	// Delivery, Verdict and Generation, RequestID, ReissuedAs.
	KindCallReissued Kind = "call-reissued"
	// KindResponseDropped: the client's response to a request of the
	// server was not sent: Bound responses were already waiting for the
	// server's answer. The session is unaffected; the server's request
	// stays unanswered. Throttled as stream-event-dropped. Fields: Bound,
	// Count, Generation.
	KindResponseDropped Kind = "response-dropped"
	// KindServerRequestRefused: a request of the server that the host
	// handles (sampling/createMessage, elicitation/create) was answered
	// -32603 (internal error) without reaching its handler: Bound were
	// being handled already. The session is unaffected. Throttled as
	// stream-event-dropped. Fields: Op (its method), Bound, Count,
	// Generation.
	KindServerRequestRefused Kind = "server-request-refused"
	// KindStdoutLineDropped: a stdio server wrote a stdout line that is not
	// one JSON-RPC message (a log line, a batch, an oversized line) or that
	// answers an id never sent; it was not handed to go-sdk. Throttled as
	// stream-event-dropped, per process. Fields: Count, Detail (what was
	// wrong, the line's start), Generation.
	KindStdoutLineDropped Kind = "stdout-line-dropped"
	// KindProcessExited: a stdio server's process exited, by itself or
	// stopped by the supervisor (a hung server, a closed stdout); an exit
	// that Close or Detach caused is only logged. Fields: ExitCode, Signal,
	// Stop, Detail (the last bytes of its stderr), Generation.
	KindProcessExited Kind = "process-exited"
	// KindEraChanged: the protocol era of new sessions changed: a
	// server/discover refused, or answered without 2026-07-28, fell back to
	// 2025-11-25; a later session is back on 2026-07-28; or a 2026-07-28
	// session was refused its version (-32022) and re-discovers. Fields:
	// Generation, Detail (the era, and why).
	KindEraChanged Kind = "era-changed"
)

// State is a connection state (DESIGN.md section 2), as [Event.From] and
// [Event.To] name it. docs/statechart.md draws the transitions.
type State string

// The states.
const (
	// StateIdle: constructed, not started.
	StateIdle State = "idle"
	// StateConnecting: opening a new session with a full handshake
	// (`initialize`, or `server/discover` on 2026-07-28+ servers), then
	// listing what the server declared; a listing that fails on a live
	// session is retried on it (Config.Recovery.ListingRetries). Never
	// probes.
	StateConnecting State = "connecting"
	// StateResumingBlind: re-attaching a persisted session id whose
	// capabilities are unknown; nothing is sent yet.
	StateResumingBlind State = "resuming-blind"
	// StateResumingKnown: re-attaching a persisted session id whose
	// capabilities were persisted with it (an InitializeResult or a
	// 2026-07-28 discovery result).
	StateResumingKnown State = "resuming-known"
	// StateProbing: blind probes of the four lists on a resumed session;
	// only tools/list decides (failure story S1); a failure other than
	// unauthorized, canceled or timeout leads to stale-recovering once per
	// resume (S2).
	StateProbing State = "probing"
	// StateListingDeclared: a known-capabilities resume lists, strictly,
	// what the persisted capabilities declared; it does not probe.
	StateListingDeclared State = "listing-declared"
	// StateReady: serving calls. A failed call never leaves it (S4): the
	// session reports its own end (session-died).
	StateReady State = "ready"
	// StateStaleRecovering: the resumed session id was dropped; one full
	// re-handshake and discovery; never probes.
	StateStaleRecovering State = "stale-recovering"
	// StateFailed: a classified failure, churn, or a spent budget. Without
	// a [Reason] it retries (retry-due, to connecting); with one it is
	// terminal: left on reconnect-requested, churn-cooled ([ReasonChurn])
	// or a close or detach request.
	StateFailed State = "failed"
	// StateClosed: absorbing: every trigger is ignored.
	StateClosed State = "closed"
)

// String returns the kebab-case name, e.g. "stale-recovering".
func (s State) String() string { return string(s) }

// Trigger names a fact that caused a transition, in the past tense, as
// [Event.Trigger] names it; the supervisor reports it to the state machine
// (fsm.Trigger.Kind). Results of commands carry the generation of the
// command they answer.
type Trigger string

// The triggers.
const (
	// TriggerStarted: the host started the supervisor; the trigger's
	// resume mode says how.
	TriggerStarted Trigger = "started"
	// TriggerHandshakeSucceeded: a Dial completed its handshake.
	TriggerHandshakeSucceeded Trigger = "handshake-succeeded"
	// TriggerHandshakeFailed: a Dial failed; carries the verdict
	// (required).
	TriggerHandshakeFailed Trigger = "handshake-failed"
	// TriggerAttached: an Attach re-attached the persisted session.
	TriggerAttached Trigger = "attached"
	// TriggerAttachRefused: the persisted session could not be attached
	// locally (bad persisted state, e.g. a session id that is not visible
	// ASCII); the verdict is optional (canceled or unauthorized make it
	// terminal).
	TriggerAttachRefused Trigger = "attach-refused"
	// TriggerDiscoverySucceeded: a Probe or ListDeclared produced the
	// catalog (tools/list answered; speculative probes settled on their
	// own).
	TriggerDiscoverySucceeded Trigger = "discovery-succeeded"
	// TriggerDiscoveryFailed: a Probe's tools/list or a ListDeclared
	// failed; carries the verdict (required).
	TriggerDiscoveryFailed Trigger = "discovery-failed"
	// TriggerCatalogListed: a re-list while ready succeeded, e.g. after
	// notifications/tools/list_changed.
	TriggerCatalogListed Trigger = "catalog-listed"
	// TriggerSessionDied: the session ended by itself (its Done closed:
	// the server said it is gone, a verification or a keepalive ping went
	// unanswered, the process exited); carries the verdict of its cause,
	// or none when there was no error. A failed call never steps the
	// machine: the session reports its own end.
	TriggerSessionDied Trigger = "session-died"
	// TriggerRetryDue: the delay of a ScheduleRetry elapsed.
	TriggerRetryDue Trigger = "retry-due"
	// TriggerRetriesExhausted: the supervisor's backoff returned Stop
	// instead of a delay for a ScheduleRetry; the budget lives in the
	// backoff configuration. It may carry the ScheduleRetry's verdict (the
	// failure that was to be retried), which a failed state entered on it
	// keeps.
	TriggerRetriesExhausted Trigger = "retries-exhausted"
	// TriggerReconnectRequested: the host asked for a fresh session (e.g.
	// after re-authorizing). Resets the retry attempts; it counts toward
	// the churn limit like any other new session: past it the request is
	// held (ready keeps its session; failed becomes a churn failure).
	TriggerReconnectRequested Trigger = "reconnect-requested"
	// TriggerCloseRequested: the host closes the supervisor and ends the
	// server-side session (DELETE).
	TriggerCloseRequested Trigger = "close-requested"
	// TriggerDetachRequested: the host stops the supervisor but keeps the
	// session resumable: no DELETE.
	TriggerDetachRequested Trigger = "detach-requested"
	// TriggerChurnCooled: the supervisor's churn cool-down
	// (Config.Recovery.ChurnCooldown, 5 minutes by default) elapsed after the
	// machine entered a churn failure; the machine tries again. Resets the
	// retry attempts.
	TriggerChurnCooled Trigger = "churn-cooled"
)

// String returns the kebab-case name, e.g. "session-died".
func (t Trigger) String() string { return string(t) }

// Reason says why a failed state is terminal, as [Event.Reason] names it.
// The zero value, [ReasonNone], means not terminal. Churn and an exhausted
// budget are reasons, not error classes (DESIGN.md section 2).
type Reason string

// The reasons.
const (
	// ReasonNone: not terminal (a retrying failed state, or any other
	// state).
	ReasonNone Reason = ""
	// ReasonUnauthorized: the server answered unauthorized; the host
	// re-authorizes and requests a reconnect.
	ReasonUnauthorized Reason = "unauthorized"
	// ReasonCanceled: our own context was canceled.
	ReasonCanceled Reason = "canceled"
	// ReasonBudgetSpent: the retry budget (attempts or elapsed time) is
	// spent (trigger retries-exhausted); only a configured budget is (by
	// default retries never stop).
	ReasonBudgetSpent Reason = "budget-spent"
	// ReasonChurn: opening one more session would exceed the churn limit
	// (the machine's MaxSessions within its Window); the one terminal
	// reason that ends by itself: after the supervisor's cool-down it tries
	// again (trigger churn-cooled).
	ReasonChurn Reason = "churn"
)

// String returns the kebab-case name, e.g. "budget-spent"; "" for ReasonNone.
func (r Reason) String() string { return string(r) }
