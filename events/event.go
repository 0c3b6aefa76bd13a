package events

import (
	"slices"
	"time"
	"unicode/utf8"

	"github.com/mcpsup/mcpsup/classify"
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
// fields are omitted from the JSON form (see the package doc).
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
	Kind Kind `json:"kind"`
	// Server names the supervised MCP server, as configured by the host.
	Server string `json:"server,omitempty"`
	// Seq numbers the events of one server from 1, without gaps.
	Seq uint64 `json:"seq,omitempty"`
	// Time is the time the caller supplied with the trigger (the machine
	// never reads a clock); zero when the caller supplied none.
	Time time.Time `json:"-"`
	// From is the state before the transition, e.g. [StateReady].
	From State `json:"from,omitempty"`
	// To is the state after the transition; equal to From for an internal
	// transition.
	To State `json:"to,omitempty"`
	// Trigger is the fact that caused the transition, e.g.
	// [TriggerCallFailed].
	Trigger Trigger `json:"trigger,omitempty"`
	// Guard names the rule that chose this transition (the guards of the
	// matching table row, joined by "+"); empty when the row has no guard.
	Guard string `json:"guard,omitempty"`
	// Verdict is the classified failure the trigger carried; the zero
	// verdict (class "none") when the trigger carried none.
	Verdict classify.Verdict `json:"-"`
	// Generation is the connection generation after the transition: the
	// number of go-sdk client sessions the supervisor has tried to open or
	// attach, failed attempts included.
	Generation uint64 `json:"generation,omitempty"`
	// Attempt is the retry attempt count after the transition: 0 after a
	// success or a host's reconnect request, n after the n-th scheduled retry.
	Attempt int `json:"attempt,omitempty"`
	// Reason is why a terminal failed state is terminal
	// ([ReasonUnauthorized], [ReasonCanceled], [ReasonBudgetSpent],
	// [ReasonChurn]); [ReasonNone] otherwise.
	Reason Reason `json:"reason,omitempty"`

	// Lists is the outcome of each list method of a discovery, in the order
	// they were listed ([KindProbeReport]).
	Lists []ListOutcome `json:"-"`
	// Added, Removed and Changed name the tools that appeared, disappeared
	// or changed definition ([KindCatalogChanged]), at most [MaxNames] each,
	// each name at most [MaxNameBytes]; see [BoundNames].
	Added   []string `json:"added,omitempty"`
	Removed []string `json:"removed,omitempty"`
	Changed []string `json:"changed,omitempty"`
	// Omitted is how many tool names were left off Added, Removed and
	// Changed past [MaxNames] each ([KindCatalogChanged]; the hub's
	// merged-catalog-changed too), or how many events of a kind were not
	// sent one by one (the hub's name-collision).
	Omitted int `json:"omitted,omitempty"`
	// Tools is the number of tools in the catalog now ([KindCatalogChanged]).
	Tools int `json:"tools,omitempty"`
	// Prompts (names), Resources (URIs) and ResourceTemplates (URI
	// templates) are the changes of the other catalog lists; nil when the
	// list did not change ([KindCatalogChanged]).
	Prompts           *ListChange `json:"prompts,omitzero"`
	Resources         *ListChange `json:"resources,omitzero"`
	ResourceTemplates *ListChange `json:"resource_templates,omitzero"`
	// Op is the MCP method of a failed call, e.g. "tools/call"
	// ([KindCallFailed]), or of a refused request of the server
	// ([KindServerRequestRefused]).
	Op string `json:"op,omitempty"`
	// Name is the tool or prompt name, or the resource URI, of a failed
	// call ([KindCallFailed]).
	Name string `json:"name,omitempty"`
	// Delivery says how far a failed call got: [DeliveryNotSent],
	// [DeliveryOutcomeUnknown] or [DeliveryAnswered] ([KindCallFailed]).
	Delivery string `json:"delivery,omitempty"`
	// Delay is the wait before a retry ([KindRetryScheduled]) or the length
	// of a rate-limit window ([KindRateLimitWindow]).
	Delay time.Duration `json:"-"`
	// SessionID is the MCP session id (Mcp-Session-Id) as a short hash made
	// by [HashSessionID], never the id itself ([KindSessionOpened],
	// [KindSessionEnded]). A [Redactor] enforces this.
	SessionID string `json:"session_id,omitempty"`
	// Connection is the supervisor's own id of one go-sdk client session:
	// "conn:" and 8 random hex digits, new for every session opened
	// ([KindSessionOpened], [KindSessionEnded]). A sessionless session (a
	// 2026-07-28 server, or a 2025-era server that issues no id) has no
	// SessionID; Connection tells its events apart from another's.
	Connection string `json:"connection,omitempty"`
	// Count is how many drops or refusals the session has had so far,
	// this one included ([KindStreamEventDropped], [KindResponseDropped],
	// [KindStdoutLineDropped], [KindServerRequestRefused]).
	Count int `json:"count,omitempty"`
	// Bound is the bound that caused a drop or refusal: the server's
	// requests already in flight ([KindResponseDropped],
	// [KindServerRequestRefused]).
	Bound int `json:"bound,omitempty"`
	// HTTPStatus and ContentType name the HTTP answer that declined the
	// push stream ([KindStreamDeclined]); ContentType is "" when the
	// answer had none.
	HTTPStatus  int    `json:"http_status,omitempty"`
	ContentType string `json:"content_type,omitempty"`
	// ExitCode is a stdio server's exit code, -1 when a signal ended it;
	// Signal is that signal's number (POSIX), 0 when it exited; Stop is
	// the step of the supervisor's stop before the exit ("stdin-closed",
	// "sigterm", "sigkill"), "" when it exited by itself
	// ([KindProcessExited]).
	ExitCode int    `json:"exit_code,omitempty"`
	Signal   int    `json:"signal,omitempty"`
	Stop     string `json:"stop,omitempty"`
	// Alive reports that the liveness request was answered
	// ([KindSessionVerified]).
	Alive bool `json:"alive,omitempty"`
	// RequestID is the JSON-RPC id of the request lost with its response
	// stream, ReissuedAs the id of its re-issue, "" when that was not sent
	// ([KindCallReissued]).
	RequestID  string `json:"request_id,omitempty"`
	ReissuedAs string `json:"reissued_as,omitempty"`
	// Detail is text for people; no decision rests on it. It holds what
	// is foreign or free: an error's text, a stdio server's stderr tail
	// ([KindProcessExited]), what was wrong with a dropped line or stream
	// event, a rule's explanation. Redact it before it leaves the process.
	Detail string `json:"detail,omitempty"`
	// Dropped is the number of events a [Subscription] dropped for a slow
	// reader just before this one; set only by [Subscription].
	Dropped uint64 `json:"dropped,omitempty"`
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
	Added   []string `json:"added,omitempty"`
	Removed []string `json:"removed,omitempty"`
	Changed []string `json:"changed,omitempty"`
	// Omitted is how many keys were left off Added, Removed and Changed
	// past [MaxNames] each.
	Omitted int `json:"omitted,omitempty"`
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

// BoundNames returns the first [MaxNames] of names, each cut by [CutName],
// and how many were left off. names is not modified; the result is names
// itself when it is within both bounds, else a new slice.
func BoundNames(names []string) (kept []string, omitted int) {
	omitted = max(0, len(names)-MaxNames)
	if omitted == 0 && !slices.ContainsFunc(names, func(n string) bool { return len(n) > MaxNameBytes }) {
		return names, 0
	}
	kept = make([]string, len(names)-omitted)
	for i := range kept {
		kept[i] = CutName(names[i])
	}
	return kept, omitted
}

// BoundChange returns the change of a list (its added, removed and changed
// keys) as an event carries it: each list through [BoundNames], and in
// Omitted how many were left off in all.
func BoundChange(added, removed, changed []string) (c ListChange) {
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

// IsZero is Empty: the JSON form omits an empty change (omitzero).
func (c *ListChange) IsZero() bool { return c.Empty() }

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
