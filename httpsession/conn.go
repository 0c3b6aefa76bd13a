package httpsession

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/httpsession/oauthcarrier"
	"github.com/mcpsup/mcpsup/httpsession/wirebody"
	"github.com/mcpsup/mcpsup/msgcheck"
	"github.com/mcpsup/mcpsup/session"
)

// conn is the session's mcp.Connection and the one owner of its wire state
// (DESIGN.md section 7): a failure of one request reaches go-sdk as an error
// response for its id (code [CodeHTTPAnswer]); Write fails only once the
// connection has ended (decision 0029). Safe for concurrent use.
type conn struct {
	cfg      *Config                 // shared by a Dialer's sessions, defaults applied; never written
	auth     *oauthcarrier.Transport // every request's way out: OAuth over cfg.Base
	on       hooks                   // the Dialer's observers of this session
	drops    atomic.Int64            // standalone stream events dropped, for on.observe
	endpoint string
	shift    int64 // added to go-sdk's integer request ids on the wire (idshift.go); 0 on a fresh session
	stream   bool  // open the standalone stream after a 2025-era handshake

	// ctx ends the connection and its keepers: by Close (cause errConnClosed)
	// or by fail (cause: the first error, which Read returns; go-sdk then
	// closes the connection).
	ctx      context.Context
	fail     context.CancelCauseFunc
	incoming chan jsonrpc.Message
	closeMu  sync.Once

	mu        sync.Mutex
	sessionID string               // Mcp-Session-Id of the handshake answer (or the persisted one)
	version   string               // the negotiated protocol version: Mcp-Protocol-Version
	resume    *handshake           // answered locally, nil when not resuming
	streamUp  chan struct{}        // closed at the stream's first outcome; nil while none was opened (awaitStream)
	refused   *StateError          // a handshake answer's invalid Mcp-Session-Id
	discover  *Exchange            // the server/discover sent (era.go)
	detached  bool                 // no DELETE: detached, or the session is gone
	outage    *DiscoverOutageError // the refused fallback after a discover outage (era.go)

	answered  recent[struct{}]  // requests whose whole answer came with the response (maxAnswered)
	drains    drains            // bounds the answer streams' drains on Close
	resps     responses         // bounds go-sdk's responses to the server's requests
	hostileMu sync.Mutex        // guards hostile
	hostile   *HostilityTracker // this session's evidence for the switch's rule; nil with the stream off
	params    paramHeaders      // the tools' Mcp-Param-* bindings
	rounds    rounds            // multi-round-trip calls' last rounds (rounds.go)
}

// hooks are the observers of one session: [Options.Observe], the
// Session's own watch and a Dialer's fallback; the zero value observes
// nothing.
type hooks struct {
	observe  func(session.Fact) // Options.Observe; nil: no facts wanted
	exchange func(Exchange)     // the session's watch of its answers
	fallback bool               // Config.FallbackAfterOutage for this handshake
}

func (c *conn) report(f session.Fact) {
	if c.on.observe != nil {
		c.on.observe(f)
	}
}

type connTransport struct{ c *conn }

func (ct connTransport) Connect(context.Context) (mcp.Connection, error) { return ct.c, nil }

// newConn returns the conn of a session at endpoint on cfg (defaults
// applied), resuming h when not nil.
func newConn(cfg *Config, endpoint string, h *handshake, stream bool) *conn {
	c := &conn{cfg: cfg, endpoint: endpoint, stream: stream, resume: h,
		incoming: make(chan jsonrpc.Message, 16),
		resps:    newResponses(cfg.MaxResponsesInFlight, cfg.ResponseTimeout)}
	c.auth = &oauthcarrier.Transport{Base: cfg.Base, Handler: cfg.OAuthHandler, MaxBody: cfg.MaxErrorBody,
		Logger: cfg.Logger, OnCredential: cfg.OnCredential}
	if cfg.Switch.Mode() != StreamOff {
		c.hostile = NewHostilityTracker(cfg.Switch.cfg.Rule, cfg.Stream.Span)
	}
	c.ctx, c.fail = context.WithCancelCause(context.Background())
	if h != nil {
		c.shift = newIDShift() // the server's session saw go-sdk's ids before
		c.sessionID, c.version = h.sessionID, h.protocolVersion
	}
	return c
}

