package httpsession

import (
	"encoding/json"
	"log/slog"
	"maps"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/msgcheck"
)

// Header names of the MCP streamable HTTP transport.
const (
	HeaderSessionID       = "Mcp-Session-Id"
	HeaderProtocolVersion = "Mcp-Protocol-Version"
	headerLastEventID     = "Last-Event-ID"
)

// Defaults of [Config].
const (
	DefaultMaxErrorBody = 64 << 10
	DefaultMaxJSONBody  = 16 << 20
	DefaultMaxSSEEvent  = 16 << 20
	maxRequestScan      = 4 << 20
	maxIdentityBody     = 64 << 10
)

// Config configures a [Transport]. The zero value is ready to use; every
// callback runs on the goroutine of the request or stream it reports and
// must not block.
type Config struct {
	// Base carries the requests; nil means http.DefaultTransport.
	Base http.RoundTripper
	// Clock times exchanges, Retry-After dates and the stream's re-dial
	// backoff; nil means the real clock.
	Clock clockwork.Clock
	// Logger receives debug records of rewrites and stream attempts, and a
	// Warn record for an OAuthHandler's Authorize that failed; nil discards.
	Logger *slog.Logger
	// OnExchange is called after every exchange, local ones included.
	OnExchange func(Exchange)
	// OnStreamAttempt is called when an attempt of the standalone stream
	// ends (see [StreamAttempt]).
	OnStreamAttempt func(StreamAttempt)
	// OnStreamRestored is called when the standalone stream is back after
	// an ended or failed attempt and the re-dial carried no Last-Event-ID:
	// messages sent meanwhile may be lost (a list_changed among them), so
	// the caller should re-list what it caches (failure story S5). Not
	// called for the session's first GET.
	OnStreamRestored func()
	// OnStreamDeclined is called once the server declined the session's
	// push stream ([StreamAttempt.Declined]: the first GET or listen
	// answered 405, another 4xx or a non-stream answer): the caller should
	// poll what it caches.
	OnStreamDeclined func(StreamAttempt)
	// OnDroppedEvent is called for every standalone stream event not
	// handed to go-sdk (see [EventError]).
	OnDroppedEvent func(*EventError)
	// RequestTimeout, when positive, bounds every exchange but the
	// standalone stream, from the request until its body is closed, as
	// http.Client.Timeout would; [Open] and [Resume] take it from the host's
	// HTTPClient.Timeout. 0: none.
	RequestTimeout time.Duration
	// Jar gives the keeper's re-dials of the standalone stream their
	// cookies and takes those their answers set; [Open] and [Resume] take
	// the host HTTPClient's Jar.
	Jar http.CookieJar
	// MaxErrorBody bounds, in bytes on the wire and decoded, a non-2xx or
	// 3xx body and any body answering a notification or a response; a
	// longer one carries no JSON-RPC error (its status decides). 0 means
	// [DefaultMaxErrorBody] (64 KiB).
	MaxErrorBody int
	// MaxJSONBody bounds, in bytes on the wire and decoded, a 2xx
	// application/json answer to a request, buffered whole; a longer one
	// fails its request alone (protocol). 0 means [DefaultMaxJSONBody]
	// (16 MiB).
	MaxJSONBody int
	// MaxSSEEvent bounds one event of an answer's event stream, in bytes
	// decoded (and that plus 64 KiB on the wire since the last blank
	// line); a longer one fails its request alone (protocol). 0 means
	// [DefaultMaxSSEEvent] (16 MiB, go-sdk's mcp.DefaultMaxEventSize).
	MaxSSEEvent int
	// MaxListItems bounds the items of one page of a list, counted before
	// go-sdk decodes them; a page with more fails its request alone
	// (protocol). 0 means [msgcheck.DefaultMaxListItems] (10,000).
	MaxListItems int
	// MaxJSONValues bounds the JSON values (objects, arrays, and every
	// element or member after the first) of one message go-sdk is handed,
	// which it decodes at up to some 100 bytes a value; past it the request
	// fails alone, or the standalone stream's message is dropped
	// ([DropTooManyValues]). 0 means [msgcheck.DefaultMaxJSONValues]
	// (1,048,576).
	MaxJSONValues int
	// MaxMessages bounds the messages of a prompts/get result and of a
	// server's sampling/createMessage request (some 30 KiB decoded each);
	// past it the call fails alone, a request on the standalone stream is
	// dropped. 0 means [msgcheck.DefaultMaxMessages] (10,000).
	MaxMessages int
	// MaxContentBlocks bounds the content blocks of a tools/call or
	// prompts/get result (nested ones included), the contents of a
	// resources/read result and a sampling request's messages (some 500
	// bytes decoded each); past it the call fails alone. 0 means
	// [msgcheck.DefaultMaxContentBlocks] (10,000).
	MaxContentBlocks int
	// MaxInputRequestObjects bounds the JSON objects of a result's
	// inputRequests (2026-07-28 multi round-trip; up to some 64 KiB
	// decoded each); past it the call fails alone. 0 means
	// [msgcheck.DefaultMaxInputRequestObjects] (1,000).
	MaxInputRequestObjects int
	// MaxResponsesInFlight bounds the POSTs of go-sdk's responses to the
	// server's requests waiting for an answer at once; one past it is not
	// sent, go-sdk is answered 202 locally and the drop reported
	// ([OnDroppedResponse]). 0 means [DefaultMaxResponsesInFlight] (16).
	MaxResponsesInFlight int
	// ResponseTimeout bounds each such POST until its body is closed; Close
	// and Detach cut them too. 0 means [DefaultResponseTimeout] (30 s).
	ResponseTimeout time.Duration
	// OnDroppedResponse is called for every response dropped past
	// MaxResponsesInFlight.
	OnDroppedResponse func(*ResponseDroppedError)
	// Stream configures the standalone SSE stream keeper.
	Stream StreamConfig
	// OAuthHandler, when set, authorizes every request (Authorization:
	// Bearer); a 401, or a 403 with error="insufficient_scope" (RFC 6750
	// section 3.1), runs its Authorize once per credential and sends the
	// request once more, as go-sdk does. When Authorize fails the refused
	// answer is what the request gets; a token source that fails fails the
	// request with an error wrapping [classify.ErrCredential]. nil: the
	// host's client carries its credentials.
	OAuthHandler auth.OAuthHandler
	// OnCredential is told once of each access token of OAuthHandler and
	// each Authorization credential (scheme cut) Base sent, so a redactor
	// knows what a server may quote back.
	OnCredential func(token string)
	// FallbackAfterOutage lets go-sdk fall back to `initialize` after a
	// `server/discover` that met an outage ([DiscoverOutage]). Unset, that
	// fallback fails with a [*DiscoverOutageError]; a refusal of the era
	// always falls back.
	FallbackAfterOutage bool
	// Switch owns the standalone stream decision shared by one server's
	// sessions ([StreamSwitch]); nil means a private switch in [StreamOn]
	// mode.
	Switch *StreamSwitch
}

