package events

import (
	"slices"
	"time"
	"unicode/utf8"

	"github.com/mcpsup/mcpsup/classify"
)

// Event kinds, the values of [Event.Kind]. [KindTransition] reports what the
// state machine did; the supervisor emits it and the others through the same
// [Sink].
// A reader must accept kinds it does not know: new kinds may be added.
const (
	// KindTransition: a state machine transition, internal transitions
	// included. Fields: From, To, Trigger, Guard, Verdict, Generation,
	// Attempt, Reason.
	KindTransition Kind = "transition"
	// KindProbeReport: the outcome of each list method of a discovery
	// (blind probes or declared-capability listing, DESIGN.md section 2,
	// failure story S1). Fields: Lists, Generation.
	KindProbeReport Kind = "probe-report"
	// KindCatalogChanged: the published catalog changed: it is sent only
	// when at least one list changed (a new session whose catalog is the
	// same sends none). Fields: Added, Removed, Changed (tool names), Omitted
	// (those left off, past MaxNames each), Tools (tools now), Prompts, Resources, ResourceTemplates (the other lists'
	// changes, nil when unchanged), Generation.
	KindCatalogChanged Kind = "catalog-changed"
	// KindCallFailed: a call failed. A failed call moves no state: when
	// its answer cost the session (session-expired) or a verification
	// found it dead, the session's end follows as a session-ended event
	// and a session-died transition; a transport verdict's verification
	// reports as session-verified (failure story S4). Fields: Op, Name,
	// Delivery, Verdict, Generation.
	KindCallFailed Kind = "call-failed"
	// KindSessionVerified: a request got no answer (transport) and one
	// liveness request (ping, or server/discover from 2026-07-28) verified
	// the session: answered, it lives; not answered, it ended (its
	// session-ended event and session-died transition follow). Fields:
	// Generation, Verdict (the liveness request's, when not answered),
	// Detail.
	KindSessionVerified Kind = "session-verified"
	// KindStreamDisabled: the standalone SSE stream is no longer opened for
	// this server (failure story S5). Fields: Detail (the rule that fired).
	KindStreamDisabled Kind = "stream-disabled"
	// KindStreamEnabled: the standalone SSE stream is opened again. Fields:
	// Detail.
	KindStreamEnabled Kind = "stream-enabled"
	// KindStreamEventDropped: an event of the standalone SSE stream was not
	// handed to go-sdk (a malformed line, data that is not one JSON-RPC
	// message, an oversized event ...); the session is unaffected. The
	// first 16 drops of a session each have one, then every 1024th.
	// Fields: Detail (what was wrong, how many were dropped), Generation.
	KindStreamEventDropped Kind = "stream-event-dropped"
	// KindStreamDeclined: the server declined this session's push stream
	// (its first standalone GET, or its first subscriptions/listen POST,
	// answered 405, another 4xx or not as an event stream): no list_changed
	// reaches the session, so its catalog is polled; a later session asks
	// again. Fields: Generation, Detail (the answer, e.g. "HTTP 405
	// text/plain").
	KindStreamDeclined Kind = "stream-declined"
	// KindRetryScheduled: a retry is scheduled: from failed, or of a listing
	// on its live session (connecting, stale-recovering). Fields: Attempt,
	// Delay, Verdict.
	KindRetryScheduled Kind = "retry-scheduled"
	// KindRateLimitWindow: calls fail at once until a 429's Retry-After
	// window ends. Fields: Delay (the window), Verdict.
	KindRateLimitWindow Kind = "rate-limit-window"
	// KindSessionOpened: a go-sdk client session was created. Fields:
	// SessionID (hashed), Generation, Detail.
	KindSessionOpened Kind = "session-opened"
	// KindSessionEnded: a go-sdk client session ended. Fields: SessionID
	// (hashed), Generation, Detail.
	KindSessionEnded Kind = "session-ended"
	// KindCallResent: a failed call is sent once more, as the resend
	// policy allows (it was not sent, or its outcome is unknown and its tool
	// is annotated readOnlyHint or idempotentHint). Fields: Op, Name, and
	// the first attempt's Delivery, Verdict and Generation.
	KindCallResent Kind = "call-resent"
	// KindCallReissued: a call of a 2026-07-28 session whose response
	// stream broke before its response was re-issued once as a new
	// request with a new id, as the 2026-07-28 changelog (item 9, SEP-2575)
	// requires: "A broken response stream loses the in-flight request;
	// clients MUST re-issue it as a new request with a new request ID".
	// Emitted when the new request has its outcome, so that it names both
	// requests. Fields: Op, Name, the first attempt's Delivery, Verdict and
	// Generation; Detail names the lost request's JSON-RPC id and the new
	// one's (e.g. "request 3 lost with its response stream; re-issued as
	// request 5").
	KindCallReissued Kind = "call-reissued"
	// KindResponseDropped: the client's response to a request of the
	// server's (ping, roots/list, sampling/createMessage ...) was not sent,
	// because as many POSTs of responses as the wire layer allows were
	// waiting for the server's answer (a server sending requests faster
	// than it takes their answers); the session is unaffected and the
	// server's request stays unanswered. The first 16 drops of a session
	// each have one, then every 1024th. Fields: Detail (the bound, how many
	// were dropped), Generation.
	KindResponseDropped Kind = "response-dropped"
	// KindServerRequestRefused: a request of the server's that the host
	// handles (sampling/createMessage, elicitation/create) was answered
	// with a JSON-RPC error (-32603, internal error, its message naming
	// the bound) without reaching its handler, because as many of the
	// server's requests as the client allows were being handled or
	// answered already (a server sending requests faster than the host's
	// handlers end them); the session is unaffected. The first 16 of a
	// session each have one, then every 1024th. Fields: Detail (the
	// method, the bound, how many were refused), Generation.
	KindServerRequestRefused Kind = "server-request-refused"
	// KindStdoutLineDropped: a stdio server wrote a line on stdout that is
	// not one JSON-RPC message (a log line, a batch, an oversized line) or
	// that answers an id no request carried; it was not handed to go-sdk
	// and the session is unaffected. The first 16
	// lines of a process each have one, then every 1024th. Fields: Detail
	// (the line's number, what was wrong, the line's start), Generation.
	KindStdoutLineDropped Kind = "stdout-line-dropped"
	// KindProcessExited: a stdio server's process exited, by itself or
	// stopped by the supervisor (a hung server, a closed stdout). The
	// process that Close or Detach ends has none: the supervisor's last
	// event is the closed transition and its session-ended, and the exit is
	// logged (Config.Observe.Logger). Fields: Detail (exit code or signal, the stop
	// step, the last bytes of its stderr), Generation.
	KindProcessExited Kind = "process-exited"
	// KindEraChanged: the protocol era used for new sessions changed: a
	// `server/discover` refused, or answered without 2026-07-28 among its
	// supportedVersions, fell back to 2025-11-25, a later session
	// is back on 2026-07-28, or a live 2026-07-28 session was refused its
	// version (-32022) and re-discovers. Fields: Generation, Detail (the
	// era, and why).
	KindEraChanged Kind = "era-changed"
)

