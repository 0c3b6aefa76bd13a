package httpsession

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpsup/mcpsup/classify"
)

// deleteTimeout bounds the DELETE that ends a session whose handshake
// answer the Transport refused (go-sdk bounds its own DELETE the same way,
// mcp/streamable.go closeDeleteTimeout).
const deleteTimeout = 5 * time.Second

// admit is the whitelist of POST answers: it reads the server's answer
// itself, with bounds, and returns what go-sdk gets, which is always one of
//
//   - for a call (a request with an id): a JSON-RPC response for that id, as
//     a 200 application/json body or an event stream of well-formed
//     messages ending with it ([answerStream]); an error status go-sdk
//     handles per call (500, 502, 503, 504, 429), a bounded JSON-RPC error
//     body for the call's id, or a session-gone answer (see
//     [Exchange.SessionGone]);
//   - for a notification or a response: the 2xx the server gave, or a
//     local 202 Accepted in place of anything else (the answer is recorded
//     in the exchange, never fatal).
//
// Every other answer, redirects included, is rewritten into a JSON-RPC error
// response for the call (see [Transport.rewrite]). Mcp-Session-Id is removed
// from every answer but the handshake's, and the handshake's must be valid
// (see [validSessionID]). When admit returns an *answerStream, it is resp's
// body.
//
// shift is what the request's id was moved by on the wire (see idshift.go):
// the answer carries the moved id, go-sdk gets its own.
func (t *Transport) admit(req *http.Request, x *Exchange, resp *http.Response, shift int64) (*http.Response, *answerStream) {
	if x.Method != methodInitialize {
		resp.Header.Del(HeaderSessionID) // only the handshake names the session
	}
	if x.RequestID == "" {
		return t.admitNonCall(req, x, resp), nil
	}
	want, ok := requestID(x.RequestID)
	want = want.moved(shift)
	ok2xx := x.Status >= 200 && x.Status < 300
	switch {
	case !ok:
		return resp, nil // not a request id go-sdk makes: nothing to match
	case x.Status >= 300 && x.Status < 400:
		t.readErrorBody(x, resp)
		want.unmoveBodyID(x)
		return t.rewrite(req, x, resp, "redirect not followed"), nil
	case !ok2xx:
		return t.admitError(req, x, resp, want), nil
	case x.Method == methodInitialize:
		if err := validSessionID(HeaderSessionID, resp.Header.Get(HeaderSessionID)); err != nil {
			refused := err.(*StateError)
			x.Malformed = true
			t.mu.Lock()
			t.refused = refused
			t.mu.Unlock()
			t.endRefusedSession(req, resp.Header.Get(HeaderSessionID))
			return t.rewrite(req, x, resp, "invalid Mcp-Session-Id: "+refused.Reason), nil
		}
	}
	switch x.ContentType {
	case "application/json":
		return t.admitJSON(req, x, resp, want), nil
	case "text/event-stream":
		s, err := t.newAnswerStream(req, x, want, resp)
		if err != nil {
			x.Malformed = true
			return t.rewrite(req, x, resp, err.Error()), nil
		}
		resp.Body = s
		resp.ContentLength = -1
		resp.Header.Del("Content-Encoding")
		resp.Header.Del("Content-Length")
		resp.Uncompressed = true
		return resp, s
	default:
		b := readBounded(resp, t.cfg.MaxErrorBody)
		x.Body = snippet(b.data)
		x.Malformed = true
		return t.rewrite(req, x, resp, ""), nil
	}
}

// admitJSON admits a 2xx application/json answer to a call: one JSON-RPC
// response for the call, at most MaxJSONBody bytes on the wire and decoded.
// go-sdk gets the message exactly as it was checked: the body as it is when
// go-sdk reads it as that message, re-encoded otherwise ([handOn]).
func (t *Transport) admitJSON(req *http.Request, x *Exchange, resp *http.Response, want callID) *http.Response {
	b := readBounded(resp, t.cfg.MaxJSONBody)
	x.Body = snippet(b.data)
	refuse := func(problem string) *http.Response {
		x.Malformed = true
		return t.rewrite(req, x, resp, problem)
	}
	switch {
	case b.over:
		x.Oversized = true
		return refuse(fmt.Sprintf("JSON body larger than %d bytes", t.cfg.MaxJSONBody))
	case b.err != nil:
		return refuse("body unreadable: " + b.err.Error())
	}
	// Into pooled scratch: the response is checked and handed on here,
	// not kept.
	sc := scratchPool.Get().(*decodeScratch)
	defer func() { *sc = decodeScratch{}; scratchPool.Put(sc) }()
	msg, exact, err := decodeMessageInto(b.data, want, sc)
	if err != nil {
		return refuse("undecodable JSON-RPC body")
	}
	r, ok := msg.(*jsonrpc.Response)
	if !ok {
		return refuse("a JSON-RPC request or notification in place of the response")
	}
	if problem := answerProblem(r, want); problem != "" {
		return refuse(problem)
	}
	if problem := t.decodeLimits().Problem(x.Method, b.data, r.Result); problem != "" {
		x.Oversized = true
		return refuse(problem)
	}
	if r.Error != nil {
		x.SetBodyRPC(b.data)
		want.unmoveBodyID(x)
	}
	problem, changed := t.check().Response(checkedRequest(req, x.Method), r)
	if problem != "" {
		return refuse(problem)
	}
	if changed {
		exact = false
	}
	if !exact {
		want.fill(r)
	}
	body, err := handOn(b.data, r, exact)
	if err != nil {
		return refuse("undecodable JSON-RPC body")
	}
	return withBody(resp, body)
}