// Transport is the HTTP side of one go-sdk client session, under its
// mcp.Connection: it records every exchange, sends every request through
// the host's transport and the OAuth handler, keeps the standalone stream
// and can end a session without DELETE. Safe for concurrent use.
type Transport struct {
	base  http.RoundTripper
	clock clockwork.Clock
	cfg   Config // with defaults applied, Stream's and Logger's included

	mu        sync.Mutex
	sessionID string               // Mcp-Session-Id of the successful handshake answer
	refused   *StateError          // a handshake answer's invalid Mcp-Session-Id
	discover  *Exchange            // the record of the server/discover sent (era.go), nil before one
	detached  bool                 // DELETE answered locally: detached, or the session is gone
	handshook bool                 // a handshake succeeded
	declined  bool                 // the server declined the push stream (StreamDeclined)
	outage    *DiscoverOutageError // the refusal of go-sdk's fallback after a discover outage (era.go)

	idShift  atomic.Int64 // added to go-sdk's request ids on the wire (idshift.go); 0 on a fresh session
	answered answeredIDs  // requests whose whole answer came with the response
	drains   drains       // bounds the answer streams' drains on Close
	resps    *responses   // made at the first response (responses.go), under mu

	auth      *authorizer // wraps base: every request passes it
	sw        *StreamSwitch
	hostileMu sync.Mutex
	hostile   *HostilityTracker // this session's evidence for sw's rule; nil with the stream off
}

