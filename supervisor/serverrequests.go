package supervisor

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/events"
)

// serverRequests holds what one session's go-sdk client runs of the
// server's requests (ping, roots/list, sampling/createMessage,
// elicitation/create). go-sdk runs each on a goroutine of its own, its
// handler (the host's, for sampling and elicitation) with a context that
// nothing ends, and its Close waits for every handler: a handler that
// waits on its context (an LLM call, a user's answer) held the session's
// Close, and the supervisor's, for good; and a server sending such
// requests without pause had as many handlers running at once, each a
// goroutine and a host call.
//
// Its receiving middleware gives every handler of a request or a
// notification of the server's a context that also ends with the session
// (handlers.close, called before go-sdk's Close): a host's logging
// handler waits on its context as a sampling one does. And it lets at most
// Config.Limits.MaxResponsesInFlight of the requests the host handles
// (sampling/createMessage, elicitation/create: hostHandled) run at once:
// one past it is answered with a JSON-RPC error (-32603, internal error,
// naming the bound) without reaching its handler, and reported as a
// server-request-refused event (each of the first maxDropEvents of a
// session, then every dropEventEvery-th). go-sdk answers ping and
// roots/list itself at once: never refused. An idle session holds no
// context and no slice for it. Safe for concurrent use.
type serverRequests struct {
	s        *Supervisor
	gen      uint64
	running  atomic.Int32 // the host-handled requests being handled
	refused  atomic.Int32 // the requests refused so far
	handlers inflight     // ends the handlers running, and those to come once closed
}

// serverRequests returns the guard of the server's requests on the
// session of generation gen.
func (s *Supervisor) serverRequests(gen uint64) *serverRequests {
	return &serverRequests{s: s, gen: gen}
}

// middleware is the receiving middleware of the session's client.
func (r *serverRequests) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if hostHandled(method) {
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
		defer r.handlers.leave(r.handlers.join(nil, cancelFunc(cancel))) // canceled at once once the session ended
		return next(ctx, method, req)
	}
}

// hostHandled reports whether the server's request method is one whose
// handler is the host's (ClientOptions' CreateMessageHandler,
// ElicitationHandler), which may take as long as an LLM call or a user's
// answer: the ones the bound counts. A switch, not a map: every request and
// notification of the server's (a progress flood) asks.
func hostHandled(method string) bool {
	switch method {
	case "sampling/createMessage", "elicitation/create":
		return true
	}
	return false
}

// report posts a refusal's event, throttled as drops are.
func (r *serverRequests) report(method string, limit int) {
	if n := r.refused.Add(1); reportDrop(int(n)) {
		r.s.post(factEvent{events.Event{Kind: events.KindServerRequestRefused, Generation: r.gen, Detail: fmt.Sprintf(
			"request %.64q of the server refused (%d already being handled; %d refused in all)", method, limit, n)}})
	}
}
