package httpsession

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/httpsession/oauthcarrier"
	"github.com/mcpsup/mcpsup/httpsession/sse"
	"github.com/mcpsup/mcpsup/msgcheck"
	"github.com/mcpsup/mcpsup/session"
)

// StreamConfig configures the keeper of the standalone SSE stream (the 2025
// GET, the 2026-07-28 subscriptions/listen; decision records 0011, 0012):
// it re-dials at once after an attempt that lived Span, else on the backoff
// (at least the SSE retry field up to MaxBackoff, at least a 429/503
// Retry-After). The zero value selects the defaults.
type StreamConfig struct {
	// Span is how long an attempt must live for the next re-dial to follow
	// at once and, without a message, not to fail at once. Default 2s.
	Span time.Duration
	// InitialBackoff doubles up to MaxBackoff on Config.Clock.
	// Defaults 1s and 30s.
	InitialBackoff time.Duration
	MaxBackoff     time.Duration
	// MaxEventBytes bounds one SSE event, line ends included; a larger one
	// is dropped ([session.DropOversized]) and ends the attempt. Default 1 MiB.
	MaxEventBytes int
}

func (c StreamConfig) withDefaults() StreamConfig {
	c.Span = cmp.Or(max(c.Span, 0), 2*time.Second)
	c.InitialBackoff = cmp.Or(max(c.InitialBackoff, 0), time.Second)
	c.MaxBackoff = max(cmp.Or(max(c.MaxBackoff, 0), 30*time.Second), c.InitialBackoff)
	c.MaxEventBytes = cmp.Or(max(c.MaxEventBytes, 0), 1<<20)
	return c
}

// StreamEnd says how a standalone stream attempt ended.
type StreamEnd string

// How an attempt ends.
const (
	EndNoAnswer  StreamEnd = "no-answer"  // the request got no HTTP answer
	EndNotStream StreamEnd = "not-stream" // the answer was not a 200 text/event-stream
	EndEOF       StreamEnd = "eof"        // the server ended the stream
	EndError     StreamEnd = "error"      // reading the stream failed
	EndClosed    StreamEnd = "closed"     // the client closed the stream (session closed)
	EndGarbage   StreamEnd = "garbage"    // an oversized event, or maxDroppedRun drops in a row
)

// StreamAttempt records one attempt of the standalone stream.
type StreamAttempt struct {
	Seq         int    // numbers the attempts of one stream from 1
	Status      int    // 0 when no answer came
	ContentType string // the answer's media type
	End         StreamEnd
	Err         error // the error behind EndNoAnswer and EndError
	// Bytes read from the server's stream, the whole SSE Events in them,
	// the Messages handed to go-sdk (a SEP-1699 priming event is none; nor
	// is a listen's acknowledgement) and the events Dropped (session.EventDropped).
	Bytes                     int64
	Events, Messages, Dropped int
	Retry                     time.Duration // the stream's SSE retry field, 0 when none
	RetryAfter                time.Duration // a 429/503 Retry-After (RFC 9110 section 10.2.3), at most classify.MaxRetryAfter
	LastEventID               string        // the Last-Event-ID sent, "" when none
	SessionGone               bool          // the answer says the session is over
	Declined                  bool          // the first attempt answered 405, another 4xx but 401/408/429, or not a stream
	Unauthorized              bool          // 401, or 403 insufficient_scope: held until a request gets a 2xx
	ReplayRefused             bool          // a 4xx (not 401/404/408/429, not gone) to a Last-Event-ID: re-dialed at once without it
	Acknowledged              bool          // a listen's stream carried notifications/subscriptions/acknowledged
	Start                     time.Time     // on Config.Clock
	Duration                  time.Duration
}

// FailedAtOnce reports an attempt that ended within span with no message,
// not closed by the client, gone, unauthorized or an acknowledged listen
// (decision record 0012).
func (a StreamAttempt) FailedAtOnce(span time.Duration) bool {
	return a.End != EndClosed && !a.SessionGone && !a.Unauthorized && a.Messages == 0 && !a.Acknowledged && a.Duration < span
}

// Outage reports an attempt that shows the server unavailable for now: no
// HTTP answer, or 408, 429 or a 5xx but 501 (RFC 9110 section 15.6.2).
func (a StreamAttempt) Outage() bool {
	return a.End == EndNoAnswer || (a.End == EndNotStream && outageStatus(a.Status))
}