// Delivery values of [Event.Delivery]: how far a failed call got.
const (
	// DeliveryNotSent: the request never left; no server saw it.
	DeliveryNotSent = "not-sent"
	// DeliveryOutcomeUnknown: the request may have reached the server but no
	// answer came back (it is never replayed, failure story S4).
	DeliveryOutcomeUnknown = "outcome-unknown"
	// DeliveryAnswered: the server answered with an error.
	DeliveryAnswered = "answered"
)

// List statuses of [ListOutcome.Status].
const (
	ListPresent  = "present"
	ListAbsent   = "absent"
	ListDegraded = "degraded"
	ListFailed   = "failed"
)

// Event is one fact about a supervised connection. Kind says which fields are
// meaningful (see the Kind constants); every other field is zero, and zero
// fields are omitted from the JSON form (see the package doc for its table).
//
// For a transition event (Kind == [KindTransition]) From and To name the
// states before and after; they are equal for an internal transition (an
// event, no state change), e.g. a tool call that failed with a class that does
// not reconnect (failure story S4).
//
// Event is a plain value that holds no references into the machine that
// produced it. Its slices belong to the event once emitted: a sink must not
// modify them, and an emitter must not reuse them.
type Event struct {
	// Kind says what the event reports; [KindTransition] for transitions.
	Kind Kind
	// Server names the supervised MCP server, as configured by the host.
	Server string
	// Seq numbers the events of one server from 1, without gaps.
	Seq uint64
	// Time is the time the caller supplied with the trigger (the machine
	// never reads a clock); zero when the caller supplied none.
	Time time.Time
	// From is the state before the transition, e.g. [StateReady].
	From State
	// To is the state after the transition; equal to From for an internal
	// transition.
	To State
	// Trigger is the fact that caused the transition, e.g.
	// [TriggerCallFailed].
	Trigger Trigger
	// Guard names the rule that chose this transition (the guards of the
	// matching table row, joined by "+"); empty when the row has no guard.
	Guard string
	// Verdict is the classified failure the trigger carried; the zero
	// verdict (class "none") when the trigger carried none.
	Verdict classify.Verdict
	// Generation is the connection generation after the transition: the
	// number of go-sdk client sessions the supervisor has tried to open or
	// attach, failed attempts included.
	Generation uint64
	// Attempt is the retry attempt count after the transition: 0 after a
	// success or a host's reconnect request, n after the n-th scheduled retry.
	Attempt int
	// Reason is why a terminal failed state is terminal
	// ([ReasonUnauthorized], [ReasonCanceled], [ReasonBudgetSpent],
	// [ReasonChurn]); [ReasonNone] otherwise.
	Reason Reason

	// Lists is the outcome of each list method of a discovery, in the order
	// they were listed ([KindProbeReport]).
	Lists []ListOutcome
	// Added, Removed and Changed name the tools that appeared, disappeared
	// or changed definition ([KindCatalogChanged]), at most [MaxNames] each,
	// each name at most [MaxNameBytes]; see [BoundNames].
	Added, Removed, Changed []string
	// Omitted is how many tool names were left off Added, Removed and
	// Changed past [MaxNames] each ([KindCatalogChanged]; the hub's
	// merged-catalog-changed too), or how many events of a kind were not
	// sent one by one (the hub's name-collision).
	Omitted int
	// Tools is the number of tools in the catalog now ([KindCatalogChanged]).
	Tools int
	// Prompts (names), Resources (URIs) and ResourceTemplates (URI
	// templates) are the changes of the other catalog lists; nil when the
	// list did not change ([KindCatalogChanged]).
	Prompts, Resources, ResourceTemplates *ListChange
	// Op is the MCP method of a failed call, e.g. "tools/call"
	// ([KindCallFailed]).
	Op string
	// Name is the tool or prompt name, or the resource URI, of a failed
	// call ([KindCallFailed]).
	Name string
	// Delivery says how far a failed call got: [DeliveryNotSent],
	// [DeliveryOutcomeUnknown] or [DeliveryAnswered] ([KindCallFailed]).
	Delivery string
	// Delay is the wait before a retry ([KindRetryScheduled]) or the length
	// of a rate-limit window ([KindRateLimitWindow]).
	Delay time.Duration
	// SessionID is the MCP session id (Mcp-Session-Id) as a short hash made
	// by [HashSessionID], never the id itself ([KindSessionOpened],
	// [KindSessionEnded]). A [Redactor] enforces this.
	SessionID string
	// Connection is the supervisor's own id of one go-sdk client session:
	// "conn:" and 8 random hex digits, new for every session opened
	// ([KindSessionOpened], [KindSessionEnded]). A sessionless session (a
	// 2026-07-28 server, or a 2025-era server that issues no id) has no
	// SessionID; Connection tells its events apart from another's.
	Connection string
	// Detail is free text for people, on any kind; no decision rests on it.
	Detail string
	// Dropped is the number of events a [Subscription] dropped for a slow
	// reader just before this one; set only by [Subscription].
	Dropped uint64
}

