package httpsession

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpsup/mcpsup/msgcheck"
)

// StreamConfig configures the keeper of the standalone SSE stream. The zero
// value selects the documented defaults.
//
// The session's conn (conn.go) starts the keeper after a 2025-era
// handshake; go-sdk's own client would end the whole session when its
// standalone GET stream failed for good (v1.8.0: MaxRetries reconnects
// without a new event id, a 4xx/5xx on a reconnect, a 5xx on the first
// GET), so the keeper never lets the stream fail (DESIGN.md failure story
// S5). When the server's stream ends, the keeper re-dials the server with a
// bounded backoff and splices the new stream in. go-sdk gets only the
// messages of whole events that each carry one JSON-RPC request or
// notification, decoded once; every other event (a line without a colon,
// data that is not one JSON-RPC message, a response, an event larger than
// MaxEventBytes, an event cut by the stream's end) is dropped and reported
// ([Config.OnDroppedEvent], an [*EventError] naming what was wrong), so
// nothing a server or gateway sends on this stream can end the session.
// Only a sign that the session is really gone (404 to a request with
// Mcp-Session-Id, a 4xx with a null-id -32000 JSON-RPC error) ends the
// stream, and with it the session (no DELETE); a refused credential
// ([StreamAttempt.Unauthorized]) only pauses it. A plain 404 to the
// session's first GET is the exception: see below.
//
// The re-dial follows at once only after an attempt that lived Span or
// longer; after a shorter one it waits for the backoff (cenkalti/backoff's
// exponential schedule on the Transport's clock, from InitialBackoff to
// MaxBackoff), and never less than the reconnection time the server set
// with the SSE retry field (WHATWG HTML, server-sent events; MCP SEP-1699
// priming events carry one), bounded by MaxBackoff. So a server that sends
// a priming event and ends the stream at once is re-dialed on the backoff
// schedule, not in a loop.
//
// Whether to dial at all is the [StreamSwitch]'s decision ([Config.Switch]):
// while it is off (a GET-hostile server, [StreamAuto]) the keeper holds the
// stream silently, no GET reaches the server and the session is unaffected;
// when it ends, the keeper dials again. The session's attempts feed the
// switch's [HostilityRule].
//
// A server that offers no standalone stream answers the first GET with 405
// (MCP spec, transports, listening for messages from the server), another
// 4xx or a non-SSE 2xx; go-sdk gives the stream up on such an answer, and
// the keeper does the same: it records the attempt ([StreamAttempt.Declined])
// and holds the stream silently for the session's life, dialing no more.
// This includes a plain 404 (one without the null-id -32000 body), which
// servers and gateways without a GET route answer, and which go-sdk takes
// the same way (mcp/streamable.go connectStandaloneSSE): on the first GET a
// 404 does not mean the session is gone. After [Open] the handshake just
// proved the session; after [Resume] a server that forgot the session says
// so to the next POST too, and POSTs decide. A 404 to a later GET, once the
// server offered the stream, still ends the session.
//
// Re-dialing never stops while the server is unreachable: attempts that get
// no HTTP answer (refused, reset, DNS) or an answer that says the server is
// unavailable for now ([StreamAttempt.Outage]: 408, 429, 5xx but 501, what a
// gateway answers while the server behind it restarts) are retried with the
// backoff, at most once per MaxBackoff, for as long as the session lives,
// and do not count toward the [HostilityRule], so a session whose server
// comes back after a long outage still learns of it from its stream.
// Closing the session stops it.
//
// A re-dial that carried Last-Event-ID and got a 4xx other than 401, 404,
// 408 and 429 (and not the null-id -32000 session-gone answer) is taken as
// the server being unable to replay after that id (a go-sdk server whose
// EventStore purged the events answers 400 "failed to replay events"): the
// keeper drops the id and re-dials once at once without it
// ([StreamAttempt.ReplayRefused]); that attempt does not count toward the
// [HostilityRule]. Messages the server sent while no stream was connected
// may be lost then; [Config.OnStreamRestored] says when.
type StreamConfig struct {
	// Span is how long an attempt must live for the next re-dial to follow
	// at once, and, unless it delivered a message, not to count as failing
	// at once ([StreamAttempt.FailedAtOnce]). Default 2s.
	Span time.Duration
	// InitialBackoff is the wait before re-dialing after an attempt that
	// lived less than Span (whatever it delivered) or got no stream; it
	// doubles per consecutive such attempt up to MaxBackoff. After an
	// attempt that lived Span or longer, the re-dial is immediate. The SSE
	// retry field, when the server sent one, is the least wait before any
	// re-dial, at most MaxBackoff. A 429 or 503 answer's Retry-After is the
	// least wait before the next re-dial, past MaxBackoff, at most
	// classify.MaxRetryAfter ([StreamAttempt.RetryAfter]). Defaults 1s and
	// 30s.
	InitialBackoff time.Duration
	MaxBackoff     time.Duration
	// Jitter is the backoff's randomization factor: each wait is drawn
	// from [w*(1-Jitter), w*(1+Jitter)] (cenkalti/backoff), 0 <= Jitter <
	// 1. Default 0: none (sessions of different clients open at different
	// times, so their re-dials are spread already).
	Jitter float64
	// MaxEventBytes bounds one SSE event, its lines and line ends included
	// (comment lines between events do not count). An event that outgrows
	// it is dropped ([DropOversized]) and ends the attempt: the keeper reads
	// no more of it and re-dials on the backoff. Default 1 MiB.
	MaxEventBytes int
}

