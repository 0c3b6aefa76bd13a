package supervisor

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/events"
)

// serverRequests guards one session's handlers of the server's requests:
// go-sdk's Close waits for them, so their context ends with the session,
// and at most Config.Limits.MaxResponsesInFlight host-handled ones run at
// once (one past it: -32603, internal error, server-request-refused).
type serverRequests struct {
	s        *Supervisor
	gen      uint64
	running  atomic.Int32       // the host-handled requests being handled
	refused  atomic.Int32       // the requests refused so far
	handlers context.Context    // ends with the session: so do the handlers
	end      context.CancelFunc // ends handlers
}

// middleware is the receiving middleware of the session's client.
func (r *serverRequests) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		// The host's handlers (sampling, elicitation) are the ones bounded.
		if method == "sampling/createMessage" || method == "elicitation/create" {
			limit := r.s.cfg.Limits.MaxResponsesInFlight
			if int(r.running.Add(1)) > limit {
				r.running.Add(-1)
				r.report(method, limit)
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
					Message: fmt.Sprintf("client busy: %d requests of the server's already being handled", limit)}
			}
			defer r.running.Add(-1)
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(r.handlers, cancel)()
		return next(ctx, method, req)
	}
}

// report posts a refusal's event, throttled as drops are.
func (r *serverRequests) report(method string, limit int) {
	if n := r.refused.Add(1); reportDrop(int(n)) {
		r.s.post(emit(events.Event{Kind: events.KindServerRequestRefused, Generation: r.gen,
			Op: events.CutName(method), Bound: limit, Count: int(n)}))
	}
}
