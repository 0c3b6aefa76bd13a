package supervisor

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/httpsession"
	"github.com/mcpsup/mcpsup/msgcheck"
	"github.com/mcpsup/mcpsup/probes"
	seam "github.com/mcpsup/mcpsup/session"
)

// commandConnector opens sessions with a stdio server: every Dial starts
// the process and runs the handshake on its stdin and stdout. It runs
// go-sdk's client on an mcp.IOTransport over its own exec rather than on
// mcp.CommandTransport, which hands the raw stdout to go-sdk's decoder (one
// stray line fails the connection: see stdoutFilter), leaves the process in
// the supervisor's own process group (its children outlive it) and has one
// grace period for both stop steps.
type commandConnector struct {
	s *Supervisor

	mu      sync.Mutex
	version string // the protocol version to ask for: Config.Era, then learned
}

func newCommandConnector(s *Supervisor) *commandConnector {
	c := &commandConnector{s: s}
	switch s.cfg.Era {
	case Era2025:
		c.version = "2025-11-25"
	case Era20260728:
		c.version = "2026-07-28"
	}
	return c
}

// Attach is never asked for: a command supervisor has no resume state.
func (c *commandConnector) Attach(context.Context, dialSpec) (session, error) {
	return nil, &ResumeStateError{Field: "resume", Reason: "a stdio server has no session to resume"}
}

// Dial starts the process and runs the handshake, bounded by ctx; a failed
// handshake ends the process.
func (c *commandConnector) Dial(ctx context.Context, spec dialSpec) (session, error) {
	cfg := c.s.cfg
	cmd := *cfg.Command
	f := &stdoutFilter{max: cmd.MaxLineBytes, dropped: c.dropped(spec.gen)}
	errLog := &stderrLog{server: cfg.Name, log: cfg.Logger, keep: cmd.StderrTail, redact: &c.s.redact.Redactor}
	p, err := startProc(cmd, f, errLog, c.exited(spec.gen))
	if err != nil {
		return nil, err
	}
	reqs := c.s.serverRequests(spec.gen)
	cl := c.s.sessionClient(spec.hooks, reqs, stdioFacts) // stdioFacts in place of the wire layer's facts
	c.s.roots.attach(cl)
	c.mu.Lock()
	version := c.version
	c.mu.Unlock()
	tr := &markingTransport{inner: &mcp.IOTransport{Reader: p.out, Writer: p.stdin, MaxLineLength: -1}, // the filter bounds lines
		stray:   func(id jsonrpc.ID) { f.drop(fmt.Sprintf("a response to id %v, a request never sent", id.Raw())) },
		refused: func(why string) { f.drop(why) },
		dropped: c.droppedResponse(spec.gen), maxResponses: cfg.MaxResponsesInFlight,
		limits: cfg.AnswerLimits.MessageLimits(cfg.MaxItems)}
	cs, err := cl.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		reqs.handlers.close()
		c.s.roots.detach(cl)
		if ctx.Err() != nil {
			p.stop() // the handshake took too long: the process is of no use
		} else {
			p.stopUnlessExiting()
		}
		if exit := p.wait(); exit != nil && exit.Stop == StopNone {
			// The process died during the handshake: that is the news.
			return nil, &handshakeExitError{exit: exit, err: err}
		}
		return nil, err
	}
	sess := &commandSession{Lister: probes.SessionLister(cs), sdkCalls: sdkCalls{cs}, p: p, unroot: func() { c.s.roots.detach(cl) }, requests: reqs}
	if res := cs.InitializeResult(); res != nil {
		sess.version = res.ProtocolVersion
		c.mu.Lock()
		c.version = res.ProtocolVersion
		c.mu.Unlock()
	}
	if every := cfg.KeepAlive; every > 0 {
		sess.ka = seam.StartKeepAlive(cfg.Clock, every, cfg.Logger, sess.Alive, func() { p.stop() })
	}
	return sess, nil
}

// handshakeExitError is a handshake that failed because the process
// exited: it unwraps to both, the exit first.
type handshakeExitError struct {
	exit *ProcessExitError
	err  error
}

func (e *handshakeExitError) Error() string {
	return e.exit.Error() + " during the handshake: " + e.err.Error()
}
func (e *handshakeExitError) Unwrap() []error { return []error{e.exit, e.err} }

// dropped relays the dropped stdout lines of generation gen into events:
// each of the first maxDropEvents, then every dropEventEvery-th (each
// names the count), so a server that prints a log line per message does
// not flood the sink.
func (c *commandConnector) dropped(gen uint64) func(int, string) {
	return func(n int, why string) {
		if reportDrop(n) {
			c.s.post(stdoutLineDropped{gen: gen, n: n, why: why})
		}
	}
}

// droppedResponse relays the responses markingConn dropped in generation
// gen into events, as [commandConnector.dropped] does stdout lines.
func (c *commandConnector) droppedResponse(gen uint64) func(int) {
	return func(n int) {
		if reportDrop(n) {
			c.s.post(responseDropped{gen: gen, detail: fmt.Sprintf(
				"response to a request of the server dropped (%d already being written to its stdin; %d dropped in all)", c.s.cfg.MaxResponsesInFlight, n)})
		}
	}
}

