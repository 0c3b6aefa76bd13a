package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpsup/mcpsup/classify"
)

// CodeHTTPAnswer is the JSON-RPC error code of the responses the [Transport]
// writes in place of a server answer that go-sdk would treat as fatal to the
// session (JSON-RPC 2.0 section 5.1, implementation-defined server error
// range -32000 to -32099). The message names the HTTP status and content
// type, e.g. "HTTP 403 Forbidden (text/html)"; the data object holds
// {"httpStatus":403,"contentType":"text/html","body":"<snippet>"}. The
// original facts reach [Annotate] unchanged.
const CodeHTTPAnswer = -32090

// transientStatus reports the statuses go-sdk v1.8.0 rejects per call
// (-32005) without ending the session (mcp/streamable.go
// isTransientHTTPStatus).
func transientStatus(s int) bool {
	switch s {
	case 500, 502, 503, 504, 429:
		return true
	}
	return false
}

// inspect reads the facts of a POST answer and decides whether go-sdk may
// see it as sent. It returns the response go-sdk gets.
func (t *Transport) inspect(req *http.Request, x *Exchange, resp *http.Response) *http.Response {
	isCall := x.RequestID != ""
	switch {
	case x.Status < 200 || x.Status >= 300:
		prefix := t.readErrorBody(x, resp)
		x.SessionGone = sessionGone(*x)
		// A 401 is rewritten too: the host refreshes its credential and
		// the session, which the server still knows, serves the next call;
		// letting go-sdk end it would also DELETE it on the server.
		if !isCall || transientStatus(x.Status) || x.SessionGone || goSDKReadsError(prefix) {
			return resp
		}
		return t.rewrite(req, x, resp, x.Status)
	case !isCall:
		return resp
	case x.ContentType == "text/event-stream":
		return resp
	case x.ContentType == "application/json":
		prefix := readPrefix(resp, t.cfg.MaxJSONBody+1)
		x.Body = snippet(prefix)
		if len(prefix) > t.cfg.MaxJSONBody {
			// A hostile or runaway answer: refuse it for this request only,
			// rather than let go-sdk buffer it whole.
			x.Malformed, x.Oversized = true, true
			return t.rewrite(req, x, resp, http.StatusOK)
		}
		msg, err := jsonrpc.DecodeMessage(prefix)
		if r, ok := msg.(*jsonrpc.Response); !ok || r.Error != nil {
			// Not a plain result (the common answer, decoded once): look
			// for the JSON-RPC error it carries.
			x.RPC, x.RPCPresent = classify.ParseRPCError(prefix)
		}
		if err == nil {
			return resp
		}
		x.Malformed = true
		return t.rewrite(req, x, resp, http.StatusOK)
	default:
		prefix := readPrefix(resp, t.cfg.MaxErrorBody)
		x.Body = snippet(prefix)
		x.Malformed = true
		return t.rewrite(req, x, resp, http.StatusOK)
	}
}

// sessionGone reports the session-expiry signals of DESIGN.md section 3.
func sessionGone(x Exchange) bool {
	if !x.SessionIDSent {
		return false
	}
	answersByID := x.RPCPresent && x.RPC.HasID
	if x.Status == http.StatusNotFound && !answersByID {
		return true
	}
	return nullIDServerError(x)
}

// nullIDServerError reports a 4xx whose JSON-RPC error is -32000 with a null
// or absent id: how the TypeScript and Python SDK servers reject an unknown
// session (DESIGN.md failure story S2).
func nullIDServerError(x Exchange) bool {
	return x.Status >= 400 && x.Status < 500 && x.RPCPresent &&
		x.RPC.Code == classify.CodeServerError && !x.RPC.HasID
}

// goSDKReadsError reports whether go-sdk turns this non-2xx body into a
// per-call *jsonrpc.Error (mcp/streamable.go checkResponse): a JSON-RPC
// response with an error and a valid id.
func goSDKReadsError(body []byte) bool {
	msg, err := jsonrpc.DecodeMessage(body)
	if err != nil {
		return false
	}
	r, ok := msg.(*jsonrpc.Response)
	return ok && r.Error != nil
}

// readErrorBody reads the start of a non-2xx answer, at most MaxErrorBody
// bytes, into x: the snippet and the JSON-RPC error it carries. It returns
// the bytes read; resp.Body still yields the whole body.
func (t *Transport) readErrorBody(x *Exchange, resp *http.Response) []byte {
	prefix := readPrefix(resp, t.cfg.MaxErrorBody)
	x.Body = snippet(prefix)
	x.RPC, x.RPCPresent = classify.ParseRPCError(prefix)
	return prefix
}

// readPrefix reads at most n bytes of resp.Body and replaces the body with
// one that yields the prefix and then the rest, so nothing is lost.
func readPrefix(resp *http.Response, n int) []byte {
	prefix, _ := io.ReadAll(io.LimitReader(resp.Body, int64(n)))
	resp.Body = &prefixBody{Reader: io.MultiReader(bytes.NewReader(prefix), resp.Body), c: resp.Body}
	return prefix
}

type prefixBody struct {
	io.Reader
	c io.Closer
}

func (b *prefixBody) Close() error { return b.c.Close() }

// rewrite answers the request with a JSON-RPC error response carrying its
// id, so go-sdk fails this request only.
func (t *Transport) rewrite(req *http.Request, x *Exchange, resp *http.Response, status int) *http.Response {
	_ = resp.Body.Close()
	x.Rewritten = true
	ct := x.ContentType
	if ct == "" {
		ct = "no content type"
	}
	type data struct {
		HTTPStatus  int    `json:"httpStatus"`
		ContentType string `json:"contentType,omitempty"`
		Body        string `json:"body,omitempty"`
	}
	d, _ := json.Marshal(data{x.Status, x.ContentType, x.Body})
	msg := fmt.Sprintf("HTTP %d %s (%s)", x.Status, http.StatusText(x.Status), ct)
	switch {
	case x.Oversized:
		msg = fmt.Sprintf("HTTP %d %s (JSON body larger than %d bytes)", x.Status, http.StatusText(x.Status), t.cfg.MaxJSONBody)
	case x.Malformed && x.ContentType == "application/json":
		msg = fmt.Sprintf("HTTP %d %s (undecodable JSON-RPC body)", x.Status, http.StatusText(x.Status))
	}
	body, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   any             `json:"error"`
	}{"2.0", json.RawMessage(x.RequestID), struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}{CodeHTTPAnswer, msg, d}})
	t.log.Debug("mcpsup/wire: answer rewritten to keep the session",
		"method", x.Method, "status", x.Status, "content_type", x.ContentType)
	h := resp.Header.Clone()
	h.Del(HeaderSessionID)
	h.Del("Content-Length")
	return localResponse(req, status, "application/json", h, body)
}
