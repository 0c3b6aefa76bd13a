package httpsession

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/classify"
)

// Exchange is the record of one HTTP request the [Transport] handled, as the
// wire saw it: classify's facts type, so the facts a request's error carries
// ([classify.HTTPError]) are the ones the Transport recorded, with no copy.
// For an event stream, Malformed is set when the stream fails, after the
// exchange was reported to [Config.OnExchange], in the record [Annotate]
// reads; Oversized refers to [Config.MaxJSONBody], [Config.MaxSSEEvent],
// [Config.MaxListItems], [Config.MaxJSONValues], [Config.MaxMessages] and
// [Config.MaxErrorBody]; Rewritten answers carry code [CodeHTTPAnswer];
// Local covers the resume handshake, a DELETE after [Transport.Detach] or
// after a session-gone answer, go-sdk's standalone GET, which the stream
// keeper answers at once before dialing the server, and the replay of a
// session-gone answer to the standalone stream.
type Exchange = classify.Exchange

// retryAfter reads a Retry-After value on the Transport's clock. The one
// parser and its cap are classify's, so the verdict, the error and the
// rate-limit window agree.
func (t *Transport) retryAfter(v string) time.Duration {
	return classify.ParseRetryAfter(v, t.clock.Now())
}

// notable reports whether the exchange says more than "the request went out
// and a well-formed 2xx came back": only then does it change a verdict.
func notable(x Exchange) bool {
	return x.Status == 0 || x.Status < 200 || x.Status >= 300 || x.Malformed || x.RPC.Present
}

// maxSlotRecords bounds the records one slot keeps.
const maxSlotRecords = 8

type slotKey struct{}

// slot collects the exchanges made with one call's context.
type slot struct {
	mu   sync.Mutex
	recs []*recorded
	// first and buf hold a call's first record and the start of recs, so
	// that a call with one request allocates no record of its own.
	first recorded
	buf   [2]*recorded
	// open counts the call's answer streams not closed yet; after runs
	// once they are all closed (see [AfterAnswers]).
	open  int
	after func()
}

// streamOpened counts an answer stream of the slot's call.
func (s *slot) streamOpened() {
	s.mu.Lock()
	s.open++
	s.mu.Unlock()
}

// streamClosed uncounts an answer stream and runs the waiting release when
// it was the last one.
func (s *slot) streamClosed() {
	s.mu.Lock()
	s.open--
	var f func()
	if s.open == 0 {
		f, s.after = s.after, nil
	}
	s.mu.Unlock()
	if f != nil {
		f()
	}
}

// AfterAnswers calls release once every event-stream answer of the call
// made with ctx (a context from [WithExchange]) is closed: at once when
// none is open, or when ctx carries no slot; later from the goroutine that
// closes the last one otherwise. A caller that ends the call's context
// once the call returns (a cancel of its own, a timeout's stop) hands that
// to AfterAnswers: go-sdk hands a call its response before it closes the
// response's stream, and closing it drains what the server still sends (a
// chunked body's last bytes); a request whose context ended before its
// body's end loses its connection, which net/http reuses only after EOF.
// The drain is bounded (4 KiB; cut between 1 s and 2 s, at once by the
// Session's Close or Detach), so release waits at most that long after the
// stream's Close began. It is safe for concurrent use; release runs
// once.
func AfterAnswers(ctx context.Context, release func()) {
	s, _ := ctx.Value(slotKey{}).(*slot)
	if s == nil {
		release()
		return
	}
	s.mu.Lock()
	if s.open > 0 {
		if prev := s.after; prev != nil {
			// A second caller on the same call: both run, in order.
			next := release
			release = func() { prev(); next() }
		}
		s.after = release
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	release()
}

// recorded is one exchange in a slot; an event-stream answer amends it when
// its stream fails after the headers were recorded.
type recorded struct {
	s *slot
	x Exchange
}

// amend changes the record under the slot's lock.
func (r *recorded) amend(f func(*Exchange)) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	f(&r.x)
}

// empty reports that no exchange was recorded in s.
func (s *slot) empty() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.recs) == 0
}

func (s *slot) add(x Exchange) *recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.recs) == maxSlotRecords {
		copy(s.recs, s.recs[1:])
		s.recs = s.recs[:maxSlotRecords-1]
	}
	r := &s.first
	if r.s != nil {
		r = &recorded{}
	}
	*r = recorded{s: s, x: x}
	if s.recs == nil {
		s.recs = s.buf[:0]
	}
	s.recs = append(s.recs, r)
	return r
}

// call returns the last exchange of a request with an id.
func (s *slot) call() (Exchange, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.recs) - 1; i >= 0; i-- {
		if s.recs[i].x.RequestID != "" {
			return s.recs[i].x, true
		}
	}
	return Exchange{}, false
}

// WithExchange returns a context that collects the exchanges of the call made
// with it, for [Annotate]. Use one per call: go-sdk sends a call's POST with
// the call's context, so a context shared by concurrent calls would mix their
// facts. It is safe to use the returned context from several goroutines.
func WithExchange(ctx context.Context) context.Context {
	return &slotContext{Context: ctx}
}

// Exchanges collects the exchanges of one call, as [WithExchange]'s
// context does, for a context type of the caller's own that embeds it: its
// Value method returns what [Exchanges.Value] gives for a key it knows, so
// that the call's context and its exchanges take one allocation. The zero
// value is ready; use one per call. Safe for concurrent use.
type Exchanges struct{ s slot }

// Value returns what a context carrying x answers for key, and whether
// key is the wire layer's.
func (x *Exchanges) Value(key any) (any, bool) {
	if key == (slotKey{}) {
		return &x.s, true
	}
	return nil, false
}