func (c *conn) SessionID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessionID
}

func (c *conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case msg := <-c.incoming:
		return msg, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.ctx.Done():
		if err := context.Cause(c.ctx); err != errConnClosed {
			return nil, err
		}
		return nil, io.EOF
	}
}

// deliver queues msg for Read; dropped once the connection ended.
func (c *conn) deliver(msg jsonrpc.Message) {
	select {
	case c.incoming <- msg:
	case <-c.ctx.Done():
	}
}

// errConnClosed is the cause of a conn's end by Close.
var errConnClosed = mcp.ErrConnectionClosed

// failure is what ended the connection: nil while it lives.
func (c *conn) failure() error { return context.Cause(c.ctx) }

// Close implements mcp.Connection: DELETE with the session id (streamable
// HTTP, session management: clients SHOULD), unless the session is
// detached, gone or sessionless. Ending c.ctx ends the keepers.
func (c *conn) Close() error {
	c.closeMu.Do(func() {
		c.mu.Lock()
		id, detached := c.sessionID, c.detached
		c.mu.Unlock()
		if !detached && c.failure() == nil {
			c.sendDelete(id)
		}
		c.fail(errConnClosed)
		c.drains.close()
		c.resps.close()
	})
	return nil
}

// sendDelete ends the server-side session id ("": none), bounded as go-sdk
// bounds its own DELETE (mcp/streamable.go closeDeleteTimeout).
func (c *conn) sendDelete(id string) {
	if id == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := c.request(ctx, http.MethodDelete, nil)
	if err != nil {
		return
	}
	req.Header.Set(HeaderSessionID, id)
	x := c.begin(req)
	resp, err := c.send(req, c.cfg.RequestTimeout)
	c.fill(&x, resp, err)
	if err == nil {
		c.readErrorBody(&x, resp)
	}
	c.finish(req.Context(), x)
}

// Write implements mcp.Connection; see [conn].
func (c *conn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := c.failure(); err != nil {
		return err
	}
	switch m := msg.(type) {
	case *jsonrpc.Request:
		if m.IsCall() {
			return c.call(ctx, m)
		}
		c.notify(ctx, m)
	case *jsonrpc.Response:
		c.respond(ctx, m)
	}
	return nil
}

// rawIDOf is a request id as raw JSON, the form [Exchange.RequestID] takes.
func rawIDOf(id jsonrpc.ID) string {
	switch v := id.Raw().(type) {
	case int64:
		return strconv.FormatInt(v, 10)
	case string:
		b, _ := json.Marshal(v)
		return string(b)
	}
	return ""
}

// post builds the POST of msg with the standard headers (MCP streamable
// HTTP: Mcp-Session-Id, Mcp-Protocol-Version; on 2026-07-28 Mcp-Method and
// Mcp-Name, "Standard Request Headers").
func (c *conn) post(ctx context.Context, msg jsonrpc.Message) (*http.Request, error) {
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return nil, err
	}
	req, err := c.request(ctx, http.MethodPost, bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	version := h.Get(HeaderProtocolVersion)
	r, isRequest := msg.(*jsonrpc.Request)
	var p headerParams
	parsed := false
	if isRequest && (msgcheck.ModernVersion(version) || bytes.Contains(r.Params, []byte(mcp.MetaKeyProtocolVersion))) {
		parsed = json.Unmarshal(r.Params, &p) == nil
		if p.Meta.Version != "" {
			version = p.Meta.Version
			h.Set(HeaderProtocolVersion, version)
		}
	}
	if isRequest && msgcheck.ModernVersion(version) {
		h.Set(headerMethod, r.Method)
		switch method := r.Method; {
		case !parsed:
		case method == "tools/call":
			c.params.Set(h, p.Name, r.Params)
			h.Set(headerName, headerValue(p.Name))
		case method == "prompts/get":
			h.Set(headerName, headerValue(p.Name))
		case method == "resources/read":
			h.Set(headerName, headerValue(p.URI))
		}
	}
	return req, nil
}

