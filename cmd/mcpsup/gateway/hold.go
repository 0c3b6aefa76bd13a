//lint:file-ignore SA1019 sampling and roots, deprecated from protocol 2026-07-28 on (SEP-2577), are what a 2025-era server still asks for

package gateway

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Bounds of the calls the gateway holds for a 2026-07-28 client while a
// 2025-era server's request waits for that client's answer (see
// clientRounds).
const (
	// DefaultHeldCallTimeout is how long a held call waits for its
	// client's retry (Config.HeldCallTimeout): then the server's request
	// gets -32603 (Internal error) and the upstream call is cancelled.
	DefaultHeldCallTimeout = 2 * time.Minute
	// MaxHeldPerSession bounds the calls held at once for one downstream
	// session; a server request past it is answered -32603 at once. (Each
	// held call keeps one server request open at its upstream session,
	// which the supervisor bounds by its Limits.MaxResponsesInFlight, 16
	// by default, for all the sessions' calls to that server.)
	MaxHeldPerSession = 8
	// MaxHeld bounds the calls held at once for every session together.
	MaxHeld = 1024
)

// heldPrefix starts every requestState the gateway hands out for a held
// call; a retry whose requestState does not start with it is a
// 2026-07-28 server's round and goes upstream unchanged. The rest is 32
// random bytes, base64url: a key to the gateway's own table, never decoded
// (MCP 2026-07-28, basic/patterns/mrtr.mdx: "servers MUST treat
// requestState as an attacker-controlled input").
const heldPrefix = "mcpsup-held."

// heldStateLen is the length of every requestState the gateway hands out;
// one of another length is refused without a lookup.
var heldStateLen = len(heldPrefix) + base64.RawURLEncoding.EncodedLen(32)

// ask is one server request of a held call's upstream, waiting for the
// client's answer.
type ask struct {
	req   mcp.InputRequest
	reply chan answer // cap 1
}

type answer struct {
	resp mcp.InputResponse
	err  error
}

// outcome is the upstream call's end: its result (an R of clientRounds)
// or error.
type outcome struct {
	res any
	err error
}

// held is a downstream call of a 2026-07-28 client whose upstream call
// runs on a goroutine of its own (run), so that the server's requests can be
// answered to the client as an InputRequiredResult while the upstream call
// stays open.
type held struct {
	c       *call
	session *mcp.ServerSession
	origin  string // method and downstream name: a retry must name the same

	result chan outcome // cap 1: the upstream call's end
	cancel context.CancelFunc

	// Owned by the request that drives the call (one at a time: the
	// first, then each retry that took it from the table).
	pending map[string]*ask // input request id: the ask sent to the client
	asked   int             // the call's server requests so far: the next id
	rounds  int             // InputRequiredResults answered so far

	// Guarded by holds.mu.
	state string
	timer clockwork.Timer
}

// holds is the table of held calls by requestState.
type holds struct {
	clock   clockwork.Clock
	timeout time.Duration

	mu        sync.Mutex
	byState   map[string]*held
	bySession map[*mcp.ServerSession]int // held calls of each session; a watcher runs while > 0
	closed    bool
}

// errHeldGone is the answer to a server request whose call ended before
// the client answered it.
func errHeldGone(why string) error {
	return &jsonrpc.Error{Code: CodeInternalError, Message: "gateway: the client's answer did not come: " + why}
}

// start runs send, the call's upstream round, on a goroutine of its own
// with a context that outlives ctx's request (its values kept: the relay
// finds the call by them) and ends by h.cancel. The relay keeps c's record
// until send returns.
func (r *relay) start(ctx context.Context, c *call, ss *mcp.ServerSession, origin string, send func(context.Context) (any, error)) *held {
	uctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	h := &held{c: c, session: ss, origin: origin, result: make(chan outcome, 1), cancel: cancel}
	r.retain(c)
	go func() {
		defer r.releaseCall(c)
		defer close(c.ended)
		defer cancel()
		res, err := send(uctx)
		h.result <- outcome{res, err}
	}()
	return h
}

