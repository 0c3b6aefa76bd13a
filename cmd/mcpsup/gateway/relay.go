//lint:file-ignore SA1019 sampling and logging, deprecated from protocol 2026-07-28 on (SEP-2577), are relayed for 2025-era servers

package gateway

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxSessionsPerServer bounds how many of a server's go-sdk client sessions
// the relay remembers (to tell which server a server request came from): a
// supervisor has one live session, and one more while it replaces it.
const maxSessionsPerServer = 4

// CodeMethodNotFound is -32601 (Method not found): the answer to an
// upstream's elicitation/create or sampling/createMessage when the
// downstream client of the call did not declare the capability (MCP
// 2025-11-25, client/elicitation.mdx: "Clients that support elicitation
// MUST declare the elicitation capability"; a server sends it only to such a
// client).
const CodeMethodNotFound = jsonrpc.CodeMethodNotFound

// relay carries what passes between a downstream client's call and the
// upstream server that serves it: progress (the gateway's own token upstream,
// the client's downstream), and the server's requests made while the call
// runs (elicitation, sampling), sent to that call's client.
//
// Bounds: one progress entry and one call record per call in flight (removed
// when the call returns); maxSessionsPerServer client sessions per server;
// one relayed request at a time per call, each bounded by the relay timeout.
type relay struct {
	g       *Gateway
	timeout time.Duration
	holds   *holds

	mu       sync.Mutex
	next     uint64
	progress map[string]*call                // upstream token: the call
	sessions map[*mcp.ClientSession]string   // upstream session: server
	recent   map[string][]*mcp.ClientSession // server: its sessions, oldest first
	calls    map[string]map[*call]struct{}   // server: its calls in flight
	closed   bool
}

// maxQueued bounds the notifications of one call (progress, log messages)
// waiting to be forwarded; past it the oldest is dropped (a later progress
// supersedes an earlier one: progress only increases, MCP 2025-11-25
// basic/utilities/progress.mdx).
const maxQueued = 32

// notifyStream forwards one call's notifications to its client in order,
// on a goroutine of its own that runs only while some wait, so that the
// upstream session's notification handler never waits for a downstream
// client; the call waits for it before it returns its result.
type notifyStream struct {
	ctx context.Context // the downstream request's: routes each notification to its stream

	mu      sync.Mutex
	queue   []func(context.Context)
	sending bool
	closed  bool          // the call returned: nothing more is taken
	drained chan struct{} // closed when the queue is empty again
}

// push queues send; false once the call returned.
func (p *notifyStream) push(send func(context.Context)) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	if len(p.queue) >= maxQueued {
		p.queue = p.queue[1:]
	}
	p.queue = append(p.queue, send)
	if !p.sending {
		p.sending = true
		p.drained = make(chan struct{})
		go p.run()
	}
	return true
}

func (p *notifyStream) run() {
	for {
		p.mu.Lock()
		if len(p.queue) == 0 {
			p.sending = false
			close(p.drained)
			p.mu.Unlock()
			return
		}
		send := p.queue[0]
		p.queue = p.queue[1:]
		p.mu.Unlock()
		ctx, cancel := context.WithTimeout(p.ctx, DefaultProgressTimeout)
		send(ctx)
		cancel()
	}
}

// close takes no more notifications and waits until those pushed are sent
// (each bounded by DefaultProgressTimeout), so that they reach the client
// before the call's result.
func (p *notifyStream) close() {
	p.mu.Lock()
	p.closed = true
	ch, sending := p.drained, p.sending
	p.mu.Unlock()
	if sending {
		<-ch
	}
}

// call is one downstream request in flight through the gateway.
type call struct {
	session *mcp.ServerSession
	token   any           // the client's progress token, nil when none
	up      string        // the gateway's progress token upstream, "" when none
	out     notifyStream  // the call's notifications to its client
	server  string        // set by the upstream middleware; "" until sent
	turn    chan struct{} // cap 1: one relayed request at a time
	refs    int           // guarded by relay.mu: the request and the upstream round (start) that keep the record

	// For a client that takes InputRequiredResults (2026-07-28), else nil:
	// the server's requests to answer by one (inputFor), and closed when
	// the upstream round ended.
	asks  chan *ask
	ended chan struct{}
	held  atomic.Bool // waiting for the client's retry (holds)

	goneOnce sync.Once
	gone     chan struct{} // closed when the call is abandoned (held.end)
	goneErr  error         // why; set before gone is closed
}