// request returns a request of method to the endpoint on ctx with the
// session's Mcp-Session-Id and Mcp-Protocol-Version, each when known, and
// the URL's userinfo as Basic credentials (RFC 7617), as net/http's Client
// sends them.
func (c *conn) request(ctx context.Context, method string, body io.Reader) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.endpoint, body)
	if err != nil {
		return nil, err
	}
	if u := req.URL.User; u != nil {
		password, _ := u.Password()
		req.SetBasicAuth(u.Username(), password)
	}
	c.mu.Lock()
	id, version := c.sessionID, c.version
	c.mu.Unlock()
	if id != "" {
		req.Header.Set(HeaderSessionID, id)
	}
	if version != "" {
		req.Header.Set(HeaderProtocolVersion, version)
	}
	return req, nil
}

// urlError names the request in err as net/http's Client does (a
// *url.Error), with likely credentials masked: the userinfo's password, and
// a username or query value of at least events.MinSessionIDLen bytes.
func urlError(req *http.Request, err error) error {
	op := req.Method[:1] + strings.ToLower(req.Method[1:])
	return &url.Error{Op: op, URL: maskedURL(req.URL), Err: err}
}

func maskedURL(u *url.URL) string {
	const mask = "xxxxx"
	m := *u
	if m.User != nil && len(m.User.Username()) >= events.MinSessionIDLen {
		m.User = url.UserPassword(mask, mask)
	}
	if m.RawQuery != "" {
		q := m.Query()
		for _, vs := range q {
			for i, v := range vs {
				if len(v) >= events.MinSessionIDLen {
					vs[i] = mask
				}
			}
		}
		m.RawQuery = q.Encode()
	}
	return m.Redacted()
}

// headerParams is what a request's headers take from its params: _meta's
// protocol version (SEP-2575: go-sdk carries a 2026-07-28 request's there),
// and the Mcp-Name, a tool's or prompt's name or a resource's uri
// (streamable-http.mdx, Standard Request Headers).
type headerParams struct {
	Meta struct {
		Version string `json:"io.modelcontextprotocol/protocolVersion"`
	} `json:"_meta"`
	Name string `json:"name"`
	URI  string `json:"uri"`
}

// send sends req through the conn's chain (OAuth, then Config.Base) with
// the jar's cookies in place of its own, keeping those the answer sets; a
// positive timeout bounds it until the body is closed.
func (c *conn) send(req *http.Request, timeout time.Duration) (*http.Response, error) {
	req.Header.Set("Accept-Encoding", wirebody.AcceptEncoding)
	if c.cfg.Jar != nil {
		req.Header.Del("Cookie")
		for _, ck := range c.cfg.Jar.Cookies(req.URL) {
			req.AddCookie(ck)
		}
	}
	cancel := context.CancelFunc(nil)
	if timeout > 0 {
		var ctx context.Context
		ctx, cancel = context.WithTimeout(req.Context(), timeout)
		req = req.WithContext(ctx)
	}
	resp, err := c.auth.RoundTrip(req)
	if err != nil {
		if cancel != nil {
			cancel()
		}
		return nil, err
	}
	if cs := resp.Cookies(); c.cfg.Jar != nil && len(cs) > 0 {
		c.cfg.Jar.SetCookies(req.URL, cs)
	}
	if cancel != nil {
		resp.Body = cancelOnClose{resp.Body, cancel}
	}
	return resp, nil
}

type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c cancelOnClose) Close() error {
	defer c.cancel()
	return c.ReadCloser.Close()
}