// slotContext is a context carrying a slot, in one allocation with it (a
// call's hot path: context.WithValue would take a second).
type slotContext struct {
	context.Context
	x Exchanges
}

func (c *slotContext) Value(key any) any {
	if v, ok := c.x.Value(key); ok {
		return v
	}
	return c.Context.Value(key)
}

// AfterFunc passes a derived context's registration on to the parent (see
// context.AfterFunc): a parent with its own AfterFunc takes it there, where
// without this method context.WithCancel would start a goroutine per derived
// context to watch Done (net/http derives one per request).
func (c *slotContext) AfterFunc(f func()) (stop func() bool) {
	if a, ok := c.Context.(interface{ AfterFunc(func()) func() bool }); ok {
		return a.AfterFunc(f)
	}
	return context.AfterFunc(c.Context, f)
}

// withConnectExchange is WithExchange for a session's handshake: go-sdk
// keeps the context of Connect, values included, as the connection's own
// for the session's life (xcontext.Detach in StreamableClientTransport.Connect),
// so the slot and the handshake's records (whose strings share the request
// bodies) would stay with every idle session. The returned release drops
// the slot; the context then carries none.
func withConnectExchange(ctx context.Context) (context.Context, func()) {
	c := &releasableSlot{Context: ctx}
	c.s.Store(&slot{})
	return c, func() { c.s.Store(nil) }
}

// releasableSlot is a context whose slot can be dropped.
type releasableSlot struct {
	context.Context
	s atomic.Pointer[slot]
}

func (c *releasableSlot) Value(key any) any {
	if key == (slotKey{}) {
		if s := c.s.Load(); s != nil {
			return s
		}
		return nil
	}
	return c.Context.Value(key)
}

// LastExchange returns the last exchange of a request with a JSON-RPC id made
// with ctx, if ctx came from [WithExchange] and one was recorded.
func LastExchange(ctx context.Context) (Exchange, bool) {
	s, _ := ctx.Value(slotKey{}).(*slot)
	if s == nil {
		return Exchange{}, false
	}
	return s.call()
}

// FactsMiddleware returns a go-sdk sending middleware (add it with
// mcp.Client.AddSendingMiddleware, once per client) that makes the error of
// every request a ClientSession sends carry the wire facts of that request:
// a *classify.HTTPError wrapping go-sdk's error whenever the request went
// out on a [Transport] (see [Annotate] for a rewritten answer), so that
// classify.Classify(ctx, err) decides from the HTTP answer and
// errors.As(err, **classify.HTTPError) tells that the request was sent. No
// caller pairs [WithExchange] and [Annotate] by hand. A request that left no
// exchange at all (go-sdk failed it unsent) returns a
// *classify.NotSentError wrapping go-sdk's error. A context that already
// carries a slot from [WithExchange] keeps it, and an error that already
// carries a *classify.HTTPError is returned as it is. [Open] and [Resume]
// add it to the client they make when [Options.Client] is nil.
func FactsMiddleware() mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if _, ok := ctx.Value(slotKey{}).(*slot); !ok {
				ctx = WithExchange(ctx)
			}
			res, err := next(ctx, method, req)
			if err == nil {
				return res, nil
			}
			return res, attach(ctx, err, true)
		}
	}
}

// Annotate wraps err, the error of a call made with ctx, in a
// *classify.HTTPError carrying the facts of the call's request, so that
// classify.Classify(ctx, Annotate(ctx, err)) decides from the HTTP status,
// Retry-After and body rather than go-sdk's text. It returns err unchanged
// when err is nil, when ctx did not come from [WithExchange], when no request
// with an id was recorded, or when the request got a well-formed 2xx answer
// (the error then arose after the HTTP exchange, and go-sdk's own error
// values say more than "HTTP 200"). When the Transport rewrote the answer
// ([Exchange.Rewritten]), the returned error keeps go-sdk's text but no
// longer unwraps to the *jsonrpc.Error with [CodeHTTPAnswer], which the
// Transport wrote: the verdict rests on the server's answer.
//
// An err that already carries a *classify.HTTPError (from
// [FactsMiddleware]) is returned unchanged.
func Annotate(ctx context.Context, err error) error { return attach(ctx, err, false) }

// attach is Annotate; with always, the facts of a well-formed 2xx answer
// are attached too (they decide nothing, but say the request was sent).
func attach(ctx context.Context, err error, always bool) error {
	if err == nil {
		return nil
	}
	if _, done := errors.AsType[*classify.HTTPError](err); done {
		return err
	}
	x, ok := LastExchange(ctx)
	if !ok && always {
		if s, ours := ctx.Value(slotKey{}).(*slot); ours && s.empty() {
			// The request left no exchange: go-sdk failed it unsent.
			return &classify.NotSentError{Err: err}
		}
	}
	if !ok || (!always && !notable(x)) {
		return err
	}
	if x.Rewritten {
		// The *jsonrpc.Error go-sdk returned was written by the Transport,
		// not the server: keep its text, hide it from errors.As, so the
		// verdict rests on the server's answer alone.
		// An event stream that broke before the response wraps the read's
		// error: no complete HTTP answer came, and classify says transport.
		err = &rewrittenError{msg: err.Error(), cause: x.TransportErr}
	}
	return &classify.HTTPError{Exchange: x, Err: err}
}

// rewrittenError is the text of an error go-sdk built from a rewritten
// answer (see [CodeHTTPAnswer]), and the transport error that broke the
// answer, if any.
type rewrittenError struct {
	msg   string
	cause error
}

func (e *rewrittenError) Error() string { return e.msg }

// Unwrap returns the transport error that broke the answer, nil when none.
func (e *rewrittenError) Unwrap() error { return e.cause }