// abandoned reports whether c was abandoned (held.end).
func (c *call) abandoned() bool {
	if c.gone == nil {
		return false
	}
	select {
	case <-c.gone:
		return true
	default:
		return false
	}
}

// abandon marks c abandoned for err: its server's later requests get err.
func (c *call) abandon(err error) {
	c.goneOnce.Do(func() {
		c.goneErr = err
		close(c.gone)
	})
}

type callKey struct{}

func newRelay(g *Gateway, timeout time.Duration, hold *holds) *relay {
	return &relay{
		g:        g,
		timeout:  timeout,
		holds:    hold,
		progress: map[string]*call{},
		sessions: map[*mcp.ClientSession]string{},
		recent:   map[string][]*mcp.ClientSession{},
		calls:    map[string]map[*call]struct{}{},
	}
}

// tokenSetter is the params of a request that carries a progress token.
type tokenSetter interface{ SetProgressToken(any) }

// begin registers a downstream request from ss: when token is not nil, the
// upstream request (params) gets a token of the gateway's own, unique among
// every call in flight (MCP 2025-11-25, basic/utilities/progress.mdx: "The
// progress token MUST be ... unique across all active requests"), whose
// notifications reach ss under the client's token. done ends both.
func (r *relay) begin(ctx context.Context, ss *mcp.ServerSession, token any, params tokenSetter) (context.Context, func()) {
	c := &call{session: ss, token: token, out: notifyStream{ctx: ctx}, turn: make(chan struct{}, 1), refs: 1}
	if ss != nil && takesInputRequired(ss.InitializeParams()) {
		c.asks = make(chan *ask, MaxInputRequests)
		c.ended = make(chan struct{})
		c.gone = make(chan struct{})
	}
	var up string
	r.mu.Lock()
	if token != nil && params != nil && ss != nil {
		r.next++
		up = "mcpsup-" + strconv.FormatUint(r.next, 10)
		r.progress[up] = c
	}
	r.mu.Unlock()
	if up != "" {
		params.SetProgressToken(up)
	}
	c.up = up
	return context.WithValue(ctx, callKey{}, c), func() {
		c.out.close()
		r.releaseCall(c)
	}
}

// retain keeps c's record while its upstream round runs past its request
// (a held call: see start).
func (r *relay) retain(c *call) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c.refs++
}

// releaseCall drops c's record with the last of its request and its
// upstream round.
func (r *relay) releaseCall(c *call) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c.refs--; c.refs > 0 {
		return
	}
	if c.up != "" {
		delete(r.progress, c.up)
	}
	if c.server != "" {
		delete(r.calls[c.server], c)
		if len(r.calls[c.server]) == 0 {
			delete(r.calls, c.server)
		}
	}
}

// track is the sending middleware of server's sessions: it learns which
// server each go-sdk client session is, and which server a call went to.
func (r *relay) track(server string) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			cs, _ := req.GetSession().(*mcp.ClientSession)
			c, _ := ctx.Value(callKey{}).(*call)
			if cs != nil || c != nil {
				r.note(server, cs, c)
			}
			return next(ctx, method, req)
		}
	}
}

func (r *relay) note(server string, cs *mcp.ClientSession, c *call) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	if cs != nil {
		if _, ok := r.sessions[cs]; !ok {
			r.sessions[cs] = server
			list := append(r.recent[server], cs)
			if len(list) > maxSessionsPerServer {
				delete(r.sessions, list[0])
				list = list[1:]
			}
			r.recent[server] = list
		}
	}
	if c != nil && c.server == "" {
		c.server = server
		if r.calls[server] == nil {
			r.calls[server] = map[*call]struct{}{}
		}
		r.calls[server][c] = struct{}{}
	}
}

// forget drops what the relay knows of server (it left the hub).
func (r *relay) forget(server string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, cs := range r.recent[server] {
		delete(r.sessions, cs)
	}
	delete(r.recent, server)
}

func (r *relay) close() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.holds.close()
}