// call sends a request of go-sdk's and queues its answer; a
// multi-round-trip call sent again resumes its last round (rounds.go).
func (c *conn) call(ctx context.Context, r *jsonrpc.Request) error {
	if c.answerLocally(ctx, r) {
		return nil
	}
	if r.Method == MethodListen {
		c.listen(r)
		return nil
	}
	c.awaitStream(ctx, r.Method)
	out := *r
	out.ID = c.wireID(r.ID)
	params, deliver := c.rounds.resume(r, c.deliver)
	out.Params = params
	req, err := c.post(ctx, &out)
	if err != nil {
		deliver(errorMessage(r.ID, Exchange{}, "request not sent: "+err.Error()))
		return nil
	}
	x := c.begin(req)
	x.Method, x.RequestID = r.Method, rawIDOf(r.ID)
	if err := c.refuseFallback(&x); err != nil { // era.go
		c.finish(req.Context(), x)
		c.fail(err)
		return err
	}
	resp, err := c.send(req, c.cfg.RequestTimeout)
	if err != nil {
		err = urlError(req, err)
	}
	c.fill(&x, resp, err)
	if err != nil {
		x.Rewritten = true // the answer go-sdk gets is ours; its error unwraps to err (Annotate)
		c.finish(req.Context(), x)
		deliver(errorMessage(r.ID, x, "request failed: "+err.Error()))
		return nil
	}
	return c.admit(req, &x, resp, r, callIDOf(out.ID, c.shift), deliver)
}

// admit reads the answer to the call r once and hands deliver the
// server's response, its event stream's messages, or an error response
// naming what was wrong. Only a session-gone answer ends the connection.
func (c *conn) admit(req *http.Request, x *Exchange, resp *http.Response, r *jsonrpc.Request, want callID, deliver func(jsonrpc.Message)) error {
	answer := func(msg jsonrpc.Message) error { // the call's whole answer, come with the response
		c.answered.add(x.RequestID, struct{}{}, maxAnswered)
		c.finish(req.Context(), *x)
		deliver(msg)
		return nil
	}
	refuse := func(problem string) error {
		x.Rewritten, x.Problem = true, problem
		c.cfg.Logger.Debug("mcpsup/httpsession: answer refused, the call fails alone",
			"method", x.Method, "status", x.Status, "content_type", x.ContentType, "problem", problem)
		return answer(errorMessage(r.ID, *x, problem))
	}
	switch {
	case x.Status < 200 || x.Status >= 300:
		body := c.readErrorBody(x, resp)
		want.unmoveBodyID(x)
		if x.Status >= 300 && x.Status < 400 {
			return refuse("redirect not followed")
		}
		x.SessionGone = sessionGone(*x)
		if x.SessionGone {
			c.detach()
			c.finish(req.Context(), *x)
			err := fmt.Errorf("%s: HTTP %d: %w", x.Method, x.Status, mcp.ErrSessionMissing)
			c.fail(err) // the session ends before the call returns (DESIGN.md D2)
			return err
		}
		if x.RPC.Present && !transientStatus(x.Status) {
			if msg, err := decodeMessageFor(body, want); err == nil {
				if rr, ok := msg.(*jsonrpc.Response); ok && rr.Error != nil && want.answeredBy(rr) {
					rr.ID = r.ID
					return answer(rr)
				}
			}
		}
		return refuse("")
	case x.Method == methodInitialize:
		if err := validSessionID(HeaderSessionID, resp.Header.Get(HeaderSessionID)); err != nil {
			refused := err.(*StateError)
			x.Malformed = true
			c.mu.Lock()
			c.refused = refused
			c.mu.Unlock()
			c.sendDelete(resp.Header.Get(HeaderSessionID)) // best effort: the session the server made
			_ = resp.Body.Close()
			return refuse("invalid " + HeaderSessionID + " (" + refused.Reason + ")") // "Mcp-Session-Id: <reason>" reads as an id to the redactor
		}
	}
	switch x.ContentType {
	case "application/json":
		msg, problem := c.admitJSON(req, x, resp, want)
		if problem != "" {
			x.Malformed = x.TransportErr == nil // a broken body: its error decides the class
			return refuse(problem)
		}
		msg.ID = r.ID
		c.noteResult(x.Method, resp.Header.Get(HeaderSessionID), msg)
		return answer(msg)
	case "text/event-stream":
		s := &answerStream{sseLoop: newLoop(c, req.Context(), c.cfg.MaxSSEEvent), req: req, x: *x, want: want,
			deliver: deliver, sdkID: r.ID, session: resp.Header.Get(HeaderSessionID)}
		s.events.Wire = &s.wire
		if err := s.open(resp); err != nil { // a Content-Encoding not decoded
			x.Malformed = true
			return refuse(err.Error())
		}
		if s.slot, s.recN = c.finish(req.Context(), *x); s.slot != nil {
			s.slot.streamOpened()
		}
		go s.run()
	default:
		b := wirebody.Read(resp, c.cfg.MaxErrorBody)
		x.Body = snippet(b.Data)
		x.Malformed = true
		return refuse("content type " + strconv.Quote(msgcheck.CutText(cmp.Or(x.ContentType, "none"), 200)) + ", not application/json or text/event-stream")
	}
	return nil
}

