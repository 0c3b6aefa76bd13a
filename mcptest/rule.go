package mcptest

import "net/http"

// RuleID names a rule added to a [Gateway]. The zero RuleID names no rule.
type RuleID uint64

// Rule is a [Match] and the [Action] taken on the requests it selects.
type Rule struct {
	// Name is an optional label for people reading a test.
	Name string
	// Match selects requests.
	Match Match
	// Action is what the gateway does with a selected request; nil passes
	// the request to the server (like [Pass]).
	Action Action
}

// SessionMatch selects requests by the Mcp-Session-Id header they carry.
type SessionMatch int

const (
	// AnySession matches every request (the zero value).
	AnySession SessionMatch = iota
	// WithSession matches requests that carry an Mcp-Session-Id header.
	WithSession
	// WithoutSession matches requests without an Mcp-Session-Id header.
	WithoutSession
	// UnknownSession matches requests carrying an Mcp-Session-Id that the
	// server does not know (expired, or issued before a restart). It needs
	// [GatewayOptions.KnownSession]; without it, it never matches. A [Server]
	// fixture sets it.
	UnknownSession
)

// Match selects requests. The zero Match selects every request. Matching
// never looks at the JSON-RPC id: ids shift with handshakes and concurrency.
type Match struct {
	// Verb is the HTTP method ("GET", "POST", "DELETE"); "" matches any.
	Verb string
	// Method is the JSON-RPC method of a POST ("tools/call",
	// "resources/templates/list" ...); "" matches any. A non-empty Method
	// never matches a request without a JSON-RPC body (GET, DELETE).
	Method string
	// Response, when set, selects only POSTs of a JSON-RPC response (an id
	// and no method: the client's answer to a request of the server's).
	Response bool
	// Session selects by the Mcp-Session-Id header; the zero value matches
	// any.
	Session SessionMatch
	// Header selects by one request header (a missing or wrong
	// credential, say); the zero value matches any.
	Header HeaderMatch
	// Occurrence selects which of the requests matching Verb, Method,
	// Session and Header the rule acts on; the zero value is [Every].
	Occurrence Occurrence
}

// HeaderMatch selects requests by one header, compared whole and
// case-sensitively (header names are canonicalized). The zero value
// (Name "") matches every request.
type HeaderMatch struct {
	// Name is the header, e.g. "Authorization".
	Name string
	// Value is what the header must be: a request whose header is absent
	// or different does not match, unless Not is set.
	Value string
	// Not inverts the match: the request matches when the header is absent
	// or not Value, as a token-checking gateway refuses every request
	// without the current token:
	//
	//	Match{Header: HeaderMatch{Name: "Authorization", Value: "Bearer t1", Not: true}}
	Not bool
}

// matches reports whether h satisfies the header condition.
func (m HeaderMatch) matches(h http.Header) bool {
	if m.Name == "" {
		return true
	}
	vals := h.Values(m.Name)
	equal := len(vals) == 1 && vals[0] == m.Value
	return equal != m.Not
}

type occurrenceKind int

const (
	occEvery occurrenceKind = iota
	occNth
	occFirstN
	occFrom
)

// Occurrence selects, among the requests that match a rule's verb, method
// and session conditions, the ones it acts on. A rule counts those
// requests from 1, from when it was added or replaced, whether or not an
// earlier rule took them.
type Occurrence struct {
	kind occurrenceKind
	n    int
}

// Every selects every matching request (the zero Occurrence).
func Every() Occurrence { return Occurrence{} }

// First selects only the first matching request.
func First() Occurrence { return Nth(1) }

// Nth selects only the nth matching request (1-based). n < 1 selects none.
func Nth(n int) Occurrence { return Occurrence{kind: occNth, n: n} }

// FirstN selects the first n matching requests. n < 1 selects none.
func FirstN(n int) Occurrence { return Occurrence{kind: occFirstN, n: n} }

// From selects the nth matching request and every one after it (1-based;
// n <= 1 is the same as [Every]).
func From(n int) Occurrence { return Occurrence{kind: occFrom, n: n} }

// selects reports whether the count-th matching request (1-based) is
// selected.
func (o Occurrence) selects(count int) bool {
	switch o.kind {
	case occNth:
		return count == o.n
	case occFirstN:
		return count <= o.n
	case occFrom:
		return count >= o.n
	default:
		return true
	}
}

// installedRule is a rule in a gateway with its matching counter.
type installedRule struct {
	id    RuleID
	rule  Rule
	seen  int // requests matching the conditions so far
	fired int // requests the rule acted on
}