func (c StreamConfig) withDefaults() StreamConfig {
	if c.Span <= 0 {
		c.Span = 2 * time.Second
	}
	if c.InitialBackoff <= 0 {
		c.InitialBackoff = time.Second
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = 30 * time.Second
	}
	if c.MaxBackoff < c.InitialBackoff {
		c.MaxBackoff = c.InitialBackoff
	}
	if c.Jitter < 0 || c.Jitter >= 1 {
		c.Jitter = 0
	}
	if c.MaxEventBytes <= 0 {
		c.MaxEventBytes = 1 << 20
	}
	return c
}

// StreamEnd says how a standalone stream attempt ended.
type StreamEnd uint8

// How an attempt ends.
const (
	// EndNoAnswer: the GET got no HTTP answer (refused, reset, ...).
	EndNoAnswer StreamEnd = iota + 1
	// EndNotStream: the answer was not a 200 text/event-stream.
	EndNotStream
	// EndEOF: the server ended the stream.
	EndEOF
	// EndError: reading the stream failed.
	EndError
	// EndClosed: the client closed the stream (session closed).
	EndClosed
	// EndGarbage: the keeper ended the stream: an event outgrew
	// [StreamConfig.MaxEventBytes], or maxDroppedRun events in a row were
	// dropped.
	EndGarbage
)

func (e StreamEnd) String() string {
	switch e {
	case EndNoAnswer:
		return "no-answer"
	case EndNotStream:
		return "not-stream"
	case EndEOF:
		return "eof"
	case EndError:
		return "error"
	case EndClosed:
		return "closed"
	case EndGarbage:
		return "garbage"
	}
	return "unknown"
}

// StreamAttempt records one GET of the standalone SSE stream.
type StreamAttempt struct {
	// Seq numbers the attempts of one go-sdk stream from 1.
	Seq int
	// Status and ContentType of the answer; Status 0 when none came.
	Status      int
	ContentType string
	// End says how the attempt ended; Err is the error behind EndNoAnswer
	// and EndError.
	End StreamEnd
	Err error
	// Bytes read from the server's stream, and the whole SSE Events in
	// them (with at least one field; comments are not events). Messages
	// counts the events handed to go-sdk: each carried one JSON-RPC request
	// or notification. A SEP-1699 priming event (an id and empty data) is an
	// event but no message. Dropped counts the events dropped (see
	// [EventError]).
	Bytes    int64
	Events   int
	Messages int
	Dropped  int
	// Retry is the reconnection time the server last set with the SSE
	// retry field on this go-sdk stream, 0 when it set none.
	Retry time.Duration
	// RetryAfter is the wait a 429 or 503 answer to the attempt asked for
	// with Retry-After (RFC 9110 section 10.2.3), at most
	// classify.MaxRetryAfter; 0 when none. The next re-dial waits at least
	// that long, past MaxBackoff.
	RetryAfter time.Duration
	// LastEventID is the Last-Event-ID header the attempt sent, "" when
	// none.
	LastEventID string
	// SessionGone reports an answer that says the session is over.
	SessionGone bool
	// Declined reports that the server answered the session's first GET
	// with 405, another 4xx but 401, 408 and 429 (a plain 404 included),
	// or a non-SSE answer: it offers no standalone stream, and the keeper
	// dials no more for this session.
	Declined bool
	// Unauthorized reports a 401, or a 403 with error="insufficient_scope",
	// that the OAuth handler (if any) could not authorize: the keeper
	// holds the stream until a request of the session is answered with a
	// 2xx, then re-dials on the backoff. It never ends the session and
	// does not count toward the [HostilityRule].
	Unauthorized bool
	// ReplayRefused reports a 4xx (not 401, 404, 408, 429, nor the null-id
	// -32000 session-gone answer) to an attempt that carried Last-Event-ID:
	// the server cannot replay after that id. The keeper re-dials at once
	// without it; the attempt does not count toward the [HostilityRule].
	ReplayRefused bool
	// Acknowledged reports a subscriptions/listen attempt (2026-07-28)
	// whose stream carried the server's
	// notifications/subscriptions/acknowledged: the listen reached the
	// server, which took the subscription (MCP subscriptions,
	// acknowledgment: "MUST send ... as the first message"). The
	// acknowledgement is no message (Messages does not count it), but an
	// acknowledged attempt did not fail at once ([StreamAttempt.FailedAtOnce]).
	Acknowledged bool
	// Start and Duration on the Transport's clock.
	Start    time.Time
	Duration time.Duration
}

