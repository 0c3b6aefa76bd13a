package soak_test

import (
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/mcpsup/mcpsup/mcptest"
)

// kind is one fault the soak injects.
type kind int

const (
	k500 kind = iota
	k502
	k503
	k429
	k403HTML
	k400Plain
	k413
	k404Session
	k404NoSession
	kNullID400
	kReset
	kLatency
	kGETHostile
	kIdleCut
	kStaleNullID // the server answers an unknown session 400 null-id -32000
	kStaleNoID   // ... 400 -32000 without id
	kStale500    // ... 500
	kExpireOne   // ExpireSession of one known session
	kExpireAll   // ExpireAll
	kRestart     // Restart
	numKinds
)

var kindNames = [numKinds]string{
	k500: "500", k502: "502", k503: "503", k429: "429+retry-after", k403HTML: "403-html",
	k400Plain: "400-plain", k413: "413", k404Session: "404-session", k404NoSession: "404-no-session",
	kNullID400: "400-null-id", kReset: "reset", kLatency: "latency", kGETHostile: "get-hostile",
	kIdleCut: "idle-cut", kStaleNullID: "stale-null-id", kStaleNoID: "stale-no-id", kStale500: "stale-500",
	kExpireOne: "expire-session", kExpireAll: "expire-all", kRestart: "restart",
}

func (k kind) String() string { return kindNames[k] }

// ruleKinds are the kinds installed as gateway rules (the rest are actions
// on the server).
var ruleKinds = []kind{k500, k502, k503, k429, k403HTML, k400Plain, k413, k404Session, k404NoSession,
	kNullID400, kReset, kLatency, kGETHostile, kIdleCut, kStaleNullID, kStaleNoID, kStale500}

// statusKind reports a plain status answer, which keeps the session on
// tools/call (S4).
func statusKind(k kind) bool {
	switch k {
	case k500, k502, k503, k429, k403HTML, k400Plain, k413:
		return true
	}
	return false
}

// target is what a rule's match selects.
type target int

const (
	tToolsCall target = iota
	tToolsList
	tInitialize
	tAnyPOST
	tGET
	tUnknownSession
)

var targetNames = []string{"tools/call", "tools/list", "initialize", "POST", "GET", "unknown-session"}

func (t target) String() string { return targetNames[t] }

// targetsOf lists the targets a kind is aimed at; repeats weigh them.
func targetsOf(k kind) []target {
	switch {
	case statusKind(k):
		return []target{tToolsCall, tToolsCall, tToolsCall, tToolsCall, tToolsList, tInitialize, tAnyPOST, tGET}
	}
	switch k {
	case k404Session:
		return []target{tToolsCall, tToolsCall, tToolsCall, tToolsList, tAnyPOST, tGET}
	case k404NoSession:
		return []target{tInitialize, tAnyPOST}
	case kNullID400:
		return []target{tToolsCall, tToolsCall, tToolsCall, tToolsList, tAnyPOST}
	case kReset, kLatency:
		return []target{tToolsCall, tToolsCall, tToolsCall, tToolsList, tInitialize, tAnyPOST, tGET}
	case kGETHostile, kIdleCut:
		return []target{tGET}
	}
	return []target{tUnknownSession}
}

// fault is one rule the soak installed.
type fault struct {
	kind   kind
	target target
}

// endsSession reports whether a request this fault acts on can end a
// session: the accounting of the session bound (see the package doc).
func (f fault) endsSession() bool {
	switch f.kind {
	case k404Session, kNullID400, kReset:
		return true
	}
	return statusKind(f.kind) && (f.target == tToolsList || f.target == tAnyPOST)
}

// Bounds of the timed faults. maxLatency stays well below the shortest
// call deadline and the discovery and probe timeouts, so latency alone
// never fails a call or a discovery.
const (
	minLatency = 10 * time.Millisecond
	maxLatency = 300 * time.Millisecond
	minSilence = 100 * time.Millisecond
	maxSilence = 600 * time.Millisecond
)

func between(rng *rand.Rand, lo, hi time.Duration) time.Duration {
	return lo + time.Duration(rng.Int64N(int64(hi-lo)+1))
}

// rule builds the gateway rule of f. On a sessionless 2026-07-28 server
// the handshake target is server/discover and the stream target the
// subscriptions/listen POST: the same faults on that era's counterparts.
func (f fault) rule(rng *rand.Rand, sessionless bool) mcptest.Rule {
	m := mcptest.Match{Occurrence: occurrence(rng)}
	switch f.target {
	case tToolsCall:
		m.Verb, m.Method = http.MethodPost, "tools/call"
	case tToolsList:
		m.Verb, m.Method = http.MethodPost, "tools/list"
	case tInitialize:
		m.Verb, m.Method = http.MethodPost, "initialize"
		if sessionless {
			m.Method = "server/discover"
		}
	case tAnyPOST:
		m.Verb = http.MethodPost
	case tGET:
		m.Verb = http.MethodGet
		if sessionless {
			m.Verb, m.Method = http.MethodPost, mcptest.ListenMethod
		}
	case tUnknownSession:
		m.Session = mcptest.UnknownSession
		m.Occurrence = mcptest.Every()
	}
	switch f.kind {
	case k404Session, kNullID400:
		m.Session = mcptest.WithSession
	case k404NoSession:
		m.Session = mcptest.WithoutSession
	}
	plain := func(status int) mcptest.Action { return mcptest.PlainText(status, http.StatusText(status)) }
	var a mcptest.Action
	switch f.kind {
	case k500:
		a = plain(http.StatusInternalServerError)
	case k502:
		a = mcptest.HTML(http.StatusBadGateway, "<html><body>502 Bad Gateway</body></html>")
	case k503:
		a = mcptest.Respond(http.StatusServiceUnavailable, http.Header{
			"Content-Type": {"text/plain; charset=utf-8"},
			"Retry-After":  {"1"},
		}, []byte(http.StatusText(http.StatusServiceUnavailable)))
	case k429:
		a = mcptest.ToolCallRateLimited(time.Second).Action
	case k403HTML:
		a = mcptest.HTML(http.StatusForbidden, mcptest.ForbiddenPage)
	case k400Plain:
		a = plain(http.StatusBadRequest)
	case k413:
		a = plain(http.StatusRequestEntityTooLarge)
	case k404Session, k404NoSession:
		a = plain(http.StatusNotFound)
	case kNullID400:
		a = mcptest.JSONRPCError(http.StatusBadRequest, mcptest.NullID, mcptest.CodeServerError, mcptest.StaleSessionMessage)
	case kReset:
		a = mcptest.Reset()
	case kLatency:
		a = mcptest.Delay(between(rng, minLatency, maxLatency))
	case kGETHostile:
		a = mcptest.StreamThenClose()
	case kIdleCut:
		a = mcptest.CutAfterSilence(between(rng, minSilence, maxSilence))
	case kStaleNullID:
		a = mcptest.StaleSessionNullID().Action
	case kStaleNoID:
		a = mcptest.StaleSessionNoID().Action
	case kStale500:
		a = mcptest.StaleSession500().Action
	}
	return mcptest.Rule{Name: f.kind.String() + " on " + f.target.String(), Match: m, Action: a}
}

// occurrence picks which matching requests a rule acts on.
func occurrence(rng *rand.Rand) mcptest.Occurrence {
	switch p := rng.IntN(10); {
	case p < 5:
		return mcptest.Every()
	case p < 7:
		return mcptest.First()
	case p < 9:
		return mcptest.FirstN(1 + rng.IntN(5))
	default:
		return mcptest.Nth(2 + rng.IntN(3))
	}
}