// forwardProgress forwards an upstream progress notification to the
// downstream client whose call it is for, under that client's token (queued:
// see notifyStream); a token the gateway did not hand out, or whose call
// returned, is dropped. go-sdk's client hands a call its response as soon as
// it is read, while the notifications read before it may still wait in its
// queue of notifications: one that reaches this handler after its call
// returned is dropped.
func (r *relay) forwardProgress(ctx context.Context, req *mcp.ProgressNotificationClientRequest) {
	if req == nil || req.Params == nil {
		return
	}
	tok, ok := req.Params.ProgressToken.(string)
	if !ok {
		return
	}
	r.mu.Lock()
	c, ok := r.progress[tok]
	r.mu.Unlock()
	if !ok {
		return
	}
	p := *req.Params
	p.ProgressToken = c.token
	c.out.push(func(ctx context.Context) { _ = c.session.NotifyProgress(ctx, &p) })
}

// target returns the call an upstream request of session cs belongs to: the
// one call in flight to its server, or the calls of one downstream session
// (any of which may have caused it; one not held waiting for its client's
// retry first: a held call's server waits for its answer). An abandoned
// call (held.end) is not counted. A request of the server's while calls
// of several downstream sessions are in flight cannot be told apart (go-sdk's
// client hands no related request id to the handler): it is refused.
func (r *relay) target(cs *mcp.ClientSession, method string) (*call, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	server, ok := r.sessions[cs]
	if !ok {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("gateway: %s from a session the gateway does not know", method)}
	}
	var pick *call
	for c := range r.calls[server] {
		if c.abandoned() {
			continue // it takes no more requests: not one that could be for it
		}
		if pick != nil && pick.session != c.session {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("gateway: %s: calls of several clients are in flight to %q; the one it is for is unknown", method, server)}
		}
		if pick == nil || (pick.held.Load() && !c.held.Load()) {
			pick = c
		}
	}
	if pick == nil || pick.session == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("gateway: %s outside any client's call to %q", method, server)}
	}
	return pick, nil
}

// logMessage passes an upstream notifications/message on to the downstream
// client of the call in flight to that server, in order with the call's
// progress and before its result (or, outside any call, with one
// downstream session, to it: go-sdk's client hands a call its response
// while the notifications read before it may still wait in its queue, so a
// call's last message can come after the call returned); ServerSession.Log applies that client's
// level. A message no client can be told apart for is dropped. The logger
// names the server when the message names none.
func (r *relay) logMessage(ctx context.Context, req *mcp.LoggingMessageRequest) {
	if req == nil || req.Params == nil {
		return
	}
	p := *req.Params
	if p.Logger == "" {
		r.mu.Lock()
		p.Logger = r.sessions[req.Session]
		r.mu.Unlock()
	}
	if c, err := r.target(req.Session, "notifications/message"); err == nil &&
		c.out.push(func(ctx context.Context) { _ = c.session.Log(ctx, &p) }) {
		return
	}
	var ss *mcp.ServerSession
	n := 0
	for s := range r.g.server.Sessions() {
		ss, n = s, n+1
	}
	if n != 1 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, DefaultProgressTimeout)
	defer cancel()
	_ = ss.Log(ctx, &p)
}

// rootsMiddleware is the receiving middleware of every upstream session: a
// server's roots/list during a call is answered by the downstream client of
// that call (MCP 2025-11-25, client/roots.mdx), one relay at a time per
// call, bounded by the relay timeout, when that client declared roots;
// otherwise the supervisor answers with its own roots (Config.Supervisor's
// Roots, none by default).
func (r *relay) rootsMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "roots/list" {
			return next(ctx, method, req)
		}
		cs, _ := req.GetSession().(*mcp.ClientSession)
		c, err := r.target(cs, method)
		if err != nil {
			return next(ctx, method, req)
		}
		ip := c.session.InitializeParams()
		if ip == nil || ip.Capabilities == nil || (ip.Capabilities.RootsV2 == nil && !ip.Capabilities.Roots.ListChanged) {
			return next(ctx, method, req)
		}
		if c.asks != nil {
			return inputFor[*mcp.ListRootsResult](ctx, c, &mcp.ListRootsParams{})
		}
		if !takesRequests(ip) {
			return next(ctx, method, req)
		}
		return relayed(r, ctx, c, func(ctx context.Context) (*mcp.ListRootsResult, error) {
			return c.session.ListRoots(ctx, &mcp.ListRootsParams{})
		})
	}
}

// takesRequests reports whether the client of ip takes server requests and
// declared capabilities: a 2025-era client does; a 2026-07-28 one takes
// none (MCP 2026-07-28, basic/patterns/mrtr.mdx: "The previous pattern of
// server-initiated requests is no longer supported").
func takesRequests(ip *mcp.InitializeParams) bool {
	return ip != nil && ip.Capabilities != nil && ip.ProtocolVersion < protocol2026
}