// FailedAtOnce reports whether the attempt failed at once: it was not ended
// by the client, did not signal a gone session, delivered no message, was
// not an acknowledged listen and ended within span. Events without a
// message (SEP-1699 priming events, events go-sdk skips) do not count: a
// server that sends a priming event and ends every stream at once fails at
// once. A listen's acknowledgement does: the server took the subscription,
// so a stream cut after it (a proxy cutting idle streams) was working.
func (a StreamAttempt) FailedAtOnce(span time.Duration) bool {
	return a.End != EndClosed && !a.SessionGone && !a.Unauthorized && a.Messages == 0 && !a.Acknowledged && a.Duration < span
}

// Outage reports an attempt that shows the server unreachable or
// unavailable for now, rather than refusing the stream: no HTTP answer
// ([EndNoAnswer]), or 408, 429 or a 5xx other than 501 Not Implemented
// (RFC 9110 section 15.6.2: a lasting refusal), as a gateway answers while
// the server behind it restarts.
func (a StreamAttempt) Outage() bool {
	return a.End == EndNoAnswer || (a.End == EndNotStream && outageStatus(a.Status))
}

// outageStatus reports the statuses that say "not now" rather than "no".
func outageStatus(s int) bool {
	return s == http.StatusRequestTimeout || s == http.StatusTooManyRequests ||
		(s >= 500 && s <= 599 && s != http.StatusNotImplemented)
}

var errStreamClosed = errors.New("mcpsup/httpsession: standalone stream closed")

// newStreamBody returns the keeper's body for go-sdk's GET req.
func newStreamBody(t *Transport, req *http.Request) *streamBody {
	b := &streamBody{t: t, req: req, ctx: req.Context(), closed: make(chan struct{})}
	b.filter.events.max = t.cfg.Stream.MaxEventBytes
	b.filter.limits = msgcheck.Limits{JSONValues: t.cfg.MaxJSONValues, Messages: t.cfg.MaxMessages, ContentBlocks: t.cfg.MaxContentBlocks} // no list answers here
	return b
}

// nextBackOff returns the wait before the next attempt after a failed one.
// The schedule is made at the first failure: a stream that never fails,
// most idle ones, holds none.
func (b *streamBody) nextBackOff() time.Duration {
	if b.bo == nil {
		c := b.t.cfg.Stream
		b.bo = backoff.NewExponentialBackOff(
			backoff.WithInitialInterval(c.InitialBackoff),
			backoff.WithMaxInterval(c.MaxBackoff),
			backoff.WithMultiplier(2),
			backoff.WithRandomizationFactor(c.Jitter),
			backoff.WithMaxElapsedTime(0), // never stops while the session lives
			backoff.WithClockProvider(clockProvider{b.t.clock}),
		)
	}
	return b.bo.NextBackOff()
}

// resetBackOff starts the schedule over; nil is a schedule not begun.
func (b *streamBody) resetBackOff() {
	if b.bo != nil {
		b.bo.Reset()
	}
}

type dialKind uint8

