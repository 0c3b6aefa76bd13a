package supervisor

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/internal/lazyctx"
	"github.com/mcpsup/mcpsup/probes"
	seam "github.com/mcpsup/mcpsup/session"
)

// held is one session of the supervisor's, of generation gen, made before
// it opens: its reports, from go-sdk's and the transport's goroutines,
// never blocking; the bound on the server's requests; the lifetime of its
// calls and of its handlers of the server's requests.
type held struct {
	s         *Supervisor
	gen       uint64
	conn      string       // events.Event.Connection; with sess, set by the loop as it holds the session
	sess      seam.Session // nil before
	declined  atomic.Bool  // the push stream was declined: polled
	running   atomic.Int32 // the host-handled server requests being handled
	refused   atomic.Int32 // the server requests refused so far
	client    *mcp.Client  // the session's, set while it opens: in the roots' set until it ends
	callsLife lazyctx.Life // see calls
}

// calls returns the context of the session's calls and of its handlers of
// the server's requests, a child of Supervisor.callLife made at its first
// use: it ends releaseGrace after the session's release, at once on Close
// (go-sdk's Close waits for both; a server may hold a DELETE until its
// requests return).
func (h *held) calls() context.Context { return h.callsLife.Context(h.s.callLife) }

// endCalls ends the context of calls, now or at its making.
func (h *held) endCalls() { h.callsLife.End() }

// listChanged takes a notifications/<list>/list_changed.
func (h *held) listChanged(l probes.List) {
	h.s.post(func(s *Supervisor) { s.wantRelist(h.gen, setOf(l)) }) // resources: templates too (listSet.lists)
}

// listTTL takes a list result's ttlMs (SEP-2549).
func (h *held) listTTL(l probes.List, ms int) {
	h.s.post(func(s *Supervisor) { s.armListTTL(h.gen, l, ms) })
}

// middleware is the receiving middleware of the session's client: go-sdk's
// Close waits for the handlers, so they end with the session's calls, and
// at most Config.Limits.MaxResponsesInFlight host-handled ones run at once
// (one past it: -32603, internal error, server-request-refused).
func (h *held) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		// The host's handlers (sampling, elicitation) are the ones bounded.
		if method == "sampling/createMessage" || method == "elicitation/create" {
			limit := h.s.cfg.Limits.MaxResponsesInFlight
			if int(h.running.Add(1)) > limit {
				h.running.Add(-1)
				h.report(method, limit)
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
					Message: fmt.Sprintf("client busy: %d requests of the server's already being handled", limit)}
			}
			defer h.running.Add(-1)
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(h.calls(), cancel)()
		return next(ctx, method, req)
	}
}

// report posts a refusal's event, throttled as drops are.
func (h *held) report(method string, limit int) {
	if n := h.refused.Add(1); reportDrop(int(n)) {
		h.s.post(emit(events.Event{Kind: events.KindServerRequestRefused, Generation: h.gen,
			Op: events.CutName(method), Bound: limit, Count: int(n)}))
	}
}
