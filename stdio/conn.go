package stdio

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/msgcheck"
)

// writtenKey marks a request's context; markingConn sets the mark once the
// request is written whole to the process's stdin.
type writtenKey struct{}

// deliveryFacts wraps the error of every request with how far it got, for
// classify.DeliveryOf: a request written to the server's stdin that got no
// answer may have run (classify.WrittenError); one that was never written
// did not (classify.NotSentError). It is the facts middleware of
// session.Spec.Client.
func deliveryFacts(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		written := new(atomic.Bool)
		res, err := next(context.WithValue(ctx, writtenKey{}, written), method, req)
		if err == nil {
			return res, nil
		}
		if written.Load() {
			return res, &classify.WrittenError{Err: err}
		}
		return res, &classify.NotSentError{Err: err}
	}
}

// markingTransport's connections mark the requests they write, bound
// every write by its context, and drop the responses to ids no request
// carried, reported to stray: go-sdk drops them without a word
// (internal/jsonrpc2 conn.go, "How should we report unexpected
// responses?"), and a server that answers ids it was never sent is broken.
type markingTransport struct {
	inner        mcp.Transport
	stray        func(jsonrpc.ID)
	dropped      func(n int) // the n-th response dropped (see markingConn)
	maxResponses int         // Options.MaxResponses
	// limits are Options.Limits, and refused hears every request or
	// notification of the server's dropped past them (see markingConn).
	limits  msgcheck.Limits
	refused func(why string)
}

func (t *markingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &markingConn{Connection: conn, stray: t.stray, refused: t.refused, dropped: t.dropped,
		maxResponses: t.maxResponses, limits: t.limits}, nil
}

// markingConn writes each message on a goroutine of its own and returns
// when the write is done or the message's context is: a server that stops
// reading its stdin fills the pipe, and go-sdk's write (under its one
// write lock) would then hold every request, the keepalive ping included,
// past its context. A write cut so goes on in the background, whole, until
// it completes or the process's stdin is closed; its request counts as
// written (it may still reach the server). A write that fails (the process
// ended mid-write) did not deliver its request whole: not written.
//
// A response to a request of the server's is written with a context that
// never ends (go-sdk's internal/jsonrpc2 processResult), so a server that
// sends requests and stops reading its stdin would hold a goroutine or two
// per request; at most maxResponses are written at once, and one
// past it is dropped (Write returns nil, nothing is written) and told to
// dropped, as the wire layer drops the POST of one.
//
// A list page (tools/list and the others) with more than maxItems items is
// answered in the server's place with a JSON-RPC error naming the bound
// (code msgcheck.CodeRefused, as the wire layer's refusals), before go-sdk
// decodes its items each into a struct of its own: the pagination's item
// bound would come only after (msgcheck.Limits).
type markingConn struct {
	mcp.Connection
	stray        func(jsonrpc.ID)
	refused      func(why string)
	dropped      func(n int)
	maxResponses int
	limits       msgcheck.Limits
	mu           sync.Mutex
	lists        map[int64]string // the requests written and not answered whose result has an array counted (msgcheck.CountsItems): id -> method
	forgotUpTo   int64            // the highest id trackList forgot unanswered: an answer to one no higher is held to every count
	closed       bool             // no write starts once Close began
	highest      int64            // the highest request id handed to Write
	writes       sync.WaitGroup   // writes still running
	responses    int              // responses being written
	drops        int              // responses dropped
}