// ListOutcome is how one list method fared in a discovery.
type ListOutcome struct {
	// List names the list, e.g. "tools", "resources", "prompts",
	// "resource-templates".
	List string
	// Status is [ListPresent], [ListAbsent] (the server does not implement
	// it, e.g. JSON-RPC -32601), [ListDegraded] (listed, with a warning,
	// e.g. pagination capped) or [ListFailed].
	Status string
	// Items is the number of items listed.
	Items int
	// Verdict is the classified failure behind an absent or failed list;
	// zero otherwise.
	Verdict classify.Verdict
	// Warning explains a degraded outcome for people.
	Warning string
}

// ListChange is the change of one catalog list between two published
// catalogs: the keys (names, or URIs for resources and URI templates for
// resource templates) that appeared, disappeared or changed definition,
// each sorted; at most [MaxNames] each, each at most [MaxNameBytes] (see
// [BoundNames]).
type ListChange struct {
	Added, Removed, Changed []string
	// Omitted is how many keys were left off Added, Removed and Changed
	// past [MaxNames] each.
	Omitted int
}

// The bounds of the names an event carries. A server chooses its tools'
// names (and its prompts', resources' URIs and templates') and how many
// there are: one list answer of go-sdk's 16 MiB could otherwise make one
// catalog-changed event of megabytes, a line [ReadJSONLines] refuses
// (past [MaxLineBytes]) and a log record as large. Twelve lists of MaxNames
// names of MaxNameBytes, each byte written as a six-byte JSON escape at
// worst, stay under half of MaxLineBytes.
const (
	// MaxNames is the most names an event carries in each of its name
	// lists (Added, Removed, Changed; those of a [ListChange] too). The
	// rest are counted in Omitted.
	MaxNames = 32
	// MaxNameBytes bounds one name an event carries: a longer one is cut at
	// a UTF-8 boundary and ends with "…", within the bound.
	MaxNameBytes = 256
)