func outageStatus(s int) bool {
	return s == http.StatusRequestTimeout || s == http.StatusTooManyRequests ||
		(s >= 500 && s <= 599 && s != http.StatusNotImplemented)
}

const maxDroppedRun = 16 // events in a row an attempt may drop before it ends as garbage

var errGarbage = errors.New("mcpsup/httpsession: standalone stream refused: too many dropped events in a row")

// streamBody is the keeper of one standalone stream: the [sseOwner] of an
// [sseLoop] the conn reads (conn.keep). Each attempt's request
// is made when it dials: an idle stream holds no template.
type streamBody struct {
	sseLoop
	listen   *jsonrpc.Request // a 2026-07-28 subscriptions/listen as sent; nil: the GET
	answered chan struct{}    // closed once the first attempt has its outcome (conn.awaitStream); may be nil
	limits   msgcheck.Limits

	att      StreamAttempt               // the current or last attempt: one gone or declined is the last
	bo       *backoff.ExponentialBackOff // nil: at its start
	wait     time.Duration               // before the next attempt
	authWait <-chan struct{}             // closed once the credential is accepted again
	bad      string                      // a malformed line's fault: the current event is dropped at its end
	run      int                         // events dropped in a row
}

func newStreamBody(c *conn, ctx context.Context) *streamBody {
	sc, l := c.cfg.Stream, c.cfg.limits
	b := &streamBody{sseLoop: newLoop(c, ctx, sc.MaxEventBytes),
		limits: msgcheck.Limits{JSONValues: l.JSONValues, Messages: l.Messages, ContentBlocks: l.ContentBlocks}}
	b.events.Idle = true            // it may wait for hours between events
	context.AfterFunc(b.ctx, b.cut) // the session's end cuts the stream under way
	return b
}

// event hands on a whole event that carries one JSON-RPC request or
// notification, and drops every other but a priming event.
func (b *streamBody) event(ev sse.Event, line *sse.LineError) (jsonrpc.Message, bool) {
	if line != nil {
		b.bad = cmp.Or(b.bad, fmt.Sprintf("line without a colon: %q", line.Start))
		return nil, false
	}
	b.att.Events++
	req, why, detail := b.filter(ev)
	if why != "" {
		b.drop(why, ev.Size, 0, detail)
		if b.run >= maxDroppedRun {
			b.cut()
			b.ended(errGarbage)
		}
		return nil, false
	}
	if req == nil {
		return nil, false
	}
	b.run = 0
	if b.listen != nil && req.Method == methodListenAck {
		b.att.Acknowledged = true // no message: it says nothing of the catalog
	} else {
		b.att.Messages++
	}
	return req, false
}

// filter returns the request or notification ev carries, or why it is
// dropped and the fault in detail (foreign text: for logs, never a fact);
// neither for an event without a message.
func (b *streamBody) filter(ev sse.Event) (req *jsonrpc.Request, why session.DropReason, detail string) {
	if bad := b.bad; bad != "" {
		b.bad = ""
		return nil, session.DropMalformedLine, bad
	}
	if !ev.Message() {
		return nil, "", ""
	}
	msg, err := decodeMessage(ev.Data)
	if err != nil {
		return nil, session.DropNotJSONRPC, msgcheck.CutText(err.Error(), 200)
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return nil, session.DropResponse, ""
	}
	if problem := b.limits.Problem(req.Method, ev.Data, req.Params); problem != "" {
		return nil, session.DropTooManyValues, problem
	}
	return req, "", ""
}

// drop drops an event of n bytes (up to where reading stopped), past bound
// (an oversized one's; else 0); the session is unaffected.
func (b *streamBody) drop(why session.DropReason, n, bound int, detail string) {
	b.att.Dropped++
	b.run++
	b.c.cfg.Logger.Debug("mcpsup/httpsession: standalone stream event dropped", "seq", b.att.Seq, "reason", why, "bytes", n,
		"bound", bound, "detail", detail)
	b.c.report(session.EventDropped{Count: int(b.c.drops.Add(1)), Why: why, Bytes: n, Bound: bound})
}