// readErrorBody reads a non-2xx body, at most MaxErrorBody bytes on the wire
// and decoded, into x: the snippet and, when the body was read whole, the
// JSON-RPC error it carries. resp's body is closed.
func (c *conn) readErrorBody(x *Exchange, resp *http.Response) []byte {
	b := wirebody.Read(resp, c.cfg.MaxErrorBody)
	x.Body, x.Oversized = snippet(b.Data), b.Over
	if b.Broken { // no complete answer came
		x.TransportErr = b.Err
	}
	if !b.Over && b.Err == nil {
		x.SetBodyRPC(b.Data)
	}
	return b.Data
}

// sessionGone reports the session-expiry signals of DESIGN.md section 3.
func sessionGone(x Exchange) bool { return (&classify.HTTPError{Exchange: x}).SessionGone() }

// admitJSON reads a 2xx application/json answer to a call (MaxJSONBody)
// and checks it is the call's response; problem says why not.
func (c *conn) admitJSON(req *http.Request, x *Exchange, resp *http.Response, want callID) (*jsonrpc.Response, string) {
	b := wirebody.Read(resp, c.cfg.MaxJSONBody)
	x.Body = snippet(b.Data)
	switch {
	case b.Over:
		x.Oversized = true
		return nil, fmt.Sprintf("JSON body larger than %d bytes", c.cfg.MaxJSONBody)
	case b.Broken: // no complete HTTP answer came
		x.TransportErr = b.Err
		return nil, "body broken off: " + b.Err.Error()
	case b.Err != nil:
		return nil, "body unreadable: " + b.Err.Error()
	}
	msg, err := decodeMessageFor(b.Data, want)
	if err != nil {
		return nil, "undecodable JSON-RPC body"
	}
	r, ok := msg.(*jsonrpc.Response)
	if !ok {
		return nil, "a JSON-RPC request or notification in place of the response"
	}
	if problem := answerProblem(r, want); problem != "" {
		return nil, problem
	}
	if problem := c.cfg.limits.Problem(x.Method, b.Data, r.Result); problem != "" {
		x.Oversized = true
		return nil, problem
	}
	if r.Error != nil {
		x.SetBodyRPC(b.Data)
		want.unmoveBodyID(x)
	}
	if problem := c.checkResponse(req, x.Method, r); problem != "" {
		return nil, problem
	}
	return r, ""
}

// noteResult takes the session id (of no other answer) and protocol
// version from a successful initialize answer, and the tools' header
// bindings from a tools/list's.
func (c *conn) noteResult(method, sessionID string, r *jsonrpc.Response) {
	switch {
	case r.Error != nil:
	case method == "tools/list":
		c.params.NoteTools(r.Result)
	case method == methodInitialize:
		var res struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(r.Result, &res)
		c.mu.Lock()
		c.sessionID, c.version = sessionID, res.ProtocolVersion
		c.mu.Unlock()
	}
}

