package events

import (
	"slices"
	"time"
	"unicode/utf8"

	"github.com/mcpsup/mcpsup/classify"
)

// Delivery values of [Event.Delivery]: how far a failed call got (no server
// saw it; it may have reached the server and is never replayed, failure
// story S4; the server answered with an error).
const (
	DeliveryNotSent        = "not-sent"
	DeliveryOutcomeUnknown = "outcome-unknown"
	DeliveryAnswered       = "answered"
)

// List statuses of [ListOutcome.Status].
const (
	ListPresent  = "present"
	ListAbsent   = "absent"
	ListDegraded = "degraded"
	ListFailed   = "failed"
)

// Event is one fact about a supervised connection. Kind says which fields
// are meaningful (see the Kind constants); the others are zero and left out
// of the JSON form. From equals To for an internal transition. Its slices
// belong to the event once emitted: neither a sink nor the emitter changes
// them.
type Event struct {
	Kind Kind `json:"kind"`
	// Server names the supervised MCP server, as configured by the host.
	Server string `json:"server,omitempty"`
	// Seq numbers the events of one server from 1, without gaps.
	Seq     uint64  `json:"seq,omitempty"`
	From    State   `json:"from,omitempty"`
	To      State   `json:"to,omitempty"`
	Trigger Trigger `json:"trigger,omitempty"`
	// Guard names the guards of the row that chose the transition, joined
	// by "+".
	Guard string `json:"guard,omitempty"`
	// Verdict is the classified failure the trigger carried; zero if none.
	Verdict classify.Verdict `json:"-"`
	// Generation counts the go-sdk client sessions tried so far, failed
	// attempts included.
	Generation uint64 `json:"generation,omitempty"`
	// Attempt is the retry count: 0 after a success or a reconnect request.
	Attempt int    `json:"attempt,omitempty"`
	Reason  Reason `json:"reason,omitempty"`

	// Lists holds each list method's outcome, in listing order.
	Lists []ListOutcome `json:"-"`
	// Added, Removed and Changed name the tools that changed; each bounded
	// by [BoundNames].
	Added   []string `json:"added,omitempty"`
	Removed []string `json:"removed,omitempty"`
	Changed []string `json:"changed,omitempty"`
	// Omitted counts the names left off Added, Removed and Changed, or the
	// events of a kind not sent one by one (the hub's name-collision).
	Omitted int `json:"omitted,omitempty"`
	// Tools is the number of tools in the catalog now.
	Tools int `json:"tools,omitempty"`
	// Prompts (names), Resources (URIs) and ResourceTemplates (URI
	// templates) are the changes of those lists; nil when unchanged.
	Prompts           *ListChange `json:"prompts,omitzero"`
	Resources         *ListChange `json:"resources,omitzero"`
	ResourceTemplates *ListChange `json:"resource_templates,omitzero"`
	// Op is the MCP method of a call or refused request, e.g. "tools/call".
	Op string `json:"op,omitempty"`
	// Name is the tool or prompt name, or the resource URI, of a call.
	Name string `json:"name,omitempty"`
	// Delivery is how far a failed call got ([DeliveryNotSent] ...).
	Delivery string `json:"delivery,omitempty"`
	// Delay is the wait before a retry, or a rate-limit window's length.
	Delay time.Duration `json:"-"`
	// SessionID is the Mcp-Session-Id as [HashSessionID] makes it, never
	// the id itself (a [Redactor] enforces this).
	SessionID string `json:"session_id,omitempty"`
	// Connection is the supervisor's id of one go-sdk client session,
	// "conn:" and 8 random hex digits; it tells sessionless sessions apart.
	Connection string `json:"connection,omitempty"`
	// Count is the session's drops or refusals, this one included.
	Count int `json:"count,omitempty"`
	// Bound is the in-flight bound that caused a drop or refusal; of a
	// dropped event or line, the bound in bytes it broke.
	Bound int `json:"bound,omitempty"`
	// Why is why an event or line was dropped (session.DropReason, e.g.
	// "not-jsonrpc") or the standalone stream decision changed
	// (session.StreamReason, e.g. "get-hostile").
	Why string `json:"why,omitempty"`
	// Bytes is the size of a dropped event of the standalone stream (of an
	// oversized one, the bytes read).
	Bytes int `json:"bytes,omitempty"`
	// HTTPStatus and ContentType name the answer that declined a push
	// stream; HTTPStatus, RPCCode (JSON-RPC) and Op the answer that changed
	// the era.
	HTTPStatus  int    `json:"http_status,omitempty"`
	ContentType string `json:"content_type,omitempty"`
	RPCCode     int64  `json:"rpc_code,omitempty"`
	// EraFrom and EraTo are the protocol versions an era change leaves and
	// takes ("": neither, discover first); EraWhy is why
	// (session.EraReason, e.g. "discover-refused").
	EraFrom string `json:"era_from,omitempty"`
	EraTo   string `json:"era_to,omitempty"`
	EraWhy  string `json:"era_why,omitempty"`
	// ExitCode is a stdio server's exit code, -1 when a signal (Signal, its
	// POSIX number) ended it; Stop is the supervisor's stop step before the
	// exit ("stdin-closed", "sigterm", "sigkill"), "" if none.
	ExitCode int    `json:"exit_code,omitempty"`
	Signal   int    `json:"signal,omitempty"`
	Stop     string `json:"stop,omitempty"`
	// Alive reports that the liveness request was answered.
	Alive bool `json:"alive,omitempty"`
	// RequestID is the JSON-RPC id lost with its response stream,
	// ReissuedAs its re-issue's, "" when that was not sent; of a
	// stdout-line-dropped, the id (JSON, at most 64 characters) a response
	// answered that no request carried.
	RequestID  string `json:"request_id,omitempty"`
	ReissuedAs string `json:"reissued_as,omitempty"`
	// Token is the fencing token of a lease (the hub's lease-acquired).
	Token uint64 `json:"token,omitempty"`
	// Detail is free text for people (an error's text, a stderr tail); no
	// decision rests on it. Redact it before it leaves the process.
	Detail string `json:"detail,omitempty"`
	// Dropped counts the events a [Subscription] dropped just before this.
	Dropped uint64 `json:"dropped,omitempty"`
	// Time is the time the caller supplied with the trigger (the machine
	// never reads a clock); zero when none. Last: the JSON form writes it
	// after the other tagged fields.
	Time time.Time `json:"time,omitzero"`
}

