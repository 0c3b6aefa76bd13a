package httpsession

import (
	"bytes"
	"fmt"
	"io"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// JSON-RPC methods and the header of the 2026-07-28 era's push channel.
const (
	// MethodListen opens a subscriptions/listen stream (MCP SEP-2575): a
	// POST whose answer is a long-lived text/event-stream carrying the
	// list_changed notifications asked for.
	MethodListen = "subscriptions/listen"
	// methodListenAck is the first message the server sends on a listen
	// stream; it tells the client nothing about the catalog.
	methodListenAck = "notifications/subscriptions/acknowledged"
	// headerMethod names a request's JSON-RPC method; go-sdk sets it on
	// every request of a 2026-07-28 session (SEP-2243 standard headers).
	headerMethod = "Mcp-Method"
)

// listenRequest returns the POST of listen attempt seq (from 1): a shallow
// copy of go-sdk's POST with a fresh body (go-sdk's body is a bytes.Reader,
// so GetBody is set) and the jar's cookies. The first attempt sends
// go-sdk's request as it is; every later one is a new request, so it gets
// a JSON-RPC id of its own ([listenID]): MCP's base protocol says "The
// request ID MUST NOT match the ID of any other request the sender has
// issued and not yet received a response for" (basic, requests), and a cut
// listen never got its response; the server names the subscription by the
// id (subscriptions, acknowledgment: io.modelcontextprotocol/subscriptionId).
func (b *streamBody) listenRequest(seq int) *http.Request {
	req := new(http.Request)
	*req = *b.req
	if b.req.GetBody != nil {
		if body, err := b.req.GetBody(); err == nil {
			req.Body = body
			if seq > 1 {
				withListenID(req, body, seq)
			}
		}
	}
	if b.t.cfg.Jar != nil {
		req.Header = b.req.Header.Clone()
	}
	return req
}

// withListenID gives req, a re-sent listen whose body is go-sdk's, the id
// [listenID] makes for attempt seq. A body that does not decode as a
// request is sent as it is.
func withListenID(req *http.Request, body io.ReadCloser, seq int) {
	data, err := io.ReadAll(body)
	_ = body.Close()
	req.Body = io.NopCloser(bytes.NewReader(data))
	msg, err2 := jsonrpc.DecodeMessage(data)
	r, ok := msg.(*jsonrpc.Request)
	if err != nil || err2 != nil || !ok || !r.ID.IsValid() {
		return
	}
	id, err := jsonrpc.MakeID(listenID(r.ID, seq))
	if err != nil {
		return
	}
	r.ID = id
	out, err := jsonrpc.EncodeMessage(r)
	if err != nil {
		return
	}
	req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(out)), int64(len(out))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(out)), nil }
}

// listenID is the JSON-RPC id of the listen re-sent as attempt seq (from
// 2) for go-sdk's listen of id: a string, so it never equals an id go-sdk
// gives its own requests (integers), e.g. "listen-2.3" for go-sdk's id 2.
func listenID(id jsonrpc.ID, seq int) string {
	return fmt.Sprintf("listen-%v.%d", id.Raw(), seq)
}

// noteDeclined records that the server declined the session's push stream
// in attempt a and tells [Config.OnStreamDeclined].
func (t *Transport) noteDeclined(a StreamAttempt) {
	t.mu.Lock()
	t.declined = true
	t.mu.Unlock()
	if f := t.cfg.OnStreamDeclined; f != nil {
		f(a)
	}
}

// StreamDeclined reports whether the server declined the session's push
// stream (the standalone GET, or the 2026-07-28 subscriptions/listen):
// [StreamAttempt.Declined] on its first attempt. No list_changed reaches
// the session then.
func (t *Transport) StreamDeclined() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.declined
}