// Read returns the next message but a response to an id no request
// carried, which goes to stray, and a request or notification whose params
// hold more than maxValues JSON values, which goes to refused; a response
// whose result holds more, a list page with more than maxItems items, a
// prompt with more than maxMessages messages, or a call result or resource
// with more content blocks than ContentBlocks, is returned as a JSON-RPC
// error naming the bound, before go-sdk decodes it; a request with more
// messages goes to refused too. go-sdk numbers its requests 1, 2, 3 ...
// (internal/jsonrpc2 conn.go Call), so an id was sent exactly when it is an
// integer from 1 to the highest one written: no id is kept per request, and
// a request that is never answered costs nothing. (A second answer to an id
// is go-sdk's to drop.)
func (c *markingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if req, ok := msg.(*jsonrpc.Request); ok && err == nil {
			// go-sdk's stdio connection keeps params raw: only they are left to decode.
			if problem := c.limits.Problem(req.Method, req.Params, req.Params); problem != "" {
				if c.refused != nil {
					c.refused(fmt.Sprintf("%s from the server: params: %s", cutText(req.Method, 64), problem))
				}
				continue
			}
		}
		r, ok := msg.(*jsonrpc.Response)
		if err != nil || !ok || !r.ID.IsValid() || c.stray == nil {
			return msg, err
		}
		n, isInt := r.ID.Raw().(int64)
		c.mu.Lock()
		sent := isInt && n >= 1 && n <= c.highest
		method, tracked := "", false
		if sent {
			method, tracked = c.lists[n]
			delete(c.lists, n)
		}
		forgotten := sent && !tracked && n <= c.forgotUpTo
		c.mu.Unlock()
		if !sent {
			c.stray(r.ID)
			continue
		}
		if r.Error == nil {
			var problem string
			if forgotten {
				// Perhaps a counted request's: its method is no longer known.
				problem = c.limits.ProblemOfAnyMethod(r.Result)
			} else {
				problem = c.limits.Problem(method, r.Result, r.Result)
				if problem == "" {
					// The decoded answer's rules, as on HTTP: a ttlMs go-sdk
					// can decode, a resultType it can act on.
					problem, _ = msgcheck.Checker{}.Response(msgcheck.Request{Method: method}, r)
				}
			}
			if problem != "" {
				return &jsonrpc.Response{ID: r.ID, Error: &jsonrpc.Error{Code: msgcheck.CodeRefused,
					Message: "mcpsup: answer refused: " + problem}}, nil
			}
		}
		return msg, nil
	}
}

// maxListsTracked bounds the requests markingConn remembers unanswered for
// the array count of their results (lists, prompts/get, tools/call,
// resources/read): past it the oldest is forgotten, so a server that never
// answers them costs no more; the answer to a forgotten one, whose method
// is no longer known, is held to every method's counts
// (msgcheck.Limits.ProblemOfAnyMethod).
const maxListsTracked = 64

// trackList remembers the request id of method, whose result has an array
// counted. Called with mu held.
func (c *markingConn) trackList(id int64, method string) {
	if c.lists == nil {
		c.lists = make(map[int64]string)
	}
	if len(c.lists) >= maxListsTracked {
		oldest := id
		for k := range c.lists {
			oldest = min(oldest, k)
		}
		delete(c.lists, oldest)
		c.forgotUpTo = max(c.forgotUpTo, oldest)
	}
	c.lists[id] = method
}

func (c *markingConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	mark, _ := ctx.Value(writtenKey{}).(*atomic.Bool)
	req, isReq := msg.(*jsonrpc.Request)
	if !isReq || mark == nil {
		mark = new(atomic.Bool) // a response, or a request with no one to tell
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return mcp.ErrConnectionClosed
	}
	if isReq {
		if n, ok := req.ID.Raw().(int64); ok {
			if n > c.highest {
				c.highest = n // before the write: the answer may come before Write returns
			}
			if msgcheck.CountsItems(req.Method) {
				c.trackList(n, req.Method)
			}
		}
	} else if c.responses >= c.maxResponses {
		c.drops++
		n := c.drops
		c.mu.Unlock()
		if c.dropped != nil {
			c.dropped(n)
		}
		return nil
	} else {
		c.responses++
	}
	c.writes.Add(1)
	c.mu.Unlock()
	done := make(chan error, 1)
	go func() {
		defer c.writes.Done()
		err := c.Connection.Write(context.WithoutCancel(ctx), msg)
		if !isReq {
			c.mu.Lock()
			c.responses--
			c.mu.Unlock()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			mark.Store(true)
		}
		return err
	case <-ctx.Done():
		mark.Store(true)
		return ctx.Err()
	}
}

// Close closes the connection (the process's stdin with it, which ends
// the writes still running) and waits for those writes.
func (c *markingConn) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	err := c.Connection.Close()
	c.writes.Wait()
	return err
}

// cutText shortens untrusted text quoted in a fact.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