// answerLocally answers a resume's `initialize` with the persisted
// InitializeResult (or a blind one), and its `server/discover` with the
// persisted discovery result; nothing reaches the server.
func (c *conn) answerLocally(ctx context.Context, r *jsonrpc.Request) bool {
	if r.Method != methodInitialize && r.Method != methodDiscover {
		return false
	}
	c.mu.Lock()
	h := c.resume
	var result any
	switch {
	case h == nil:
	case r.Method == methodInitialize:
		result = initializeResult(h)
	case r.Method == methodDiscover && h.result != nil:
		result, c.resume = discoverResult(h), nil
	}
	c.mu.Unlock()
	if result == nil {
		return false
	}
	raw, err := json.Marshal(result)
	if err != nil {
		return false
	}
	x := Exchange{Verb: http.MethodPost, Method: r.Method, RequestID: rawIDOf(r.ID), Local: true,
		Status: http.StatusOK, ContentType: "application/json", Start: c.cfg.Clock.Now()}
	c.finish(ctx, x)
	c.deliver(&jsonrpc.Response{ID: r.ID, Result: raw})
	return true
}

// notify sends a notification of go-sdk's; its answer (202 Accepted) is
// recorded, never an error.
func (c *conn) notify(ctx context.Context, n *jsonrpc.Request) {
	initialized := n.Method == methodInitialized
	c.mu.Lock()
	resumed := initialized && c.resume != nil // its initialize was answered locally: the server saw the handshake before
	if resumed {
		c.resume = nil
	}
	stream := initialized && c.stream && !msgcheck.ModernVersion(c.version)
	local := resumed || c.detached // detached: a late notification could reach a later holder of the session
	c.mu.Unlock()
	if stream {
		defer c.openStream()
	}
	out := n
	if n.Method == "notifications/cancelled" && !local {
		id, moved := c.cancelled(n)
		_, answered := c.answered.take(id)
		local, out = id != "" && answered, moved // its request has its whole answer
	}
	if local {
		c.finish(ctx, Exchange{Verb: http.MethodPost, Method: n.Method, Start: c.cfg.Clock.Now(), Local: true, Status: http.StatusAccepted})
		return
	}
	req, err := c.post(ctx, out)
	if err != nil {
		return
	}
	x := c.begin(req)
	x.Method = n.Method
	c.sendOther(req, &x)
	c.finish(req.Context(), x)
}

// sendOther sends the POST of a notification or a response and records its
// answer in x, never an error.
func (c *conn) sendOther(req *http.Request, x *Exchange) {
	resp, err := c.send(req, c.cfg.RequestTimeout)
	c.fill(x, resp, err)
	switch {
	case err != nil:
	case x.Status >= 200 && x.Status < 300:
		_ = wirebody.Read(resp, c.cfg.MaxErrorBody)
	default:
		c.readErrorBody(x, resp)
		x.SessionGone, x.Rewritten = sessionGone(*x), true
	}
}

// cancelled returns a notifications/cancelled's requestId as go-sdk made
// it, and the notification with it moved by the session's shift.
func (c *conn) cancelled(n *jsonrpc.Request) (string, *jsonrpc.Request) {
	var p map[string]json.RawMessage
	if json.Unmarshal(n.Params, &p) != nil {
		return "", n
	}
	id := string(p["requestId"]) // as json.Unmarshal cut it: no white space
	if id == "null" {
		id = ""
	}
	v, ok := plainInt([]byte(id))
	if !ok || c.shift == 0 {
		return id, n
	}
	p["requestId"] = json.RawMessage(strconv.FormatInt(v+c.shift, 10))
	params, err := json.Marshal(p)
	if err != nil {
		return id, n
	}
	out := *n
	out.Params = params
	return id, &out
}

// respond sends go-sdk's response to a request of the server's, bounded in
// number and time ([responses]).
func (c *conn) respond(ctx context.Context, r *jsonrpc.Response) {
	req, err := c.post(ctx, r)
	if err != nil {
		return
	}
	x := c.begin(req)
	bounded, release, dropped := c.resps.take(req)
	if bounded == nil {
		x.Local, x.Status = true, http.StatusAccepted
		if dropped != nil {
			x.Problem = fmt.Sprintf("response to a request of the server dropped (%d already in flight; %d dropped in all)", dropped.Bound, dropped.Count)
		}
		c.finish(req.Context(), x)
		if dropped != nil {
			c.report(*dropped)
		}
		return
	}
	c.sendOther(bounded, &x)
	release() // before the record: an observer of it finds the place free
	c.finish(req.Context(), x)
}