// admitError admits a non-2xx, non-3xx answer to a call. go-sdk gets, with
// a body of at most MaxErrorBody bytes: a status it fails per call (500, 502,
// 503, 504, 429), a session-gone answer (it ends the session), or a JSON-RPC
// error response for the call's id (it fails the call). Anything else is
// rewritten. An error body longer than the bound is not a JSON-RPC error:
// the status decides.
func (t *Transport) admitError(req *http.Request, x *Exchange, resp *http.Response, want callID) *http.Response {
	body := t.readErrorBody(x, resp)
	want.unmoveBodyID(x) // before sessionGone compares it with RequestID
	x.SessionGone = sessionGone(*x)
	if transientStatus(x.Status) || x.SessionGone {
		return withBody(resp, body)
	}
	if x.RPC.Present {
		if msg, exact, err := decodeMessageFor(body, want); err == nil {
			if r, ok := msg.(*jsonrpc.Response); ok && r.Error != nil && want.answeredBy(r) {
				if !exact {
					want.fill(r)
				}
				if answer, err := handOn(body, r, exact); err == nil {
					return withBody(resp, answer)
				}
			}
		}
	}
	// Rewritten, a 401 too: the host refreshes its credential and the
	// session, which the server still knows, serves the next call; letting
	// go-sdk end it would also DELETE it on the server.
	return t.rewrite(req, x, resp, "")
}

// admitNonCall admits the answer to a notification or a response (MCP
// transports: 202 Accepted with no body). A 2xx passes, body unread (go-sdk
// closes it); anything else is recorded and answered 202 locally, so it never
// ends the session.
func (t *Transport) admitNonCall(req *http.Request, x *Exchange, resp *http.Response) *http.Response {
	if x.Status >= 200 && x.Status < 300 {
		return resp
	}
	t.readErrorBody(x, resp)
	x.SessionGone = sessionGone(*x)
	x.Rewritten = true
	t.cfg.Logger.Debug("mcpsup/httpsession: answer to a notification or response taken as 202",
		"method", x.Method, "status", x.Status, "content_type", x.ContentType)
	return localResponse(req, http.StatusAccepted, "", nil, nil)
}

// readErrorBody reads a non-2xx body, at most MaxErrorBody bytes on the wire
// and decoded, into x: the snippet and, when the body was read whole, the
// JSON-RPC error it carries. resp's body is closed.
func (t *Transport) readErrorBody(x *Exchange, resp *http.Response) []byte {
	b := readBounded(resp, t.cfg.MaxErrorBody)
	x.Body = snippet(b.data)
	x.Oversized = b.over
	if b.broken {
		// A body that broke cannot be inspected: no complete answer came
		// (an outage to the era rule, DiscoverOutage; the status still
		// classifies it first).
		x.TransportErr = b.err
	}
	if !b.over && b.err == nil {
		x.SetBodyRPC(b.data)
	}
	return b.data
}

// endRefusedSession ends, best effort, the session a refused handshake
// answer created on the server: one DELETE carrying the id as sent (net/http
// refuses to send an id with control characters; nothing else is tried).
func (t *Transport) endRefusedSession(req *http.Request, id string) {
	if id == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(req.Context()), deleteTimeout)
	defer cancel()
	del, err := http.NewRequestWithContext(ctx, http.MethodDelete, req.URL.String(), nil)
	if err != nil {
		return
	}
	del.Header[HeaderSessionID] = []string{id}
	if v := req.Header.Get(HeaderProtocolVersion); v != "" {
		del.Header.Set(HeaderProtocolVersion, v)
	}
	if v := req.Header.Get("Authorization"); v != "" {
		del.Header.Set("Authorization", v)
	}
	resp, err := t.base.RoundTrip(del)
	if err == nil {
		_ = resp.Body.Close()
	}
}

// sessionGone reports the session-expiry signals of DESIGN.md section 3,
// as classify decides them ([classify.HTTPError.SessionGone]).
func sessionGone(x Exchange) bool { return (&classify.HTTPError{Exchange: x}).SessionGone() }

// nullIDServerError reports a 4xx whose JSON-RPC error is -32000 with a null
// or absent id to a request with a session id: how the TypeScript and
// Python SDK servers reject an unknown session (DESIGN.md failure story S2;
// [classify.HTTPError.NullIDRejection]).
func nullIDServerError(x Exchange) bool {
	return (&classify.HTTPError{Exchange: x}).NullIDRejection()
}