// BoundNames returns the first [MaxNames] of names, each cut to
// [MaxNameBytes] (a cut name ends with "…"), and how many were left off.
// names is not modified, and the result holds none of its backing array
// past the kept names; names within both bounds are returned as they are.
func BoundNames(names []string) (kept []string, omitted int) {
	if len(names) > MaxNames {
		names, omitted = names[:MaxNames], len(names)-MaxNames
	}
	long := false
	for _, n := range names {
		long = long || len(n) > MaxNameBytes
	}
	if !long {
		if omitted > 0 {
			return slices.Clone(names), omitted
		}
		return names, 0
	}
	kept = make([]string, len(names))
	for i, n := range names {
		kept[i] = CutName(n)
	}
	return kept, omitted
}

// BoundChange returns the change of a list (its added, removed and changed
// keys) as an event carries it: each list through [BoundNames], and in
// Omitted how many were left off in all.
func BoundChange(added, removed, changed []string) ListChange {
	var c ListChange
	var a, r, ch int
	c.Added, a = BoundNames(added)
	c.Removed, r = BoundNames(removed)
	c.Changed, ch = BoundNames(changed)
	c.Omitted = a + r + ch
	return c
}

// CutName returns n cut to [MaxNameBytes], "…" included, at a UTF-8
// boundary; n itself when it is within the bound.
func CutName(n string) string {
	if len(n) <= MaxNameBytes {
		return n
	}
	const ellipsis = "…"
	i := MaxNameBytes - len(ellipsis)
	for i > 0 && !utf8.RuneStart(n[i]) {
		i--
	}
	return n[:i] + ellipsis
}

// Empty reports whether nothing changed; a nil ListChange is empty.
func (c *ListChange) Empty() bool {
	return c == nil || len(c.Added) == 0 && len(c.Removed) == 0 && len(c.Changed) == 0
}

// Sink receives events. A supervisor calls Emit once per event, in order,
// one call at a time, from a goroutine of its own that is not the one
// driving its state machine, so Emit may call back into the supervisor; a
// slow Emit delays only the events behind it. Implementations used from
// several supervisors must be safe for concurrent use.
type Sink interface {
	Emit(Event)
}

// SinkFunc adapts a function to a [Sink]: the callback sink. It is as safe
// for concurrent use as the function is.
type SinkFunc func(Event)

// Emit calls f(e).
func (f SinkFunc) Emit(e Event) { f(e) }
