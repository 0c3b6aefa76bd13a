package httpsession

import (
	"cmp"
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/msgcheck"
)

// Header names of the MCP streamable HTTP transport.
const (
	HeaderSessionID       = "Mcp-Session-Id"
	HeaderProtocolVersion = "Mcp-Protocol-Version"
	headerLastEventID     = "Last-Event-ID"
)

// Defaults of [Config], in bytes.
const (
	DefaultMaxErrorBody = 64 << 10
	DefaultMaxJSONBody  = 16 << 20
	DefaultMaxSSEEvent  = 16 << 20
)

// Config configures the HTTP side of a session ([Options.Wire]): it records
// every exchange, sends every request through the host's transport and the
// OAuth handler, and keeps the standalone stream. The zero value is ready
// to use; every callback runs on the goroutine of the request or stream it
// reports and must not block.
type Config struct {
	// Base carries the requests; nil means http.DefaultTransport.
	Base http.RoundTripper
	// Clock times exchanges, Retry-After dates and the stream's re-dial
	// backoff; nil means the real clock.
	Clock clockwork.Clock
	// Logger receives debug records and a Warn for a failed OAuth
	// Authorize; nil discards.
	Logger *slog.Logger
	// OnExchange is called after every exchange, local ones included.
	OnExchange func(Exchange)
	// OnStreamAttempt is called when an attempt of the standalone stream
	// ends (see [StreamAttempt]).
	OnStreamAttempt func(StreamAttempt)
	// RequestTimeout, when positive, bounds every exchange but the
	// standalone stream until its body is closed, as http.Client.Timeout
	// does; [Open] takes the host HTTPClient's. 0: none.
	RequestTimeout time.Duration
	// Jar gives the stream's re-dials their cookies and keeps those set;
	// [Open] takes the host HTTPClient's.
	Jar http.CookieJar
	// MaxErrorBody bounds, in bytes on the wire and decoded, a non-2xx body
	// and any body answering a notification or a response; a longer one
	// carries no JSON-RPC error. 0: [DefaultMaxErrorBody] (64 KiB).
	MaxErrorBody int
	// MaxJSONBody bounds, in bytes on the wire and decoded, a 2xx
	// application/json answer; a longer one fails its request alone. 0:
	// [DefaultMaxJSONBody] (16 MiB).
	MaxJSONBody int
	// MaxSSEEvent bounds one event of an answer's event stream, in bytes
	// decoded (plus 64 KiB on the wire); a longer one fails its request
	// alone. 0: [DefaultMaxSSEEvent] (16 MiB, go-sdk's mcp.DefaultMaxEventSize).
	MaxSSEEvent int
	// MaxListItems, MaxJSONValues, MaxMessages, MaxContentBlocks and
	// MaxInputRequestObjects bound what go-sdk decodes of one message
	// (msgcheck.Limits: ListItems, JSONValues, Messages, ContentBlocks,
	// InputRequestObjects, and their defaults). Past one a call fails
	// alone; a standalone stream message is dropped ([session.DropTooManyValues]).
	MaxListItems           int
	MaxJSONValues          int
	MaxMessages            int
	MaxContentBlocks       int
	MaxInputRequestObjects int
	// MaxResponsesInFlight bounds the POSTs of go-sdk's responses to the
	// server's requests awaiting an answer; one past it is answered 202
	// locally and reported (session.ResponseDropped). 0:
	// [DefaultMaxResponsesInFlight] (16).
	MaxResponsesInFlight int
	// ResponseTimeout bounds each such POST until its body is closed. 0:
	// [DefaultResponseTimeout] (30 s).
	ResponseTimeout time.Duration
	// Stream configures the standalone SSE stream keeper.
	Stream StreamConfig
	// OAuthHandler, when set, authorizes every request as
	// [oauthcarrier.Transport] says (Bearer; Authorize once per refused
	// credential; [classify.ErrCredential]). nil: the host's client does.
	OAuthHandler auth.OAuthHandler
	// OnCredential is told once of each credential sent (OAuth token, or
	// Base's Authorization without scheme), so a redactor knows it.
	OnCredential func(token string)
	// FallbackAfterOutage lets go-sdk fall back to `initialize` after a
	// `server/discover` outage ([DiscoverOutage]); unset, the fallback
	// fails with a [*DiscoverOutageError].
	FallbackAfterOutage bool
	// Switch owns the standalone stream decision shared by one server's
	// sessions; nil means a private switch of [Options.Stream]'s mode.
	Switch *StreamSwitch

	limits msgcheck.Limits // what go-sdk decodes, set by withDefaults
}

