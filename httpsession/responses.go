package httpsession

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
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
// server's that the session did not send, because
// [Config.MaxResponsesInFlight] POSTs of responses were already waiting for
// the server's answer. go-sdk is answered 202 Accepted in the server's
// place, so the session lives; the server's request stays unanswered.
type ResponseDroppedError struct {
	// InFlight is the bound that was reached.
	InFlight int
	// Dropped counts the responses this session dropped so far, this one
	// included (1 for the first).
	Dropped int
}

func (e *ResponseDroppedError) Error() string {
	return fmt.Sprintf("mcpsup/httpsession: response to a request of the server dropped (%d already in flight; %d dropped in all)", e.InFlight, e.Dropped)
}

// Is reports target == ErrResponseDropped.
func (e *ResponseDroppedError) Is(target error) bool { return target == ErrResponseDropped }

// responses bounds the POSTs of responses in flight on one conn, in
// number and in time (timeout, until the answer's body is closed):
// go-sdk sends each with a context that never ends (internal/jsonrpc2
// processResult), so a server that never answers would hold a goroutine and
// a connection per request. close cuts those in flight and refuses those to
// come. Safe for concurrent use.
type responses struct {
	slots   chan struct{} // a place per POST in flight; cap: the bound
	timeout time.Duration
	life    context.Context
	close   context.CancelFunc // ends life
	dropped atomic.Int64
}

func newResponses(max int, timeout time.Duration) responses {
	life, end := context.WithCancel(context.Background())
	return responses{slots: make(chan struct{}, max), timeout: timeout, life: life, close: end}
}

// take returns req bounded in time and the release of its place, or, when
// the bound is reached, the error the drop is reported with (nil once
// closed: nothing is to be sent, nothing reported).
func (r *responses) take(req *http.Request) (bounded *http.Request, release func(), dropped *ResponseDroppedError) {
	if r.life.Err() != nil {
		return nil, nil, nil
	}
	select {
	case r.slots <- struct{}{}:
	default:
		return nil, nil, &ResponseDroppedError{InFlight: cap(r.slots), Dropped: int(r.dropped.Add(1))}
	}
	ctx, cancel := context.WithTimeout(req.Context(), r.timeout)
	stop := context.AfterFunc(r.life, cancel)
	release = func() {
		stop()
		cancel()
		<-r.slots
	}
	return req.WithContext(ctx), release, nil
}