// openStream starts the keeper of the standalone GET stream (stream.go);
// a call waits for its first outcome (awaitStream) unless it is held.
func (c *conn) openStream() {
	req, err := c.streamGET(c.ctx, "")
	if err != nil {
		return
	}
	var up chan struct{}
	if hold, _ := c.cfg.Switch.state(); !hold {
		up = make(chan struct{})
		c.mu.Lock()
		c.streamUp = up
		c.mu.Unlock()
	}
	c.keep(req, c.begin(req), nil, up)
}

const streamWait = 2 * time.Second // awaitStream's bound

// awaitStream holds a call of method until the standalone stream's first
// attempt has its outcome, bounded by streamWait and ctx: a server may
// send a request a call waits for (an elicitation) on that stream alone
// (streamable-http.mdx, GET). Listings and ping ask nothing of the client
// and go out at once, so a resume stays within about one round trip.
func (c *conn) awaitStream(ctx context.Context, method string) {
	if strings.HasSuffix(method, "/list") || method == "ping" {
		return
	}
	c.mu.Lock()
	up := c.streamUp
	c.mu.Unlock()
	if up == nil {
		return
	}
	t := time.NewTimer(streamWait)
	defer t.Stop()
	select {
	case <-up:
	case <-t.C:
	case <-ctx.Done():
		return
	case <-c.ctx.Done():
		return
	}
	c.mu.Lock() // waited once: later calls go out at once
	if c.streamUp == up {
		c.streamUp = nil
	}
	c.mu.Unlock()
}

// listen hands go-sdk's subscriptions/listen to a keeper (stream.go).
func (c *conn) listen(r *jsonrpc.Request) {
	out := *r
	out.ID = c.wireID(r.ID)
	req, err := c.post(c.ctx, &out)
	if err != nil {
		return
	}
	x := c.begin(req)
	x.Method, x.RequestID = r.Method, rawIDOf(r.ID)
	c.keep(req, x, &out, nil)
}

// keep records req, a keeper's first request, as answered at once, and
// queues the keeper's messages until c.ctx ends; the stream's end says the
// session is gone. The first attempt dials on a goroutine of its own, the
// reads run on another (DESIGN.md section 7, the push stream).
func (c *conn) keep(req *http.Request, x Exchange, listen *jsonrpc.Request, up chan struct{}) {
	x.Local, x.Status, x.ContentType = true, http.StatusOK, "text/event-stream"
	c.finish(req.Context(), x)
	b := newStreamBody(c, req.Context())
	b.listen, b.answered = listen, up
	go func() {
		b.redial() // its outcome, even the session's end, is the reader's to find
		go func() {
			defer b.Close()
			for {
				msg, done := b.next(b)
				if done {
					if context.Cause(b.ctx) == nil { // not closed: the session is gone
						c.fail(fmt.Errorf("standalone stream: %w", mcp.ErrSessionMissing))
					}
					return
				}
				c.deliver(msg)
			}
		}()
	}()
}

// errorMessage is the error response (code [CodeHTTPAnswer]) the call id
// gets for an answer with facts x.
func errorMessage(id jsonrpc.ID, x Exchange, problem string) *jsonrpc.Response {
	type data struct {
		HTTPStatus  int    `json:"httpStatus"`
		ContentType string `json:"contentType,omitempty"`
		Problem     string `json:"problem,omitempty"`
		Body        string `json:"body,omitempty"`
	}
	d, _ := json.Marshal(data{x.Status, x.ContentType, problem, x.Body})
	msg := fmt.Sprintf("HTTP %d %s (%s)", x.Status, http.StatusText(x.Status), cmp.Or(problem, x.ContentType, "no content type"))
	if x.Status == 0 {
		msg = "no HTTP answer (" + problem + ")"
	}
	return &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: CodeHTTPAnswer, Message: msg, Data: d}}
}
