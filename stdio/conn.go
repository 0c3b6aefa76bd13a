package stdio

import (
	"context"
	"fmt"
	"io"
	"maps"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/msgcheck"
	"github.com/mcpsup/mcpsup/session"
)

type markKey struct{} // keys a request's *callMark in its context

// markingConn is go-sdk's transport and connection over the process's
// pipes: it checks each message of stdout (handed on by stdoutFilter) with
// msgcheck before go-sdk decodes it, and marks the requests it writes
// (stdioSession.facts). One write at a time reaches stdin, on a goroutine
// of its own, and Write returns with its context, so a server that stops
// reading holds one message and one goroutine, not go-sdk's write lock: a
// write cut while running goes on whole (written); one cut while waiting
// for the slot was not sent. Responses to the server's requests (written
// with a context that never ends, go-sdk internal/jsonrpc2 processResult)
// are bounded by maxResponses.
type markingConn struct {
	stdin     io.WriteCloser                    // the process's, set before Connect
	drop      func(session.LineDropped, string) // a message read and not handed on, and why in words (required)
	dropped   func(n int)                       // the n-th response not written
	limits    msgcheck.Limits
	in        chan jsonrpc.Message // stdout's messages that passed, to Read
	ended     chan struct{}        // closed by finish, once stdout ended with end
	end       error
	slot      chan struct{} // holds a token while a write runs (capacity 1)
	closing   chan struct{} // closed by Close: writes waiting for the slot give up, stdout's messages go
	responses chan struct{} // a token per response being written (capacity: the bound)
	drops     atomic.Int64  // responses dropped
	writes    sync.WaitGroup
	mu        sync.Mutex
	marks     map[int64]*callMark // requests whose callers wait: id -> mark, forgotten when they return
	highest   int64               // the highest request id handed to Write
	closed    bool                // no write starts once Close began
}

func newMarkingConn(drop func(session.LineDropped, string), dropped func(n int), maxResponses int, limits msgcheck.Limits) *markingConn {
	return &markingConn{drop: drop, dropped: dropped, limits: limits, in: make(chan jsonrpc.Message), ended: make(chan struct{}),
		slot: make(chan struct{}, 1), closing: make(chan struct{}), responses: make(chan struct{}, maxResponses),
		marks: make(map[int64]*callMark)}
}

func (c *markingConn) Connect(context.Context) (mcp.Connection, error) { return c, nil }

func (c *markingConn) SessionID() string { return "" }

