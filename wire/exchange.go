package wire

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/classify"
)

// Exchange is the record of one HTTP request the [Transport] handled, as the
// wire saw it: the facts go-sdk reports only as text or discards.
type Exchange struct {
	// Verb is the HTTP method: POST, GET or DELETE.
	Verb string
	// Method is the JSON-RPC method of a POST ("" when the body is not a
	// JSON-RPC message or is a response).
	Method string
	// RequestID is the JSON-RPC id of a POST as raw JSON (e.g. `3`), ""
	// for a notification, a response or a non-POST.
	RequestID string
	// SessionIDSent reports whether the request carried Mcp-Session-Id.
	SessionIDSent bool
	// ProtocolVersionSent is the request's Mcp-Protocol-Version header.
	ProtocolVersionSent string
	// Status is the HTTP status the server answered, 0 when none came
	// (see Err).
	Status int
	// ContentType is the answer's media type without parameters, lower case.
	ContentType string
	// RetryAfter is the Retry-After header as classify.ParseRetryAfter
	// reads it (delay-seconds or HTTP-date, RFC 9110 section 10.2.3, at most
	// classify.MaxRetryAfter), 0 when absent, invalid or in the past.
	RetryAfter time.Duration
	// WWWAuthenticate is the answer's WWW-Authenticate header.
	WWWAuthenticate string
	// RPC is the JSON-RPC error of the answer's body, when the body was one
	// (read for non-2xx answers and 2xx application/json answers).
	RPC classify.BodyRPCError
	// RPCPresent reports whether RPC was found.
	RPCPresent bool
	// Malformed reports a 2xx answer to a request with an id that is not
	// its JSON-RPC response: an unexpected content type or coding, a body
	// or event that is not JSON-RPC or is past its bound, a response with
	// another id or without exactly one of result (an object) and error, an
	// event stream that ended without the response, an invalid handshake
	// Mcp-Session-Id (see Problem). For an event stream it is set when the
	// stream fails, after the exchange was reported to
	// [Config.OnExchange], in the record [Annotate] reads.
	Malformed bool
	// Oversized reports a body past its bound: a 2xx application/json
	// answer longer than [Config.MaxJSONBody] or an event longer than
	// [Config.MaxSSEEvent], refused for its request (Malformed is set too),
	// or any other body longer than [Config.MaxErrorBody], read no further.
	Oversized bool
	// Problem says what was wrong with an answer the Transport refused
	// (Rewritten), e.g. "response id 4, not the request's id 3" or "SSE
	// stream ended without the response"; "" when the status and content
	// type say it all.
	Problem string
	// Body is the start of the answer's body, at most
	// [classify.MaxBodySnippet] bytes; empty for event streams.
	Body string
	// SessionGone reports an answer that signals the session is over: 404
	// to a request that carried Mcp-Session-Id (unless its body answers the
	// request by id), or a 4xx whose JSON-RPC error is -32000 with a null
	// or absent id to such a request (the TypeScript and Python SDK
	// servers). DESIGN.md section 3.
	SessionGone bool
	// Rewritten reports that go-sdk was handed a JSON-RPC error response
	// with code [CodeHTTPAnswer] instead of the server's answer, so that
	// only this request fails (DESIGN.md failure story S4), or, for a
	// notification or a response, a local 202 Accepted in place of an
	// answer that was not a 2xx.
	Rewritten bool
	// Local reports that the request never reached the server: the
	// Transport answered it (resume handshake, a DELETE after [Transport.Detach]
	// or after a session-gone answer, go-sdk's standalone GET, which the
	// stream keeper answers at once before dialing the server, and the
	// replay of a session-gone answer to the standalone stream).
	Local bool
	// Err is the transport error when no answer came.
	Err error
	// Start is when the request was sent, on the Transport's clock.
	Start time.Time
	// Duration is the time to the answer's headers (to the error when none
	// came).
	Duration time.Duration
}

// retryAfter reads a Retry-After value on the Transport's clock. The one
// parser and its cap are classify's, so the verdict, the error and the
// rate-limit window agree.
func (t *Transport) retryAfter(v string) time.Duration {
	return classify.ParseRetryAfter(v, t.clock.Now())
}

// notable reports whether the exchange says more than "the request went out
// and a well-formed 2xx came back": only then does it change a verdict.
func (x Exchange) notable() bool {
	return x.Status == 0 || x.Status < 200 || x.Status >= 300 || x.Malformed || x.RPCPresent
}

// HTTPError returns the facts as a *classify.HTTPError wrapping err.
func (x Exchange) HTTPError(err error) *classify.HTTPError {
	e := &classify.HTTPError{
		Verb:            x.Verb,
		Method:          x.Method,
		RequestID:       x.RequestID,
		Status:          x.Status,
		ContentType:     x.ContentType,
		RetryAfter:      x.RetryAfter,
		WWWAuthenticate: x.WWWAuthenticate,
		SessionIDSent:   x.SessionIDSent,
		Malformed:       x.Malformed,
		Body:            x.Body,
		Err:             err,
	}
	if x.RPCPresent {
		e.RPC = x.RPC.RPCError
		e.BodyRPCID = x.RPC.ID
	}
	return e
}

// maxSlotRecords bounds the records one slot keeps.
const maxSlotRecords = 8

type slotKey struct{}

// slot collects the exchanges made with one call's context.
type slot struct {
	mu   sync.Mutex
	recs []*recorded
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

func (s *slot) add(x Exchange) *recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.recs) == maxSlotRecords {
		copy(s.recs, s.recs[1:])
		s.recs = s.recs[:maxSlotRecords-1]
	}
	r := &recorded{s: s, x: x}
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
	return context.WithValue(ctx, slotKey{}, &slot{})
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
// caller pairs [WithExchange] and [Annotate] by hand. A context that already
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
	if !ok || (!always && !x.notable()) {
		return err
	}
	if x.Rewritten {
		// The *jsonrpc.Error go-sdk returned was written by the Transport,
		// not the server: keep its text, hide it from errors.As, so the
		// verdict rests on the server's answer alone.
		err = &rewrittenError{msg: err.Error()}
	}
	return x.HTTPError(err)
}

// rewrittenError is the text of an error go-sdk built from a rewritten
// answer (see [CodeHTTPAnswer]).
type rewrittenError struct{ msg string }

func (e *rewrittenError) Error() string { return e.msg }
