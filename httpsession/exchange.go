package httpsession

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/classify"
)

// Exchange is the record of one HTTP request a session handled, as the
// wire saw it (classify's facts type); an event stream's failure amends it
// after [Config.OnExchange]. Rewritten answers carry code [CodeHTTPAnswer].
type Exchange = classify.Exchange

// notable reports whether the exchange says more than "a well-formed 2xx
// came back": only then does it change a verdict.
func notable(x Exchange) bool {
	return x.Status == 0 || x.Status < 200 || x.Status >= 300 || x.Malformed || x.RPC.Present
}

type slotKey struct{}

// Exchanges collects the exchanges of one call: the slot [WithExchange]'s
// context carries, or one a context type of the caller's own embeds and
// answers Value with [Exchanges.Value] first. The zero value is ready; use
// one per call. Safe for concurrent use.
type Exchanges struct {
	mu    sync.Mutex
	n     int      // exchanges recorded
	call  Exchange // the last exchange of a request with an id, the callN-th
	callN int      // 0: none
	open  int      // the call's answer streams not closed yet
	after func()   // runs once they are all closed ([AfterAnswers])
}

func (s *Exchanges) streamOpened() {
	s.mu.Lock()
	s.open++
	s.mu.Unlock()
}

// streamClosed runs the waiting release once the last stream closed.
func (s *Exchanges) streamClosed() {
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
// made with ctx (from [WithExchange]) is closed: at once when none is open
// or ctx carries no slot, else from the goroutine closing the last one.
// End the call's context there: go-sdk hands a call its response before the
// stream's Close drains the body's last bytes (at most 4 KiB within 2 s,
// cut by Close or Detach), and a request cut short loses its connection.
// Safe for concurrent use; release runs once.
func AfterAnswers(ctx context.Context, release func()) {
	s, _ := ctx.Value(slotKey{}).(*Exchanges)
	if s == nil {
		release()
		return
	}
	s.mu.Lock()
	if s.open > 0 {
		if prev := s.after; prev != nil { // a second caller: both run, in order
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

// add records x and returns its number, from 1.
func (s *Exchanges) add(x Exchange) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	if x.RequestID != "" {
		s.call, s.callN = x, s.n
	}
	return s.n
}

// amend changes exchange n while it is the call's last: an event-stream
// answer's failure after its headers were recorded.
func (s *Exchanges) amend(n int, f func(*Exchange)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.callN == n {
		f(&s.call)
	}
}

// last returns the last exchange of a request with an id; ok reports one.
// used reports that any exchange was recorded.
func (s *Exchanges) last() (x Exchange, ok, used bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.call, s.callN > 0, s.n > 0
}

// WithExchange returns a context that collects the exchanges of the call made
// with it, for [Annotate]. Use one per call: a context shared by concurrent
// calls would mix their facts. Safe for concurrent use.
func WithExchange(ctx context.Context) context.Context {
	c, _ := withConnectExchange(ctx)
	return c
}

// withConnectExchange is WithExchange with a release that drops the slot:
// go-sdk keeps a handshake's context for the session's life.
func withConnectExchange(ctx context.Context) (context.Context, func()) {
	c := &slotContext{Context: ctx}
	c.s.Store(&Exchanges{})
	return c, func() { c.s.Store(nil) }
}

type slotContext struct {
	context.Context
	s atomic.Pointer[Exchanges]
}

func (c *slotContext) Value(key any) any {
	if key != (slotKey{}) {
		return c.Context.Value(key)
	}
	if s := c.s.Load(); s != nil {
		return s
	}
	return nil
}

// AfterFunc hands context.AfterFunc's registration to the parent: on a
// parent of its own type, context.WithCancel starts a goroutine per
// derived context (net/http derives one per request).
func (c *slotContext) AfterFunc(f func()) (stop func() bool) {
	if a, ok := c.Context.(interface{ AfterFunc(func()) func() bool }); ok {
		return a.AfterFunc(f)
	}
	return context.AfterFunc(c.Context, f)
}

// Value returns what a context carrying x answers for key, and whether
// key is the wire layer's.
func (x *Exchanges) Value(key any) (any, bool) {
	if key == (slotKey{}) {
		return x, true
	}
	return nil, false
}

// LastExchange returns the last exchange of a request with a JSON-RPC id made
// with ctx, if ctx came from [WithExchange] and one was recorded.
func LastExchange(ctx context.Context) (Exchange, bool) {
	s, _ := ctx.Value(slotKey{}).(*Exchanges)
	if s == nil {
		return Exchange{}, false
	}
	x, ok, _ := s.last()
	return x, ok
}

// FactsMiddleware returns a go-sdk sending middleware (add it once per
// client, mcp.Client.AddSendingMiddleware) that makes every request's error
// carry its wire facts: a *classify.HTTPError wrapping go-sdk's error (see
// [Annotate]), or a *classify.NotSentError when it left no exchange. An
// error already carrying a *classify.HTTPError is returned as it is.
// [Open] adds it to the client it makes when [Options.Client] is nil.
func FactsMiddleware() mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if _, ok := ctx.Value(slotKey{}).(*Exchanges); !ok {
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
// classify decides from the HTTP answer rather than go-sdk's text. err is
// returned unchanged when nil, already carrying a *classify.HTTPError, or
// when ctx (from [WithExchange]) recorded no request with an id or a
// well-formed 2xx answer. After a rewritten answer ([Exchange.Rewritten])
// the error keeps go-sdk's text but does not unwrap to the conn's
// *jsonrpc.Error; a refused 2xx answer's is an [*AnswerRefusedError]
// (errors.Is classify.ErrProtocol).
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
	s, _ := ctx.Value(slotKey{}).(*Exchanges)
	var x Exchange
	ok, used := false, false
	if s != nil {
		x, ok, used = s.last()
	}
	if s != nil && !used && always { // go-sdk failed it unsent
		return &classify.NotSentError{Err: err}
	}
	if !ok || (!always && !notable(x)) {
		return err
	}
	switch {
	case refusedAnswer(x):
		err = &AnswerRefusedError{Method: x.Method, Problem: x.Problem, text: err.Error()}
	case x.Rewritten:
		// Hide the conn's *jsonrpc.Error from errors.As; a stream that
		// broke wraps the read's error (classified transport).
		err = &rewrittenError{msg: err.Error(), cause: x.TransportErr}
	}
	return &classify.HTTPError{Exchange: x, Err: err}
}

// rewrittenError is the text of go-sdk's error from a rewritten answer; it
// unwraps to the transport error that broke the answer, if any.
type rewrittenError struct {
	msg   string
	cause error
}

func (e *rewrittenError) Error() string { return e.msg }

func (e *rewrittenError) Unwrap() error { return e.cause }
