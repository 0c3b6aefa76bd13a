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

// Config configures a [Transport]. The zero value is ready to use.
type Config struct {
	// Base carries the requests; nil means http.DefaultTransport.
	Base http.RoundTripper
	// Clock times exchanges, Retry-After dates and the standalone stream's
	// re-dial backoff; nil means the real clock.
	Clock clockwork.Clock
	// Logger receives debug records of rewrites and stream attempts, and a
	// Warn record with the error of an OAuthHandler's Authorize that failed;
	// nil discards them.
	Logger *slog.Logger
	// OnExchange, when set, is called after every exchange (requests the
	// Transport answered locally included) from the goroutine that made the
	// request. It must not block.
	OnExchange func(Exchange)
	// OnStreamAttempt, when set, is called when an attempt of the standalone
	// SSE stream ends (see [StreamAttempt]). It must not block.
	OnStreamAttempt func(StreamAttempt)
	// OnStreamRestored, when set, is called when the standalone SSE stream
	// is back after an ended or failed attempt: a re-dial was answered with
	// a 200 text/event-stream, and the re-dial carried no Last-Event-ID (a
	// server that accepts one is trusted to replay what the stream missed).
	// Messages the server sent while no stream was connected may then be
	// lost: a go-sdk server without an EventStore drops them, a
	// `notifications/tools/list_changed` among them, so the caller should
	// re-list what it caches (DESIGN.md failure story S5). It is not called
	// for the session's first GET. It is called from the goroutine that
	// reads the stream, which waits for it: it must not block.
	OnStreamRestored func()
	// OnStreamDeclined, when set, is called once the server declined the
	// session's push stream ([StreamAttempt.Declined]: the first standalone
	// GET, or the first subscriptions/listen POST, answered 405, another 4xx
	// or a non-stream answer), with the attempt that was declined: no
	// list_changed can reach this session, so the caller should poll what
	// it caches. It is called from the goroutine that reads the stream: it
	// must not block.
	OnStreamDeclined func(StreamAttempt)
	// OnDroppedEvent, when set, is called for every event of the standalone
	// stream the keeper did not hand to go-sdk (see [EventError]), from the
	// goroutine that reads the stream. It must not block.
	OnDroppedEvent func(*EventError)
	// RequestTimeout, when positive, bounds every exchange but the
	// standalone stream, from the request until its body is closed, as
	// http.Client.Timeout would; [Open] and [Resume] take it from the host's
	// HTTPClient.Timeout and give go-sdk a client without one, so that the
	// host's Timeout never cuts the long-lived standalone stream. 0: none.
	RequestTimeout time.Duration
	// Jar, when set, gives the keeper's re-dials of the standalone stream
	// their cookies and takes the cookies their answers set; [Open] and
	// [Resume] take the host HTTPClient's Jar.
	Jar http.CookieJar
	// MaxErrorBody bounds, in bytes, what is read of a body that is not a
	// 2xx answer's JSON or event stream: a non-2xx or 3xx body of any
	// status, and any body answering a notification or a response. It is
	// read at most this far, on the wire and after decoding, for its
	// snippet and JSON-RPC error; a longer body carries no JSON-RPC error
	// (its status decides the verdict). 0 means [DefaultMaxErrorBody] (64 KiB).
	MaxErrorBody int
	// MaxJSONBody bounds a 2xx application/json answer to a request, in
	// bytes, on the wire and after decoding: it is buffered whole to check
	// it is the JSON-RPC response to its request, and a longer one is
	// refused for that request only (rewritten into a JSON-RPC error; the
	// verdict is protocol, the session lives), so a hostile server cannot
	// make the client buffer without bound. 0 means [DefaultMaxJSONBody]
	// (16 MiB).
	MaxJSONBody int
	// MaxSSEEvent bounds one event of a text/event-stream answer to a
	// request, in bytes after decoding, its lines and line ends included,
	// comment lines before its first field not (and that plus 64 KiB on
	// the wire since the last blank line, comments included): a longer
	// event fails its request only (protocol, the session lives).
	// 0 means [DefaultMaxSSEEvent] (16 MiB, go-sdk's own
	// mcp.DefaultMaxEventSize).
	MaxSSEEvent int
	// MaxListItems bounds the items of one page of a list (tools/list,
	// prompts/list, resources/list, resources/templates/list), counted in
	// the answer before go-sdk decodes them, each into a struct of its
	// own: a page with more is refused for that request only (rewritten
	// into a JSON-RPC error naming the bound; the verdict is protocol, the
	// session lives). The supervisor sets it to its Config.Limits.MaxItems, a
	// list's bound over all its pages. 0 means [msgcheck.DefaultMaxListItems]
	// (10,000).
	MaxListItems int
	// MaxJSONValues bounds the JSON values of one message go-sdk is handed
	// from an answer to a request (its response, and the server's requests
	// and notifications on the answer's event stream) or from the
	// standalone stream (dropped there, [DropTooManyValues]): every object and
	// array, and every element or member after the first of each. go-sdk
	// decodes a message into structs, maps and interfaces of some 100
	// bytes a value at worst (`[{},{}]` costs 50 times its bytes), so the
	// byte bounds alone let one 16 MiB answer cost some 600 MiB; a
	// message with more values fails its request only (rewritten into a
	// JSON-RPC error naming the bound; the verdict is protocol, the session
	// lives). 0 means [msgcheck.DefaultMaxJSONValues] (1,048,576: at most about
	// 100 MiB decoded).
	MaxJSONValues int
	// MaxMessages bounds the messages of a prompts/get result and of a
	// sampling/createMessage request of the server's, which go-sdk decodes
	// one by one at some 30 KiB allocated each (a 16 MiB prompts/get
	// answer allocated 10 GiB, seconds of CPU): past it the call fails
	// alone (protocol, the bound named), as a request of the server's on
	// the call's stream does; on the standalone stream the request is
	// dropped ([DropTooManyValues]). 0 means [msgcheck.DefaultMaxMessages] (10,000).
	MaxMessages int
	// MaxContentBlocks bounds the content blocks of a tools/call result
	// and of a prompts/get result's messages (nested blocks included: go-sdk
	// decodes a block's own "content" as blocks again, whatever its type)
	// and the contents of a resources/read result (`contents`), counted in
	// the answer before go-sdk decodes them, each into a struct of its own
	// and then a Content or ResourceContents (some 500 bytes a block: 8 MiB
	// of empty text blocks, within the value bound, allocated 158 MiB); a
	// sampling/createMessage request's messages are held to it too. Past
	// it the call fails alone
	// (rewritten into a JSON-RPC error naming the bound; the verdict is
	// protocol, the session lives). 0 means [msgcheck.DefaultMaxContentBlocks]
	// (10,000).
	MaxContentBlocks int
	// MaxInputRequestObjects bounds the JSON objects of a tools/call,
	// prompts/get or resources/read result's inputRequests (the 2026-07-28
	// multi round-trip), which go-sdk decodes whole, keys in any letter
	// case, a sampling request's messages at some 64 KiB allocated each
	// (9,997 of them in 150 KB allocated 628 MiB): past it the call fails
	// alone, as for MaxContentBlocks. 0 means
	// [msgcheck.DefaultMaxInputRequestObjects] (1,000).
	MaxInputRequestObjects int
	// MaxResponsesInFlight bounds how many POSTs of go-sdk's responses to
	// the server's requests (ping, roots/list, sampling/createMessage,
	// elicitation/create) wait for the server's answer at once; one past it
	// is not sent: go-sdk is answered 202 locally and the drop reported
	// ([OnDroppedResponse], a [*ResponseDroppedError]). 0 means
	// [DefaultMaxResponsesInFlight] (16).
	MaxResponsesInFlight int
	// ResponseTimeout bounds each POST of such a response, from the request
	// until its answer's body is closed (go-sdk sends them with a context
	// that never ends); the session's Close and Detach cut them too. 0 means
	// [DefaultResponseTimeout] (30 s).
	ResponseTimeout time.Duration
	// OnDroppedResponse, when set, is called for every response dropped
	// past MaxResponsesInFlight, from the goroutine that sent it. It must
	// not block.
	OnDroppedResponse func(*ResponseDroppedError)
	// Stream configures the standalone SSE stream keeper.
	Stream StreamConfig
	// OAuthHandler, when set, authorizes every request the Transport sends:
	// POSTs, the standalone stream and its re-dials, the resumption of a
	// call's stream and DELETE carry its token source's access token
	// (Authorization: Bearer), and a 401, or a 403 whose WWW-Authenticate
	// carries error="insufficient_scope" (RFC 6750 section 3.1), runs its
	// Authorize and sends the request once more, as go-sdk does for POSTs.
	// When Authorize fails, the refused answer is what the request gets
	// (classified unauthorized, its facts kept). A token source that fails
	// fails the request with an error wrapping [classify.ErrCredential].
	// Authorize runs once per credential per Transport, with the first
	// refused request's context: the requests refused with the same token
	// share it, and one refused with a token an Authorize has renewed since
	// is sent again with the new one. nil: the host's client carries its
	// credentials.
	OAuthHandler auth.OAuthHandler
	// OnCredential, when set, is told of each access token of OAuthHandler
	// the Transport sends, and of each Authorization credential (its scheme
	// cut) on a request as Base sent it (the host's RoundTripper may add
	// one), once for each new one, on the request's goroutine: a server
	// may quote the token in an answer's text (a JSON-RPC error message, a
	// 401 body), so a redactor must know it.
	OnCredential func(token string)
	// FallbackAfterOutage lets go-sdk fall back to `initialize` after a
	// `server/discover` that got no answer or an outage answer (408, 429, a
	// 5xx but 501; see [DiscoverOutage]). Unset, that fallback is failed
	// with a [*DiscoverOutageError], so a passing outage is retried, not
	// taken for a 2025-era server; a refusal of the era (any other answer)
	// always falls back, as go-sdk does.
	FallbackAfterOutage bool
	// Switch owns the standalone stream decision, shared by the sessions of
	// one server (see [StreamSwitch]); nil means a private switch in
	// [StreamOn] mode: dialed, never turned off. The keeper feeds the
	// switch's [HostilityRule] with this Transport's records.
	Switch *StreamSwitch
}