// Read returns the next message of stdout that passed, or stdout's end.
func (c *markingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case msg := <-c.in:
		return msg, nil
	case <-c.ended: // after every message passed before it: pass waits for Read
		return nil, c.end
	case <-c.closing:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// finish ends Read with err, once stdout has ended.
func (c *markingConn) finish(err error) {
	c.end = err
	close(c.ended)
}

// pass hands msg, one message of stdout, to Read, unless Close began (stdout
// is read on, so the process never blocks); but a server's request past
// msgcheck's bounds and a response to an id never sent (go-sdk drops it
// silently, internal/jsonrpc2 conn.go) go to drop, and a result msgcheck
// refuses becomes a refusal. go-sdk numbers requests 1, 2, 3 ... (jsonrpc2
// conn.go Call): an id was sent when it is from 1 to the highest written.
// Only an answer a caller waits for is checked: go-sdk decodes no other (it
// retires a call whose context ended, mcp/transport.go call; it takes an
// id's first answer alone).
func (c *markingConn) pass(msg jsonrpc.Message) {
	switch m := msg.(type) {
	case *jsonrpc.Request:
		if problem := c.limits.Problem(m.Method, m.Params, m.Params); problem != "" {
			c.drop(session.LineDropped{Why: session.DropTooManyValues}, fmt.Sprintf("%s from the server: params: %s", msgcheck.CutText(m.Method, 64), problem))
			return
		}
	case *jsonrpc.Response:
		n, isInt := m.ID.Raw().(int64)
		c.mu.Lock()
		sent := isInt && n >= 1 && n <= c.highest
		mark := c.marks[n]
		var method string
		if mark != nil {
			method = mark.method
			delete(c.marks, n) // answered: a second answer to n is awaited by no one
		}
		c.mu.Unlock()
		if m.ID.IsValid() && !sent {
			c.drop(session.LineDropped{Why: session.DropResponse, RequestID: msgcheck.IDText(m.ID)}, "a response to a request never sent")
			return
		}
		if m.Error == nil && mark != nil {
			problem := c.limits.Problem(method, m.Result, m.Result)
			if problem == "" {
				problem, _ = msgcheck.Checker{}.Response(msgcheck.Request{Method: method}, m)
			}
			if problem != "" {
				mark.refused.Store(&problem)
				msg = refusal(m.ID, problem)
			}
		}
	}
	select {
	case c.in <- msg:
	case <-c.closing:
	}
}

// refuse hands Read the refusal of request id's answer, dropped with
// problem, when a caller waits for it.
func (c *markingConn) refuse(id int64, problem string) {
	c.mu.Lock()
	m := c.marks[id]
	c.mu.Unlock()
	if m != nil {
		m.refused.Store(&problem)
		rid, _ := jsonrpc.MakeID(float64(id)) // as JSON's numbers decode
		c.pass(refusal(rid, problem))
	}
}

func (c *markingConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	mark, marked := ctx.Value(markKey{}).(*callMark)
	if !marked {
		mark = new(callMark) // a response, or a request with no one to tell
	}
	req, isReq := msg.(*jsonrpc.Request)
	if isReq && marked && req.Method == "notifications/cancelled" && !mark.written.Load() {
		// go-sdk cancels a call whose context ended with that call's context
		// (mcp/transport.go call), written or not: "Cancellation
		// notifications MUST only reference requests that were previously
		// issued" (MCP 2025-11-25 basic/utilities/cancellation).
		return nil
	}
	if !isReq {
		select {
		case c.responses <- struct{}{}:
		default:
			c.dropped(int(c.drops.Add(1)))
			return nil
		}
	}
	started := false // a write started: it gives back the slot and the response's place
	defer func() {
		if !started && !isReq {
			<-c.responses
		}
	}()
	select {
	case c.slot <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err() // not sent: go-sdk keeps the connection (jsonrpc2 conn.go write)
	case <-c.closing:
		return mcp.ErrConnectionClosed
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		<-c.slot
		return mcp.ErrConnectionClosed
	}
	if isReq {
		if n, ok := req.ID.Raw().(int64); ok {
			c.highest = max(c.highest, n) // before the write: the answer may come before Write returns
			if marked {
				c.keepMark(n, mark, req.Method)
			}
		}
	}
	started = true
	done := make(chan error, 1)
	c.writes.Go(func() { // under mu: Close waits for it
		b, err := jsonrpc.EncodeMessage(msg)
		if err == nil {
			_, err = c.stdin.Write(append(b, '\n'))
		}
		<-c.slot
		if !isReq {
			<-c.responses
		}
		done <- err
	})
	c.mu.Unlock()
	select {
	case err := <-done:
		if err == nil {
			mark.written.Store(true)
		}
		return err
	case <-ctx.Done():
		mark.written.Store(true)
		return ctx.Err()
	}
}

// keepMark remembers request id's mark and method until callMark.done,
// which forgets every id it was kept under (go-sdk's multi-round-trip
// sends them all within one call, mcp/mrtr.go); mu held.
func (c *markingConn) keepMark(id int64, m *callMark, method string) {
	c.marks[id], m.method = m, method
	m.forget = func() {
		c.mu.Lock()
		maps.DeleteFunc(c.marks, func(_ int64, v *callMark) bool { return v == m })
		c.mu.Unlock()
	}
}

// Close closes stdin (ending the write still running), ends the waits for
// the slot and waits for that write.
func (c *markingConn) Close() error {
	c.mu.Lock()
	if !c.closed {
		close(c.closing)
	}
	c.closed = true
	c.mu.Unlock()
	err := c.stdin.Close()
	c.writes.Wait()
	return err
}