// ListOutcome is how one list method fared in a discovery.
type ListOutcome struct {
	// List is "tools", "resources", "prompts" or "resource-templates".
	List string `json:"list"`
	// Status is [ListPresent], [ListAbsent] (not implemented, e.g. JSON-RPC
	// -32601), [ListDegraded] (listed with a Warning, e.g. pagination
	// capped) or [ListFailed].
	Status  string           `json:"status"`
	Items   int              `json:"items,omitempty"`
	Verdict classify.Verdict `json:"-"` // behind an absent or failed list
	Warning string           `json:"warning,omitempty"`
}

// ListChange is the change of one catalog list between two published
// catalogs: the keys that appeared, disappeared or changed definition, each
// sorted and bounded by [BoundNames]; Omitted counts the keys left off.
type ListChange struct {
	Added   []string `json:"added,omitempty"`
	Removed []string `json:"removed,omitempty"`
	Changed []string `json:"changed,omitempty"`
	Omitted int      `json:"omitted,omitempty"`
}

// The bounds of the names an event carries: a server chooses its names and
// how many, and one catalog-changed event must stay a line [ReadJSONLines]
// reads (twelve lists of MaxNames names of MaxNameBytes, each byte a six-byte
// escape at worst, stay under half of [MaxLineBytes]).
const (
	// MaxNames is the most names in one name list; the rest are counted in
	// Omitted.
	MaxNames = 32
	// MaxNameBytes bounds one name; a longer one is cut by [CutName].
	MaxNameBytes = 256
)

// BoundNames returns the first [MaxNames] of names, each cut by [CutName],
// and how many were left off; names itself when within both bounds.
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

// BoundChange returns a list's change as an event carries it: each list
// through [BoundNames], Omitted the sum left off.
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
	return cut(n, MaxNameBytes-len("…"), "…", false)
}

// cut keeps n bytes of s, cut at a rune start, and marks the cut with mark:
// its start, or with keepEnd its end.
func cut(s string, n int, mark string, keepEnd bool) string {
	if len(s) <= n {
		return s
	}
	if keepEnd {
		i := len(s) - n
		for i < len(s) && !utf8.RuneStart(s[i]) {
			i++
		}
		return mark + s[i:]
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + mark
}

// Empty reports whether nothing changed; a nil ListChange is empty.
func (c *ListChange) Empty() bool {
	return c == nil || len(c.Added) == 0 && len(c.Removed) == 0 && len(c.Changed) == 0
}

// IsZero is Empty: the JSON form omits an empty change (omitzero).
func (c *ListChange) IsZero() bool { return c.Empty() }

// Sink receives events. A supervisor calls Emit once per event, in order,
// one at a time, from a goroutine of its own: Emit may call back into the
// supervisor. A Sink used by several supervisors must be safe for
// concurrent use.
type Sink interface {
	Emit(Event)
}

// SinkFunc adapts a function to a [Sink]; as safe for concurrent use as it.
type SinkFunc func(Event)

// Emit calls f(e).
func (f SinkFunc) Emit(e Event) { f(e) }