// withDefaults returns c with each default in place of a zero field, and
// hc's (nil: none) Transport, Timeout and Jar where c sets none.
func (c Config) withDefaults(hc *http.Client) Config {
	if hc != nil {
		c.Base = cmp.Or(hc.Transport, c.Base)
		c.RequestTimeout = cmp.Or(max(c.RequestTimeout, 0), hc.Timeout)
		c.Jar = cmp.Or(c.Jar, hc.Jar)
	}
	c.Base = cmp.Or[http.RoundTripper](c.Base, http.DefaultTransport)
	c.Clock = cmp.Or(c.Clock, clockwork.NewRealClock())
	c.Logger = cmp.Or(c.Logger, slog.New(slog.DiscardHandler))
	c.Stream = c.Stream.withDefaults()
	c.MaxErrorBody = cmp.Or(max(c.MaxErrorBody, 0), DefaultMaxErrorBody)
	c.MaxJSONBody = cmp.Or(max(c.MaxJSONBody, 0), DefaultMaxJSONBody)
	c.MaxSSEEvent = cmp.Or(max(c.MaxSSEEvent, 0), DefaultMaxSSEEvent)
	c.MaxResponsesInFlight = cmp.Or(max(c.MaxResponsesInFlight, 0), DefaultMaxResponsesInFlight)
	c.ResponseTimeout = cmp.Or(max(c.ResponseTimeout, 0), DefaultResponseTimeout)
	c.limits = msgcheck.Limits{ListItems: c.MaxListItems, JSONValues: c.MaxJSONValues, Messages: c.MaxMessages,
		ContentBlocks: c.MaxContentBlocks, InputRequestObjects: c.MaxInputRequestObjects}.WithDefaults()
	return c
}

// checkResponse is msgcheck's problem with r, the response to req, a call
// of method; "" when none.
func (c *conn) checkResponse(req *http.Request, method string, r *jsonrpc.Response) string {
	problem, _ := msgcheck.Checker{Logger: c.cfg.Logger}.Response(
		msgcheck.Request{Method: method, ProtocolVersion: req.Header.Get(HeaderProtocolVersion), Body: req.GetBody}, r)
	return problem
}

// observeHostility feeds one record to the session's hostility tracker and
// tells the switch when the rule fires.
func (c *conn) observeHostility(observe func(*HostilityTracker) bool) {
	if c.hostile == nil {
		return
	}
	c.hostileMu.Lock()
	fired := observe(c.hostile)
	_, why := c.hostile.Hostile()
	c.hostileMu.Unlock()
	if fired {
		c.cfg.Logger.Info("mcpsup/httpsession: standalone stream hostility rule fired", "why", why)
		c.cfg.Switch.hostile()
	}
}

// detach makes Close send no DELETE: the server-side session stays for a
// later resume, or is gone ([Exchange.SessionGone]).
func (c *conn) detach() {
	c.mu.Lock()
	c.detached = true
	c.mu.Unlock()
}

func (c *conn) begin(req *http.Request) Exchange {
	return Exchange{Verb: req.Method, SessionIDSent: req.Header.Get(HeaderSessionID) != "",
		ProtocolVersionSent: req.Header.Get(HeaderProtocolVersion), Start: c.cfg.Clock.Now()}
}

// fill records the answer's headers, or err.
func (c *conn) fill(x *Exchange, resp *http.Response, err error) {
	x.Duration = c.cfg.Clock.Since(x.Start)
	if err != nil {
		x.TransportErr = err
		return
	}
	x.Status = resp.StatusCode
	x.ContentType = mediaType(resp.Header.Get("Content-Type"))
	if v := resp.Header.Get("Retry-After"); v != "" {
		x.RetryAfter = classify.ParseRetryAfter(v, c.cfg.Clock.Now())
	}
	x.WWWAuthenticate = strings.Join(resp.Header.Values("Www-Authenticate"), ", ") // every field line: one list (RFC 9110 section 5.3)
}

// finish reports x to the slot of ctx, the request's, and the observer. It
// returns the slot (nil when ctx carries none) and x's number in it.
func (c *conn) finish(ctx context.Context, x Exchange) (s *Exchanges, n int) {
	if s, _ = ctx.Value(slotKey{}).(*Exchanges); s != nil {
		n = s.add(x)
	}
	if x.Method == methodDiscover && !x.Local {
		c.mu.Lock()
		c.discover = &x
		c.mu.Unlock()
	}
	if x.Verb == http.MethodPost && !x.Local {
		c.observeHostility(func(h *HostilityTracker) bool { return h.ObserveExchange(x) })
	}
	if c.cfg.OnExchange != nil {
		c.cfg.OnExchange(x)
	}
	if c.on.exchange != nil {
		c.on.exchange(x)
	}
	return s, n
}

func mediaType(ct string) string {
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	return strings.ToLower(strings.TrimSpace(ct))
}

func snippet(b []byte) string {
	if len(b) > classify.MaxBodySnippet {
		b = b[:classify.MaxBodySnippet]
	}
	return string(b)
}