// relayed runs send for the call c, one at a time per call, bounded by the
// relay timeout.
func relayed[R any](r *relay, ctx context.Context, c *call, send func(context.Context) (R, error)) (R, error) {
	var zero R
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	select {
	case c.turn <- struct{}{}:
	case <-ctx.Done():
		return zero, ctx.Err()
	}
	defer func() { <-c.turn }()
	return send(ctx)
}

// elicit relays an upstream elicitation/create to the downstream client of
// the call that caused it.
func (r *relay) elicit(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	c, err := r.target(req.Session, "elicitation/create")
	if err != nil {
		return nil, err
	}
	if err := supports(c.session.InitializeParams(), req.Params); err != nil {
		return nil, &jsonrpc.Error{Code: CodeMethodNotFound, Message: "gateway: the client of this call does not support elicitation"}
	}
	if c.asks != nil {
		return inputFor[*mcp.ElicitResult](ctx, c, req.Params)
	}
	if !takesRequests(c.session.InitializeParams()) {
		return nil, &jsonrpc.Error{Code: CodeMethodNotFound, Message: "gateway: the client of this call takes no server requests"}
	}
	return relayed(r, ctx, c, func(ctx context.Context) (*mcp.ElicitResult, error) {
		return c.session.Elicit(ctx, req.Params)
	})
}

// createMessage relays an upstream sampling/createMessage to the downstream
// client of the call that caused it.
func (r *relay) createMessage(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	c, err := r.target(req.Session, "sampling/createMessage")
	if err != nil {
		return nil, err
	}
	if err := supports(c.session.InitializeParams(), req.Params); err != nil {
		return nil, &jsonrpc.Error{Code: CodeMethodNotFound, Message: "gateway: the client of this call does not support sampling"}
	}
	if c.asks != nil {
		resp, err := inputFor[*mcp.CreateMessageWithToolsResult](ctx, c, req.Params)
		if err != nil {
			return nil, err
		}
		if len(resp.Content) != 1 {
			return nil, &jsonrpc.Error{Code: CodeInternalError, Message: fmt.Sprintf("gateway: the client's sampling answer has %d content blocks, where sampling/createMessage takes one", len(resp.Content))}
		}
		return &mcp.CreateMessageResult{Meta: resp.Meta, Content: resp.Content[0], Model: resp.Model, Role: resp.Role, StopReason: resp.StopReason}, nil
	}
	if !takesRequests(c.session.InitializeParams()) {
		return nil, &jsonrpc.Error{Code: CodeMethodNotFound, Message: "gateway: the client of this call takes no server requests"}
	}
	return relayed(r, ctx, c, func(ctx context.Context) (*mcp.CreateMessageResult, error) {
		return c.session.CreateMessage(ctx, req.Params)
	})
}

// inputFor hands the server request ir to the held-call machinery of c, a
// call of a 2026-07-28 client (clientRounds), and waits for the client's
// answer, which must be an R (go-sdk decodes an inputResponse by its keys:
// "action" an elicitation's, "role" a sampling's, "roots" a roots/list's);
// the call's end first answers -32603 (Internal error), and so does an
// answer of another kind.
func inputFor[R mcp.InputResponse](ctx context.Context, c *call, ir mcp.InputRequest) (R, error) {
	var zero R
	a := &ask{req: ir, reply: make(chan answer, 1)}
	select {
	case <-c.gone:
		return zero, c.goneErr
	default:
	}
	select {
	case c.asks <- a:
	case <-c.gone:
		return zero, c.goneErr
	case <-c.ended:
		return zero, errHeldGone("the call ended")
	case <-ctx.Done():
		return zero, ctx.Err()
	}
	select {
	case ans := <-a.reply:
		if ans.err != nil {
			return zero, ans.err
		}
		resp, ok := ans.resp.(R)
		if !ok {
			return zero, &jsonrpc.Error{Code: CodeInternalError, Message: fmt.Sprintf("gateway: the client answered %T where %T was asked", ans.resp, zero)}
		}
		return resp, nil
	case <-c.gone:
		return zero, c.goneErr
	case <-c.ended:
		return zero, errHeldGone("the call ended")
	case <-ctx.Done():
		return zero, ctx.Err()
	}
}
