package httpsession

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/mcpsup/mcpsup/internal/lazyctx"
	"github.com/mcpsup/mcpsup/session"
)

// Defaults of the bound on go-sdk's POSTs of its responses to the server's
// requests (see [Config.MaxResponsesInFlight], [Config.ResponseTimeout]).
const (
	DefaultMaxResponsesInFlight = session.DefaultMaxResponsesInFlight
	DefaultResponseTimeout      = 30 * time.Second
)

// responses bounds the POSTs of responses in flight on one conn, in
// number and in time (timeout, until the answer's body is closed):
// go-sdk sends each with a context that never ends (internal/jsonrpc2
// processResult), so a server that never answers would hold a goroutine and
// a connection per request. close cuts those in flight and refuses those to
// come. Safe for concurrent use.
type responses struct {
	max      int32
	inFlight atomic.Int32
	timeout  time.Duration
	dropped  atomic.Int64
	life     lazyctx.Life // made by the first POST; close ends it
}

func newResponses(max int, timeout time.Duration) responses {
	return responses{max: int32(max), timeout: timeout}
}

// take returns req bounded in time and the release of its place, or, when
// the bound is reached, the drop's fact: go-sdk is answered 202 Accepted in
// the server's place, so the session lives and the server's request stays
// unanswered (nil once closed: nothing is to be sent, nothing reported).
func (r *responses) take(req *http.Request) (bounded *http.Request, release func(), dropped *session.ResponseDropped) {
	if r.life.Ended() {
		return nil, nil, nil
	}
	life := r.life.Context(context.Background())
	if r.inFlight.Add(1) > r.max {
		r.inFlight.Add(-1)
		return nil, nil, &session.ResponseDropped{Count: int(r.dropped.Add(1)), Bound: int(r.max)}
	}
	ctx, cancel := context.WithTimeout(req.Context(), r.timeout)
	stop := context.AfterFunc(life, cancel)
	release = func() {
		stop()
		cancel()
		r.inFlight.Add(-1)
	}
	return req.WithContext(ctx), release, nil
}

// close cuts the POSTs in flight and refuses those to come.
func (r *responses) close() { r.life.End() }