// Bounds of the events of one session's drops (stdout lines, responses).
const (
	maxDropEvents  = 16
	dropEventEvery = 1024
)

// reportDrop reports whether the n-th drop (from 1) has an event: each of
// the first maxDropEvents, then every dropEventEvery-th, so a flood of
// drops does not flood the sink.
func reportDrop(n int) bool { return n <= maxDropEvents || n%dropEventEvery == 0 }

// exited relays the exit of the process of generation gen into an event.
func (c *commandConnector) exited(gen uint64) func(*ProcessExitError) {
	return func(e *ProcessExitError) { c.s.post(processExited{gen: gen, exit: e}) }
}

// writtenKey marks a request's context; markingConn sets the mark once the
// request is written whole to the process's stdin.
type writtenKey struct{}

// stdioFacts wraps the error of every request with how far it got, for
// classify.DeliveryOf: a request written to the server's stdin that got no
// answer may have run (classify.WrittenError); one that was never written
// did not (classify.NotSentError).
func stdioFacts(next mcp.MethodHandler) mcp.MethodHandler {
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
	maxResponses int         // Config.MaxResponsesInFlight
	// limits are Config.MaxItems and AnswerLimits' JSONValues and
	// Messages, and refused hears every request or notification of the
	// server's dropped past them (see markingConn).
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
// (code httpsession.CodeHTTPAnswer, as the wire layer's refusals), before go-sdk
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
			}
			if problem != "" {
				return &jsonrpc.Response{ID: r.ID, Error: &jsonrpc.Error{Code: httpsession.CodeHTTPAnswer,
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

// commandSession is one run of the process and the go-sdk session on it.
type commandSession struct {
	probes.Lister
	sdkCalls
	p       *proc
	version string
	ka      *seam.KeepAlive // nil without Config.KeepAlive
	unroot  func()
	endOnce sync.Once
	// requests ends the server's requests' handlers before the session's
	// Close waits for them.
	requests *serverRequests
}

func (c *commandSession) Ping(ctx context.Context) error { return c.cs.Ping(ctx, nil) }

// Alive is Ping, on every protocol version: a stdio session has no
// server/discover of its own to send (go-sdk's is unexported). A 2026-07-28
// server no longer serves ping and answers it with JSON-RPC -32601 (method
// not found; go-sdk mcp/server.go): that answer is taken as life, since the
// process read its stdin and wrote its stdout, all a keepalive asks; were it
// an error, the keepalive would stop (judgePing) and a hung server would
// never be found.
func (c *commandSession) Alive(ctx context.Context) error {
	err := c.Ping(ctx)
	var rpc *jsonrpc.Error
	if err != nil && msgcheck.ModernVersion(c.version) && errors.As(err, &rpc) && rpc.Code == jsonrpc.CodeMethodNotFound {
		return nil
	}
	return err
}

// ID is "": a stdio session has no Mcp-Session-Id.
func (c *commandSession) ID() string                              { return "" }
func (c *commandSession) ProtocolVersion() string                 { return c.version }
func (c *commandSession) InitializeResult() *mcp.InitializeResult { return c.cs.InitializeResult() }

// Wait returns once the session has ended and the process has exited: the
// failed keepalive ping that ended it, or the process's exit
// (*ProcessExitError, of class transport), or, when go-sdk ended the
// session with the process still running, go-sdk's error, the process then
// stopped.
func (c *commandSession) Wait() error {
	err := c.cs.Wait()
	c.p.stopUnlessExiting()
	exit := c.p.wait()
	if cause := c.ka.EndedBy(); cause != nil {
		return cause
	}
	if exit != nil && exit.Stop == StopNone {
		return exit
	}
	if err == nil {
		return exit
	}
	return err
}

// Close ends the session and the process (Command: stdin, SIGTERM,
// SIGKILL) and returns once the process has exited.
func (c *commandSession) Close() error {
	c.endOnce.Do(func() {
		c.ka.Stop()
		c.unroot()
		c.requests.handlers.close()
		c.p.stop() // first: the stop's steps are the process's to report
		_ = c.cs.Close()
		c.p.wait()
	})
	return nil
}

// Detach is Close: a process cannot be left for a later resume.
func (c *commandSession) Detach() error { return c.Close() }

// From a stdio server's process: a stdout line was dropped, the process
// exited.
type (
	stdoutLineDropped struct {
		gen uint64
		n   int
		why string
	}
	processExited struct {
		gen  uint64
		exit *ProcessExitError
	}
)

func (in stdoutLineDropped) take(s *Supervisor) {
	s.emitEvent(events.Event{Kind: events.KindStdoutLineDropped, Generation: in.gen, Detail: fmt.Sprintf("stdout line %d dropped: %s", in.n, in.why)})
}

func (in processExited) take(s *Supervisor) {
	detail := in.exit.Error()
	if in.exit.Stderr != "" {
		detail += "; stderr: " + in.exit.Stderr
	}
	s.emitEvent(events.Event{Kind: events.KindProcessExited, Generation: in.gen, Detail: detail})
}