const (
	dialStream        dialKind = iota // a 200 text/event-stream: reading
	dialDeclined                      // the first GET was answered "no stream here"
	dialGone                          // the session is over
	dialReplayRefused                 // the server cannot replay after the Last-Event-ID sent
	dialFailed                        // try again later
)

// keptBuffer bounds the capacity a stream keeps in its buffers while idle;
// larger buffers are dropped once drained.
const keptBuffer = 4 << 10

// streamBody is the never-ending body go-sdk reads as its standalone stream.
type streamBody struct {
	t   *Transport
	req *http.Request
	ctx context.Context
	// answered, when set, is called once the first attempt has its
	// outcome (a stream, a refusal, no answer): see conn.awaitStream.
	answered func()

	closeOnce sync.Once
	closed    chan struct{}

	mu  sync.Mutex
	cur io.ReadCloser // the server's current stream, nil between attempts

	// Owned by the reading goroutine.
	att      StreamAttempt               // the current or last attempt; Seq counts them
	bo       *backoff.ExponentialBackOff // the re-dial schedule; nil until an attempt failed
	wait     time.Duration               // before the next attempt
	declined bool                        // the server offers no standalone stream: hold for good
	listen   bool                        // a 2026-07-28 subscriptions/listen stream (listen.go), not the GET
	ended    bool                        // the session is gone: deliver EOF once out is drained
	authWait <-chan struct{}             // closed once the credential is accepted again; nil when not waiting
	filter   sseFilter
	out      []jsonrpc.Message // messages for go-sdk not yet delivered
	buf      []byte            // the read buffer, made at the first read
}

// dial makes one attempt and reports every attempt that does not become a
// live stream at once.
func (b *streamBody) dial() dialKind {
	sentID := b.filter.lastID
	var req *http.Request
	if b.listen {
		sentID = "" // a new subscription each time, never a resumption
		req = b.listenRequest(b.att.Seq + 1)
	} else {
		req = b.request(sentID)
	}
	x := b.t.begin(req)
	if b.listen {
		x.Method = MethodListen // the stream's own POST: no evidence that POSTs succeed
	}
	b.att = StreamAttempt{Seq: b.att.Seq + 1, Start: x.Start, LastEventID: sentID}
	first := b.att.Seq == 1
	if first && b.answered != nil {
		defer b.answered()
	}
	b.t.withCookies(req)
	resp, err := b.t.base.RoundTrip(req)
	b.t.fill(&x, resp, err)
	if err != nil {
		b.t.finish(req, x)
		b.att.End, b.att.Err = EndNoAnswer, err
		b.report()
		return dialFailed
	}
	b.t.keepCookies(req, resp)
	b.att.Status, b.att.ContentType = x.Status, x.ContentType
	if x.Status == http.StatusOK && x.ContentType == "text/event-stream" {
		b.t.finish(req, x)
		b.setCur(resp.Body)
		// A stream after an ended attempt, not a replay the server agreed
		// to: messages sent while no stream was connected may be lost.
		if !first && sentID == "" && b.t.cfg.OnStreamRestored != nil {
			b.t.cfg.OnStreamRestored()
		}
		return dialStream
	}
	b.t.readErrorBody(&x, resp)
	_ = resp.Body.Close()
	// To the first GET only the null-id -32000 answer says the session is
	// gone: a plain 404 means no GET route here, as go-sdk takes it
	// (mcp/streamable.go connectStandaloneSSE). The handshake proved the
	// session, or, resumed, the next POST decides.
	gone := sessionGone(x) && (!first || nullIDServerError(x))
	x.SessionGone = gone
	b.t.finish(req, x)
	b.att.End, b.att.SessionGone = EndNotStream, x.SessionGone
	if x.Status == http.StatusTooManyRequests || x.Status == http.StatusServiceUnavailable {
		b.att.RetryAfter = x.RetryAfter
	}
	// A refused credential (after the OAuth handler, if any, could not
	// authorize) is the host's problem, never the session's end: the
	// stream pauses until a request is answered with a 2xx again.
	b.att.Unauthorized = !gone && refusedCredential(resp)
	// First GET: go-sdk gives the stream up on 405, another 4xx or a
	// non-SSE answer (mcp/streamable.go connectStandaloneSSE), and fails
	// the session on a 5xx SSE answer; 5xx and outage answers are retried
	// here.
	b.att.Declined = first && !x.SessionGone && !b.att.Unauthorized && x.Status < 500 && !outageStatus(x.Status)
	b.att.ReplayRefused = sentID != "" && !x.SessionGone && !b.att.Declined && !b.att.Unauthorized &&
		x.Status >= 400 && x.Status < 500 && x.Status != http.StatusNotFound && !outageStatus(x.Status)
	b.report()
	switch {
	case x.SessionGone:
		b.t.mu.Lock()
		b.t.detached = true // a DELETE would only be refused (or deleted a session a fresh credential could use)
		b.t.mu.Unlock()
		return dialGone
	case b.att.Unauthorized:
		b.authWait = b.t.auth.gate.accepted()
		return dialFailed
	case b.att.Declined:
		return dialDeclined
	case b.att.ReplayRefused:
		return dialReplayRefused
	}
	return dialFailed
}