// NewTransport returns a Transport configured by cfg.
func NewTransport(cfg Config) *Transport {
	t := &Transport{base: cfg.Base, clock: cfg.Clock, cfg: cfg}
	t.cfg.Stream = cfg.Stream.withDefaults()
	if t.base == nil {
		t.base = http.DefaultTransport
	}
	if t.clock == nil {
		t.clock = clockwork.NewRealClock()
	}
	if t.cfg.Logger == nil {
		t.cfg.Logger = slog.New(slog.DiscardHandler)
	}
	t.cfg.MaxErrorBody = positiveOr(cfg.MaxErrorBody, DefaultMaxErrorBody)
	t.cfg.MaxJSONBody = positiveOr(cfg.MaxJSONBody, DefaultMaxJSONBody)
	t.cfg.MaxSSEEvent = positiveOr(cfg.MaxSSEEvent, DefaultMaxSSEEvent)
	t.cfg.MaxResponsesInFlight = positiveOr(cfg.MaxResponsesInFlight, DefaultMaxResponsesInFlight)
	t.cfg.ResponseTimeout = positiveOr(cfg.ResponseTimeout, DefaultResponseTimeout)
	t.auth = newAuthorizer(t.base, cfg.OAuthHandler, t.cfg.MaxErrorBody, cfg.Logger)
	t.auth.onCredential = cfg.OnCredential
	t.base = t.auth
	t.sw = cfg.Switch
	if t.sw == nil {
		t.sw = NewStreamSwitch(SwitchConfig{Mode: StreamOn, Clock: t.clock})
	}
	if t.sw.Mode() != StreamOff { // no attempt to judge with the stream off
		t.hostile = NewHostilityTracker(t.sw.cfg.Rule, t.cfg.Stream.Span)
	}
	l := t.decodeLimits().WithDefaults()
	t.cfg.MaxListItems, t.cfg.MaxJSONValues, t.cfg.MaxMessages, t.cfg.MaxContentBlocks = l.ListItems, l.JSONValues, l.Messages, l.ContentBlocks
	t.cfg.MaxInputRequestObjects = l.InputRequestObjects
	return t
}

// positiveOr is v when positive, d otherwise: a Config bound's default.
func positiveOr[T int | time.Duration](v, d T) T {
	if v > 0 {
		return v
	}
	return d
}

// decodeLimits are the Transport's bounds on what go-sdk decodes.
func (t *Transport) decodeLimits() msgcheck.Limits {
	return msgcheck.Limits{ListItems: t.cfg.MaxListItems, JSONValues: t.cfg.MaxJSONValues, Messages: t.cfg.MaxMessages,
		ContentBlocks: t.cfg.MaxContentBlocks, InputRequestObjects: t.cfg.MaxInputRequestObjects}
}

// check is the Transport's check of a decoded response (msgcheck).
func (t *Transport) check() msgcheck.Checker { return msgcheck.Checker{Logger: t.cfg.Logger} }

// checkedRequest is req, a call of method, as msgcheck reads it.
func checkedRequest(req *http.Request, method string) msgcheck.Request {
	return msgcheck.Request{Method: method, ProtocolVersion: req.Header.Get(HeaderProtocolVersion), Body: req.GetBody}
}