// Transport is the HTTP side of one go-sdk client session, under the
// session's own mcp.Connection (conn.go): it records every exchange, sends
// every request through the host's transport and the OAuth handler, keeps
// the standalone SSE stream (see [StreamConfig]) and can end a session
// without DELETE. It is no http.RoundTripper. All methods are safe for
// concurrent use.
type Transport struct {
	base  http.RoundTripper
	clock clockwork.Clock
	cfg   Config // with defaults applied, Stream's and Logger's included

	mu        sync.Mutex
	sessionID string      // Mcp-Session-Id of the successful handshake answer
	refused   *StateError // a handshake answer's invalid Mcp-Session-Id
	discover  *Exchange   // the record of the server/discover sent (era.go), nil before one
	detached  bool        // DELETE answered locally: detached, or the session is gone
	handshook bool        // a handshake succeeded
	declined  bool        // the server declined the push stream (StreamDeclined)
	// outage is the refusal of go-sdk's fallback initialize after a discover
	// outage (era.go), nil when none.
	outage *DiscoverOutageError

	idShift  atomic.Int64 // added to go-sdk's request ids on the wire (idshift.go); 0 on a fresh session
	answered answeredIDs  // requests whose whole answer came with the response
	drains   drains       // bounds the answer streams' drains on Close
	// resps bounds the POSTs of go-sdk's responses (responses.go); made at
	// the first one (see [Transport.responses]), under mu.
	resps *responses

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
	if t.cfg.MaxErrorBody <= 0 {
		t.cfg.MaxErrorBody = DefaultMaxErrorBody
	}
	if t.cfg.MaxJSONBody <= 0 {
		t.cfg.MaxJSONBody = DefaultMaxJSONBody
	}
	if t.cfg.MaxResponsesInFlight <= 0 {
		t.cfg.MaxResponsesInFlight = DefaultMaxResponsesInFlight
	}
	if t.cfg.ResponseTimeout <= 0 {
		t.cfg.ResponseTimeout = DefaultResponseTimeout
	}
	t.auth = newAuthorizer(t.base, cfg.OAuthHandler, t.cfg.MaxErrorBody, cfg.Logger)
	t.auth.onCredential = cfg.OnCredential
	t.base = t.auth
	t.sw = cfg.Switch
	if t.sw == nil {
		t.sw = NewStreamSwitch(SwitchConfig{Mode: StreamOn, Clock: t.clock})
	}
	if t.sw.Mode() != StreamOff {
		// With the stream off there is no attempt to judge, and no tracker
		// to hold per idle session.
		t.hostile = NewHostilityTracker(t.sw.cfg.Rule, t.cfg.Stream.Span)
	}
	if t.cfg.MaxSSEEvent <= 0 {
		t.cfg.MaxSSEEvent = DefaultMaxSSEEvent
	}
	l := t.decodeLimits().WithDefaults()
	t.cfg.MaxListItems, t.cfg.MaxJSONValues, t.cfg.MaxMessages, t.cfg.MaxContentBlocks = l.ListItems, l.JSONValues, l.Messages, l.ContentBlocks
	t.cfg.MaxInputRequestObjects = l.InputRequestObjects
	return t
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

// Detach makes the Transport answer DELETE requests locally (204), so that
// closing the go-sdk session afterwards leaves the server-side session alive
// for a later resume. The Transport detaches by itself once an answer shows
// the session is gone ([Exchange.SessionGone]): go-sdk sends no DELETE after
// a 404 (mcp.ErrSessionMissing) but does after a null-id -32000 4xx, which
// the server could only refuse.
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
		x.RetryAfter = t.retryAfter(v) // reads the clock: only when there is a date to read
	}
	// The canonical spelling: Get returns an already-canonical key as is,
	// where "WWW-Authenticate" would be canonicalized into a new string.
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

// withAcceptEncoding returns req asking for gzip or no coding, so that the
// Transport decodes the answer itself, with bounds (see [acceptEncoding]).
func withAcceptEncoding(req *http.Request) *http.Request {
	if req.Header.Get("Accept-Encoding") != "" {
		return req
	}
	// A shallow copy with a header map of its own (req is not changed):
	// Request.Clone would also copy the URL and every header value. The
	// request and the header's value share one allocation.
	out := new(encodedRequest)
	out.req = *req
	out.req.Header = maps.Clone(req.Header)
	if out.req.Header == nil {
		out.req.Header = make(http.Header, 1)
	}
	out.value[0] = acceptEncoding
	out.req.Header["Accept-Encoding"] = out.value[:]
	return &out.req
}

// encodedRequest is a request copied by [withAcceptEncoding] and the value
// of its Accept-Encoding header.
type encodedRequest struct {
	req   http.Request
	value [1]string
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