// ended records the end of the attempt whose stream ended with err, its
// body closed; the loop re-dials.
func (b *streamBody) ended(err error) (jsonrpc.Message, bool) {
	var tooLarge *sse.EventTooLargeError
	switch {
	case context.Cause(b.ctx) != nil:
		b.att.End = EndClosed
	case errors.As(err, &tooLarge):
		b.drop(session.DropOversized, tooLarge.Read, tooLarge.Max, "")
		b.att.End = EndGarbage
	case errors.Is(err, errGarbage):
		b.att.End = EndGarbage
	case errors.Is(err, io.EOF):
		b.att.End = EndEOF
	default:
		b.att.End, b.att.Err = EndError, err
	}
	if n, underWay := b.events.Pending(); underWay && (b.att.End == EndEOF || b.att.End == EndError) {
		b.drop(session.DropTruncated, n, 0, "") // go-sdk has none of it
	}
	b.att.Bytes = b.wire.N()
	b.bad, b.run = "", 0
	b.report()
	return nil, false
}

// redial waits while the stream is held (declined, switched off, the
// credential refused) and for the backoff, then makes the next attempt.
func (b *streamBody) redial() (jsonrpc.Message, bool) {
	for !b.att.SessionGone && context.Cause(b.ctx) == nil {
		hold, changed := b.c.cfg.Switch.state()
		var err error
		switch {
		case b.att.Declined:
			_, err = b.sleep(nil, nil) // for good: only the session's end ends it
		case hold:
			if _, err = b.sleep(nil, changed); err == nil {
				if h, _ := b.c.cfg.Switch.state(); !h { // on again: start over, as a new session would
					b.bo = nil
					b.wait = 0
					b.c.observeHostility(func(h *HostilityTracker) bool { h.Reset(); return false })
				}
			}
		case b.authWait != nil:
			_, err = b.sleep(nil, b.authWait)
			b.authWait = nil
		case b.wait > 0:
			var woken bool
			if woken, err = b.sleep(b.c.cfg.Clock.After(b.wait), changed); !woken {
				b.wait = 0
			}
		default:
			b.dial()
			return nil, false
		}
		if err != nil {
			break
		}
	}
	return nil, true
}

// dial makes one attempt and, unless it opened a stream, records it.
func (b *streamBody) dial() {
	sentID, req, err := b.lastID, (*http.Request)(nil), error(nil)
	if b.listen != nil {
		sentID = "" // a new subscription each time, never a resumption
		req, err = b.listenRequest(b.att.Seq + 1)
	} else {
		req, err = b.c.streamGET(b.ctx, sentID)
	}
	first := b.att.Seq == 0
	if first && b.answered != nil {
		defer close(b.answered)
	}
	if err != nil { // the endpoint's URL, parsed for the first request already
		b.att = StreamAttempt{Seq: b.att.Seq + 1, Start: b.c.cfg.Clock.Now(), End: EndNoAnswer, Err: err}
		b.report()
		return
	}
	x := b.c.begin(req)
	if b.listen != nil {
		x.Method = MethodListen // the stream's own POST: no evidence that POSTs succeed
	}
	b.att = StreamAttempt{Seq: b.att.Seq + 1, Start: x.Start, LastEventID: sentID}
	resp, err := b.c.send(req, 0)
	b.c.fill(&x, resp, err)
	if err != nil {
		b.c.finish(req.Context(), x)
		b.att.End, b.att.Err = EndNoAnswer, err
		b.report()
		return
	}
	b.att.Status, b.att.ContentType = x.Status, x.ContentType
	if x.Status == http.StatusOK && x.ContentType == "text/event-stream" {
		b.c.finish(req.Context(), x)
		if err := b.open(resp); err != nil {
			b.att.End, b.att.Err = EndError, err
			b.report()
			return
		}
		// A stream after an ended attempt, not a replay the server agreed
		// to: messages sent while none was connected may be lost.
		if !first && sentID == "" {
			b.c.report(session.StreamRestored{})
		}
		return
	}
	b.c.readErrorBody(&x, resp)
	// To the first attempt only the null-id -32000 answer says the session
	// is gone: a plain 404 means no such route, as go-sdk takes it
	// (mcp/streamable.go connectStandaloneSSE).
	gone := sessionGone(x) && (!first || (&classify.HTTPError{Exchange: x}).NullIDRejection())
	x.SessionGone = gone
	b.c.finish(req.Context(), x)
	a := &b.att
	a.End, a.SessionGone = EndNotStream, gone
	if x.Status == http.StatusTooManyRequests || x.Status == http.StatusServiceUnavailable {
		a.RetryAfter = x.RetryAfter
	}
	a.Unauthorized = !gone && oauthcarrier.Refused(resp)
	a.Declined = first && !gone && !a.Unauthorized && x.Status < 500 && !outageStatus(x.Status)
	a.ReplayRefused = sentID != "" && !gone && !a.Declined && !a.Unauthorized &&
		x.Status >= 400 && x.Status < 500 && x.Status != http.StatusNotFound && !outageStatus(x.Status)
	b.report()
	switch {
	case gone:
		b.c.detach() // a DELETE would only be refused
	case a.Unauthorized:
		b.authWait = b.c.auth.Accepted()
	case a.Declined:
		b.c.report(session.StreamDeclined{Status: a.Status, ContentType: a.ContentType})
	case a.ReplayRefused:
		b.lastID, b.wait = "", 0 // at once, without Last-Event-ID
	}
}

