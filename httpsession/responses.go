package httpsession

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/mcpsup/mcpsup/session"
)

// Defaults of the bound on go-sdk's POSTs of its responses to the server's
// requests (see [Config.MaxResponsesInFlight], [Config.ResponseTimeout]).
const (
	DefaultMaxResponsesInFlight = session.DefaultMaxResponsesInFlight
	DefaultResponseTimeout      = 30 * time.Second
)

// ErrResponseDropped is matched (errors.Is) by every [*ResponseDroppedError].
var ErrResponseDropped = errors.New("mcpsup/httpsession: response to a request of the server dropped")

// ResponseDroppedError records a response of the client to a request of the
// server's (an answer to ping, roots/list, sampling/createMessage,
// elicitation/create) that the Transport did not send, because
// [Config.MaxResponsesInFlight] POSTs of responses were already waiting for
// the server's answer: a server that sends requests faster than it takes
// their answers, or never answers the POSTs, would otherwise hold a
// goroutine and a connection per request, without bound. go-sdk is
// answered 202 Accepted in the server's place, so the session lives; the
// server's request stays unanswered, as if the answer were lost on the way.
type ResponseDroppedError struct {
	// InFlight is the bound that was reached.
	InFlight int
	// Dropped counts the responses this Transport dropped so far, this one
	// included (1 for the first).
	Dropped int
}

func (e *ResponseDroppedError) Error() string {
	return fmt.Sprintf("mcpsup/httpsession: response to a request of the server dropped (%d already in flight; %d dropped in all)", e.InFlight, e.Dropped)
}

// Is reports target == ErrResponseDropped.
func (e *ResponseDroppedError) Is(target error) bool { return target == ErrResponseDropped }

// responses bounds the POSTs of responses in flight on one Transport, in
// number (max) and in time (timeout, from the request until its answer's
// body is closed). go-sdk sends each with a context that never ends
// (internal/jsonrpc2 processResult's notDone), on a goroutine of the
// request's, so without the bound a server that never answers them holds
// one goroutine and one connection per request it sends. close cuts those
// in flight, which go-sdk's Close would not. A Transport makes its one at
// the first response, or at Close ([Transport.responses]): most sessions
// never get a request from their server. Safe for concurrent use.
type responses struct {
	max     int
	timeout time.Duration

	mu       sync.Mutex
	inFlight map[uint64]context.CancelFunc // the cuts of those in flight, by take's count
	taken    uint64
	dropped  int
	closed   bool
}

// responses returns the Transport's bound on responses, made the first
// time (its bounds are Config's, defaults applied by NewTransport).
func (t *Transport) responses() *responses {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.resps == nil {
		t.resps = &responses{max: t.cfg.MaxResponsesInFlight, timeout: t.cfg.ResponseTimeout}
	}
	return t.resps
}

// take returns req bounded in time and the release of its place, or, when
// max are in flight, the error the drop is reported with (nil once closed:
// nothing is to be sent, nothing reported).
func (r *responses) take(req *http.Request) (bounded *http.Request, release func(), dropped *ResponseDroppedError) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || len(r.inFlight) >= r.max {
		if !r.closed {
			r.dropped++
			dropped = &ResponseDroppedError{InFlight: r.max, Dropped: r.dropped}
		}
		return nil, nil, dropped
	}
	ctx, cancel := context.WithTimeout(req.Context(), r.timeout)
	if r.inFlight == nil {
		r.inFlight = make(map[uint64]context.CancelFunc, r.max)
	}
	r.taken++
	n := r.taken
	r.inFlight[n] = cancel
	release = func() {
		cancel()
		r.mu.Lock()
		delete(r.inFlight, n)
		r.mu.Unlock()
	}
	return req.WithContext(ctx), release, nil
}

// close cuts the responses in flight and refuses those to come.
func (r *responses) close() {
	r.mu.Lock()
	r.closed = true
	cuts := r.inFlight
	r.inFlight = nil
	r.mu.Unlock()
	for _, cut := range cuts {
		cut()
	}
}