// observeHostility feeds one record to the session's hostility tracker and
// tells the switch when the rule fires; with the stream off it does nothing.
func (t *Transport) observeHostility(observe func(*HostilityTracker) bool) {
	if t.hostile == nil {
		return
	}
	t.hostileMu.Lock()
	fired := observe(t.hostile)
	_, why := t.hostile.Hostile()
	t.hostileMu.Unlock()
	if fired {
		t.sw.hostile(why)
	}
}

// Detach makes the Transport send no DELETE, so that closing the go-sdk
// session leaves the server-side session alive for a later resume. It
// detaches by itself once an answer shows the session is gone
// ([Exchange.SessionGone]).
func (t *Transport) Detach() {
	t.mu.Lock()
	t.detached = true
	t.mu.Unlock()
}

// HandshakeSessionID returns the Mcp-Session-Id of the successful handshake
// answer ("" for a sessionless server or before a handshake) and whether a
// handshake succeeded. An id sent on any other answer is never taken.
func (t *Transport) HandshakeSessionID() (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sessionID, t.handshook
}

// begin starts the record of req.
func (t *Transport) begin(req *http.Request) Exchange {
	return Exchange{
		Verb:                req.Method,
		SessionIDSent:       req.Header.Get(HeaderSessionID) != "",
		ProtocolVersionSent: req.Header.Get(HeaderProtocolVersion),
		Start:               t.clock.Now(),
	}
}

// fill records the answer's headers.
func (t *Transport) fill(x *Exchange, resp *http.Response, err error) {
	x.Duration = t.clock.Since(x.Start)
	if err != nil {
		x.TransportErr = err
		return
	}
	x.Status = resp.StatusCode
	x.ContentType = mediaType(resp.Header.Get("Content-Type"))
	if v := resp.Header.Get("Retry-After"); v != "" {
		x.RetryAfter = classify.ParseRetryAfter(v, t.clock.Now())
	}
	x.WWWAuthenticate = resp.Header.Get("Www-Authenticate")
}

// finish reports x to the call's slot and the observer. It returns x's
// record in the slot (nil when the request's context carries none).
func (t *Transport) finish(req *http.Request, x Exchange) *recorded {
	var rec *recorded
	if s, _ := req.Context().Value(slotKey{}).(*slot); s != nil {
		rec = s.add(x)
	}
	if x.Method == methodDiscover {
		t.noteDiscover(x) // era.go
	}
	if x.Verb == http.MethodPost && !x.Local {
		t.observeHostility(func(h *HostilityTracker) bool { return h.ObserveExchange(x) })
	}
	if t.cfg.OnExchange != nil {
		t.cfg.OnExchange(x)
	}
	return rec
}

// withAcceptEncoding returns a shallow copy of req (req is not changed)
// asking for gzip or no coding, so that the Transport decodes the answer
// itself, with bounds (see [acceptEncoding]).
func withAcceptEncoding(req *http.Request) *http.Request {
	if req.Header.Get("Accept-Encoding") != "" {
		return req
	}
	out := *req
	out.Header = maps.Clone(req.Header)
	if out.Header == nil {
		out.Header = make(http.Header, 1)
	}
	out.Header.Set("Accept-Encoding", acceptEncoding)
	return &out
}

// rawID returns a JSON-RPC id as raw JSON, "" for an absent or null id.
func rawID(raw json.RawMessage) string {
	if s := strings.TrimSpace(string(raw)); s != "null" {
		return s
	}
	return ""
}

// mediaType returns the lower-case media type without parameters.
func mediaType(ct string) string {
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	return strings.ToLower(strings.TrimSpace(ct))
}

// snippet returns the start of b, at most classify.MaxBodySnippet bytes.
func snippet(b []byte) string {
	if len(b) > classify.MaxBodySnippet {
		b = b[:classify.MaxBodySnippet]
	}
	return string(b)
}