// await waits for the upstream call's end, or its server's next requests
// (up to MaxInputRequests taken at once), or ctx's end.
func (h *held) await(ctx context.Context) (outcome, []*ask, error) {
	select {
	case o := <-h.result:
		return o, nil, nil
	case a := <-h.c.asks:
		asks := []*ask{a}
		for len(asks) < MaxInputRequests {
			select {
			case a := <-h.c.asks:
				asks = append(asks, a)
			default:
				return outcome{}, asks, nil
			}
		}
		return outcome{}, asks, nil
	case <-ctx.Done():
		return outcome{}, nil, ctx.Err()
	}
}

// end abandons the call: its server's requests, waiting or later, are
// answered err; the upstream call then ends with its server's result
// (which no client waits for) or its own bounds (the supervisor's
// Limits.CallTimeout, the session's end). The upstream call is not
// cancelled here: its cancellation would overtake the answers (MCP
// 2025-11-25, basic/utilities/cancellation.mdx: the server then sends no
// response), so the server would not learn why. cancel, as well, does.
func (h *held) end(err error, cancel bool) {
	h.c.abandon(err)
	for id, a := range h.pending {
		a.reply <- answer{err: err}
		delete(h.pending, id)
	}
	for {
		select {
		case a := <-h.c.asks:
			a.reply <- answer{err: err}
		default:
			if cancel {
				h.cancel()
			}
			return
		}
	}
}

// hold puts h in the table under a new requestState, pending asks as its
// input requests, for at most the hold timeout. It fails past a bound.
func (t *holds) hold(h *held) (string, error) {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24 on)
	state := heldPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.closed:
		return "", ErrClosed
	case t.bySession[h.session] >= MaxHeldPerSession:
		return "", fmt.Errorf("%d calls of this client are held already", MaxHeldPerSession)
	case len(t.byState) >= MaxHeld:
		return "", fmt.Errorf("%d calls are held already", MaxHeld)
	}
	h.state = state
	t.byState[state] = h
	h.c.held.Store(true)
	t.bySession[h.session]++
	if t.bySession[h.session] == 1 {
		go t.watch(h.session)
	}
	h.timer = t.clock.AfterFunc(t.timeout, func() {
		if t.remove(h) {
			h.end(errHeldGone(fmt.Sprintf("no retry within %s", t.timeout)), false)
		}
	})
	return state, nil
}

// remove takes h out of the table; false when it was not there (taken by
// a retry, expired, or its session ended).
func (t *holds) remove(h *held) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.removeLocked(h)
}

func (t *holds) removeLocked(h *held) bool {
	if t.byState[h.state] != h {
		return false
	}
	delete(t.byState, h.state)
	h.c.held.Store(false)
	h.timer.Stop()
	if t.bySession[h.session]--; t.bySession[h.session] <= 0 {
		delete(t.bySession, h.session)
	}
	return true
}

// take returns the held call a retry's requestState names, out of the
// table: it must be one the gateway handed out to this session, for the
// same method and name, not expired (mrtr.mdx, Server Requirements:
// servers SHOULD verify "the authenticated principal", "a short expiry"
// and "an identifier for the originating request"). Anything else is
// -32602 (Invalid params) with class "request-state", and leaves the
// table as it was.
func (t *holds) take(ss *mcp.ServerSession, origin, state string) (*held, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	h := t.byState[state]
	if len(state) != heldStateLen || h == nil || h.session != ss || h.origin != origin {
		return nil, wireError(CodeInvalidParams,
			"gateway: requestState names no call held for this client and request (unknown, expired or answered already)",
			ErrorData{Class: "request-state", Delivery: "not-sent"})
	}
	t.removeLocked(h)
	return h, nil
}

// watch waits for the end of a session with held calls and ends them.
func (t *holds) watch(ss *mcp.ServerSession) {
	_ = ss.Wait()
	t.endWhere(func(h *held) bool { return h.session == ss }, errHeldGone("the client's session ended"), false)
}

