package supervisor

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
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
// ([serverRequests.end], called before go-sdk's Close): a host's logging
// handler waits on its context as a sampling one does. And it lets at most
// Config.MaxResponsesInFlight of the requests the host handles
// (sampling/createMessage, elicitation/create: [hostHandled]) run at once:
// one past it is answered with a JSON-RPC error (-32603, internal error,
// naming the bound) without reaching its handler, and reported as a
// server-request-refused event (each of the first maxDropEvents of a
// session, then every dropEventEvery-th). go-sdk answers ping and
// roots/list itself at once: never refused. An idle session holds no
// context and no slice for it. Safe for concurrent use.
type serverRequests struct {
	s       *Supervisor
	gen     uint64
	running atomic.Int32 // Int32s: the struct fits its 64-byte size class
	refused atomic.Int32
	mu      sync.Mutex
	ended   bool
	handled []*context.CancelFunc // the handlers running, each ended by end
}

// serverRequests returns the guard of the server's requests on the
// session of generation gen.
func (s *Supervisor) serverRequests(gen uint64) *serverRequests {
	return &serverRequests{s: s, gen: gen}
}

// middleware is the receiving middleware of the session's client.
func (r *serverRequests) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if hostHandled[method] {
			limit := r.s.cfg.MaxResponsesInFlight
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
		if !r.join(&cancel) {
			cancel() // the session ended already
		}
		defer r.leave(&cancel)
		return next(ctx, method, req)
	}
}

// hostHandled are the server's requests whose handlers are the host's
// (ClientOptions' CreateMessageHandler, ElicitationHandler), which may take
// as long as an LLM call or a user's answer: the ones the bound counts.
var hostHandled = map[string]bool{"sampling/createMessage": true, "elicitation/create": true}

// join registers a running handler's cancel; false once the session ended.
func (r *serverRequests) join(cancel *context.CancelFunc) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended {
		return false
	}
	r.handled = append(r.handled, cancel)
	return true
}

// leave forgets a handler that returned.
func (r *serverRequests) leave(cancel *context.CancelFunc) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if i := slices.Index(r.handled, cancel); i >= 0 {
		r.handled = slices.Delete(r.handled, i, i+1)
	}
	if len(r.handled) == 0 {
		r.handled = nil // a burst is over: keep no slice
	}
}

// end ends the handlers running and those to come: the session is ending.
func (r *serverRequests) end() {
	r.mu.Lock()
	r.ended = true
	running := r.handled
	r.handled = nil
	r.mu.Unlock()
	for _, cancel := range running {
		(*cancel)()
	}
}

// report posts a refusal's event, throttled as drops are.
func (r *serverRequests) report(method string, limit int) {
	if n := r.refused.Add(1); reportDrop(int(n)) {
		r.s.post(serverRequestRefused{gen: r.gen, detail: fmt.Sprintf(
			"request %.64q of the server refused (%d already being handled; %d refused in all)", method, limit, n)})
	}
}