// report ends the attempt's record, sets the wait before the next and feeds
// the hostility rule. Only a stream that lived Span resets the backoff, so
// a priming event then an end does not re-dial in a loop.
func (b *streamBody) report() {
	a := &b.att
	a.Duration = b.c.cfg.Clock.Since(a.Start)
	a.Retry = b.events.Retry()
	if a.End != EndClosed && !a.ReplayRefused {
		lived := a.End == EndEOF || a.End == EndError || a.End == EndGarbage
		if lived && a.Duration >= b.c.cfg.Stream.Span {
			b.bo = nil
			b.wait = 0
		} else {
			if b.bo == nil { // made at its start on first use: a stream that never ends short holds none
				sc := b.c.cfg.Stream
				b.bo = backoff.NewExponentialBackOff(backoff.WithInitialInterval(sc.InitialBackoff), backoff.WithMaxInterval(sc.MaxBackoff),
					backoff.WithMultiplier(2), backoff.WithRandomizationFactor(0), backoff.WithMaxElapsedTime(0),
					backoff.WithClockProvider(b.c.cfg.Clock))
			}
			b.wait = b.bo.NextBackOff()
		}
		b.wait = min(max(b.wait, a.Retry), b.c.cfg.Stream.MaxBackoff)
		b.wait = max(b.wait, a.RetryAfter) // the server's own ask outlasts our cap
	}
	b.c.cfg.Logger.Debug("mcpsup/httpsession: standalone stream attempt ended",
		"seq", a.Seq, "status", a.Status, "end", a.End, "events", a.Events, "messages", a.Messages,
		"bytes", a.Bytes, "retry", a.Retry, "duration", a.Duration)
	if f := b.c.cfg.OnStreamAttempt; f != nil {
		f(*a)
	}
	b.c.observeHostility(func(h *HostilityTracker) bool { return h.ObserveAttempt(*a) })
}

// MethodListen opens a subscriptions/listen stream (MCP SEP-2575, decision
// record 0012): a POST answered with a long-lived text/event-stream of the
// list_changed notifications asked for.
const MethodListen = "subscriptions/listen"

const (
	methodListenAck = "notifications/subscriptions/acknowledged" // a listen stream's first message
	headerMethod    = "Mcp-Method"                               // a request's JSON-RPC method (SEP-2243)
)

// listenRequest returns the POST of listen attempt seq (from 1): go-sdk's,
// and from the second on with an id of its own, "listen-<id>.<seq>", since
// "The request ID MUST NOT match the ID of any other request the sender has
// issued and not yet received a response for" (MCP basic, requests).
func (b *streamBody) listenRequest(seq int) (*http.Request, error) {
	msg := *b.listen
	if seq > 1 {
		msg.ID, _ = jsonrpc.MakeID(fmt.Sprintf("listen-%v.%d", msg.ID.Raw(), seq))
	}
	return b.c.post(b.ctx, &msg)
}

// streamGET returns the standalone stream's GET after lastID ("": none),
// on ctx (streamable-http.mdx, "Listening for Messages from the Server";
// Last-Event-ID: "Resumability and Redelivery").
func (c *conn) streamGET(ctx context.Context, lastID string) (*http.Request, error) {
	req, err := c.request(ctx, http.MethodGet, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	if lastID != "" {
		req.Header.Set(headerLastEventID, lastID)
	}
	return req, nil
}