// close ends every held call; no more are held.
func (t *holds) close() {
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
	t.endWhere(func(*held) bool { return true }, errHeldGone("the gateway closed"), true)
}

func (t *holds) endWhere(match func(*held) bool, err error, cancel bool) {
	var ended []*held
	t.mu.Lock()
	for _, h := range t.byState {
		if match(h) && t.removeLocked(h) {
			ended = append(ended, h)
		}
	}
	t.mu.Unlock()
	for _, h := range ended {
		h.end(err, cancel)
	}
}

// clientRounds runs a call of a 2026-07-28 client (MCP 2026-07-28,
// basic/patterns/mrtr.mdx). Its upstream round runs on its own goroutine
// (start): a 2025-era server's requests during it (elicitation/create,
// sampling/createMessage, roots/list: relay.inputFor) are answered to the
// client as an InputRequiredResult (wrap) whose inputRequests are those
// requests and whose requestState names the held call, which stays open
// for the hold timeout. The client's retry with that requestState
// (take) answers each request from its inputResponses and waits again: for
// the call's result, or the server's next requests (the next
// InputRequiredResult); a request it left unanswered is asked again
// ("the server SHOULD respond with a new InputRequiredResult requesting the
// missing information again", Error Handling). At most MaxInputRounds
// InputRequiredResults a call; past that, or past MaxHeldPerSession or
// MaxHeld, the server's requests get -32603 and the call's result is the
// server's. A retry whose requestState is not the gateway's goes upstream
// with it (send: a 2026-07-28 server's own round).
func clientRounds[R any](ctx context.Context, r *relay, ss *mcp.ServerSession, origin string, in input,
	send func(context.Context, input) (R, error), wrap func(mcp.InputRequestMap, string) R) (R, error) {
	var zero R
	var h *held
	if strings.HasPrefix(in.state, heldPrefix) {
		var err error
		if h, err = r.holds.take(ss, origin, in.state); err != nil {
			return zero, err
		}
		for id, a := range h.pending {
			if resp, ok := in.responses[id]; ok {
				a.reply <- answer{resp: resp}
				delete(h.pending, id)
			}
		}
	} else {
		c, _ := ctx.Value(callKey{}).(*call)
		if c == nil || c.asks == nil {
			return send(ctx, in)
		}
		h = r.start(ctx, c, ss, origin, func(ctx context.Context) (any, error) { return send(ctx, in) })
	}
	for {
		if len(h.pending) > 0 {
			if res, ok := holdFor(r, h, wrap); ok {
				return res, nil
			}
		}
		o, asks, err := h.await(ctx)
		switch {
		case err != nil:
			h.end(errHeldGone("the client cancelled its call"), true)
			return zero, err
		case asks == nil:
			if o.err != nil {
				return zero, o.err
			}
			return o.res.(R), nil
		}
		h.pending = make(map[string]*ask, len(asks))
		for _, a := range asks {
			h.asked++ // a fresh id per request of the call: never one answered before
			h.pending[strconv.Itoa(h.asked)] = a
		}
	}
}

// holdFor holds h for its pending asks and returns the InputRequiredResult
// that carries them; past a bound it answers them with -32603 instead
// (false), and the call goes on.
func holdFor[R any](r *relay, h *held, wrap func(mcp.InputRequestMap, string) R) (R, bool) {
	var zero R
	reqs := make(mcp.InputRequestMap, len(h.pending))
	for id, a := range h.pending {
		reqs[id] = a.req
	}
	var state string
	err := fmt.Errorf("%d input rounds answered already", MaxInputRounds)
	if h.rounds < MaxInputRounds {
		h.rounds++
		state, err = r.holds.hold(h)
	}
	if err != nil {
		for id, a := range h.pending {
			a.reply <- answer{err: &jsonrpc.Error{Code: CodeInternalError, Message: "gateway: the call is not held for its client: " + err.Error()}}
			delete(h.pending, id)
		}
		return zero, false
	}
	return wrap(reqs, state), true
}