// request returns the GET of one attempt: go-sdk's GET itself when
// nothing is added to it (net/http holds it while the stream lasts, and
// mutates neither its URL nor its header; go-sdk, answered locally, no
// longer reads it), else a shallow copy with a header of its own carrying
// Last-Event-ID or the jar's cookies, so an idle stream holds no second
// request and no second copy of every header.
func (b *streamBody) request(lastID string) *http.Request {
	if lastID == "" && b.t.cfg.Jar == nil {
		return b.req
	}
	req := new(http.Request)
	*req = *b.req
	req.Header = b.req.Header.Clone()
	if lastID != "" {
		req.Header.Set(headerLastEventID, lastID)
	}
	return req
}

func (b *streamBody) setCur(rc io.ReadCloser) {
	b.mu.Lock()
	b.cur = rc
	b.mu.Unlock()
	select {
	case <-b.closed:
		_ = rc.Close()
	default:
	}
}

func (b *streamBody) current() io.ReadCloser {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.cur
}

// report ends the current attempt's record, sets the wait before the next
// and feeds the hostility rule. Only a stream that lived Span resets the
// backoff: an event alone does not (a priming event then an end would
// re-dial in a loop).
func (b *streamBody) report() {
	b.att.Duration = b.t.clock.Since(b.att.Start)
	b.att.Retry = b.filter.events.retry
	if b.att.End == EndClosed || b.att.ReplayRefused {
		b.log() // the end, or re-dialed at once: no backoff
		b.t.observeHostility(func(h *HostilityTracker) bool { return h.ObserveAttempt(b.att) })
		return
	}
	lived := b.att.End == EndEOF || b.att.End == EndError || b.att.End == EndGarbage
	if lived && b.att.Duration >= b.t.cfg.Stream.Span {
		b.resetBackOff()
		b.wait = 0
	} else {
		b.wait = b.nextBackOff()
	}
	b.wait = min(max(b.wait, b.filter.events.retry), b.t.cfg.Stream.MaxBackoff)
	b.wait = max(b.wait, b.att.RetryAfter) // the server's own ask outlasts our cap
	b.log()
	b.t.observeHostility(func(h *HostilityTracker) bool { return h.ObserveAttempt(b.att) })
}

// clockProvider lets cenkalti/backoff read a clockwork clock.
type clockProvider struct{ c clockwork.Clock }

func (p clockProvider) Now() time.Time { return p.c.Now() }

func (b *streamBody) log() {
	b.t.cfg.Logger.Debug("mcpsup/httpsession: standalone stream attempt ended",
		"seq", b.att.Seq, "status", b.att.Status, "end", b.att.End.String(),
		"events", b.att.Events, "messages", b.att.Messages, "bytes", b.att.Bytes,
		"retry", b.att.Retry, "duration", b.att.Duration)
	if f := b.t.cfg.OnStreamAttempt; f != nil {
		f(b.att)
	}
}

// Next returns the next message of the stream: it reads the server's
// stream, re-dialing as the keeper does, and hands on only the messages
// [sseFilter] lets through. It returns an error once the stream is closed
// (errStreamClosed, or its context's error), and io.EOF once the session
// is gone. One goroutine reads.
func (b *streamBody) Next() (jsonrpc.Message, error) {
	for {
		if len(b.out) > 0 {
			msg := b.out[0]
			b.out[0] = nil
			b.out = b.out[1:]
			if len(b.out) == 0 {
				b.out = nil
			}
			return msg, nil
		}
		if err := b.stopped(); err != nil {
			return nil, err
		}
		if b.ended {
			return nil, io.EOF
		}
		cur := b.current()
		if cur == nil {
			if err := b.redial(); err != nil {
				return nil, err
			}
			continue
		}
		if b.buf == nil {
			b.buf = make([]byte, streamReadSize)
		}
		n, err := cur.Read(b.buf)
		var r filtered
		b.out = b.filter.push(b.buf[:n], b.out, &r)
		b.note(n, r)
		switch {
		case r.garbage:
			b.endAttempt(cur, errGarbage)
		case err != nil:
			b.endAttempt(cur, err)
		}
	}
}

// streamReadSize is the size of a stream's read buffer.
const streamReadSize = 4 << 10

// errGarbage ends an attempt whose stream the filter refused.
var errGarbage = errors.New("mcpsup/httpsession: standalone stream refused: an oversized event, or too many dropped events in a row")

// note counts what one read brought and reports the dropped events.
func (b *streamBody) note(n int, r filtered) {
	b.att.Bytes += int64(n)
	b.att.Events += r.events
	b.att.Messages += r.messages
	if b.listen && r.acks > 0 {
		b.att.Messages -= r.acks // the acknowledgement says nothing of the catalog
		b.att.Acknowledged = true
	}
	b.att.Dropped += len(r.drops)
	for _, e := range r.drops {
		e.Attempt = b.att.Seq
		b.t.cfg.Logger.Debug("mcpsup/httpsession: standalone stream event dropped", "seq", b.att.Seq, "reason", e.Reason.String(), "bytes", e.Bytes)
		if f := b.t.cfg.OnDroppedEvent; f != nil {
			f(e)
		}
	}
}

// stopped reports the client closing the stream.
func (b *streamBody) stopped() error {
	select {
	case <-b.closed:
		return errStreamClosed
	default:
	}
	return b.ctx.Err()
}

// endAttempt closes the server's stream after it ended with err.
func (b *streamBody) endAttempt(cur io.ReadCloser, err error) {
	_ = cur.Close()
	b.mu.Lock()
	b.cur = nil
	b.mu.Unlock()
	switch {
	case b.stopped() != nil:
		b.att.End = EndClosed
	case errors.Is(err, errGarbage):
		b.att.End = EndGarbage
	case errors.Is(err, io.EOF):
		b.att.End = EndEOF
	default:
		b.att.End, b.att.Err = EndError, err
	}
	// Splice: an event under way is dropped; go-sdk has none of it.
	var r filtered
	b.filter.cut(&r)
	if b.att.End != EndClosed {
		b.note(0, r)
	}
	b.report()
}

// redial waits for the backoff, or while the switch holds the stream, and
// makes the next attempt.
func (b *streamBody) redial() error {
	for {
		hold, changed := b.t.sw.state()
		if b.declined || hold {
			if b.declined {
				changed = nil // for good: only the session's end ends the wait
			}
			select {
			case <-changed:
				if h, _ := b.t.sw.state(); !h {
					// On again: start over, as a new session would.
					b.resetBackOff()
					b.wait = 0
					b.t.observeHostility(func(h *HostilityTracker) bool { h.Reset(); return false })
				}
				continue
			case <-b.closed:
				return errStreamClosed
			case <-b.ctx.Done():
				return b.ctx.Err()
			}
		}
		if w := b.authWait; w != nil {
			select {
			case <-w:
				b.authWait = nil
				continue
			case <-b.closed:
				return errStreamClosed
			case <-b.ctx.Done():
				return b.ctx.Err()
			}
		}
		if d := b.wait; d > 0 {
			select {
			case <-b.t.clock.After(d):
			case <-changed:
				continue
			case <-b.closed:
				return errStreamClosed
			case <-b.ctx.Done():
				return b.ctx.Err()
			}
		}
		kind := b.dial()
		if kind == dialReplayRefused && b.stopped() == nil {
			b.filter.lastID = ""
			kind = b.dial() // at once, without Last-Event-ID
		}
		switch kind {
		case dialGone:
			b.ended = true
		case dialDeclined:
			b.declined = true
			b.t.noteDeclined(b.att)
		}
		return b.stopped()
	}
}

// Close implements io.Closer; it ends the stream for good.
func (b *streamBody) Close() error {
	b.closeOnce.Do(func() { close(b.closed) })
	if cur := b.current(); cur != nil {
		return cur.Close()
	}
	return nil
}
