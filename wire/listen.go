package wire

import (
	"net/http"
)

// JSON-RPC methods and the header of the 2026-07-28 era's push channel.
const (
	// methodListen opens a subscriptions/listen stream (MCP SEP-2575): a
	// POST whose answer is a long-lived text/event-stream carrying the
	// list_changed notifications asked for.
	methodListen = "subscriptions/listen"
	// methodListenAck is the first message the server sends on a listen
	// stream; it tells the client nothing about the catalog.
	methodListenAck = "notifications/subscriptions/acknowledged"
	// headerMethod names a request's JSON-RPC method; go-sdk sets it on
	// every request of a 2026-07-28 session (SEP-2243 standard headers).
	headerMethod = "Mcp-Method"
)

// isListen reports go-sdk's subscriptions/listen POST. Only a 2026-07-28
// session sends one, and go-sdk names the method in Mcp-Method there, so no
// body is read to tell.
func isListen(req *http.Request) bool {
	return req.Method == http.MethodPost && req.Header.Get(headerMethod) == methodListen
}

// listenPOST answers go-sdk's subscriptions/listen POST at once with the
// stream keeper's body, as [Transport.standaloneGET] answers the 2025 era's
// standalone GET: the 2026-07-28 listen stream is that era's push channel,
// and it gets the same guarantees from the same keeper (see
// [StreamConfig]). go-sdk v1.8.0 sends the listen once per session and
// never awaits its response (mcp/transport.go callSubscriptionsListen): a
// listen stream that ends is never opened again, and the session stays up
// with no push at all. The keeper re-sends the POST whenever the server's
// stream ends, on the shared backoff, feeds the [HostilityRule] and holds
// the stream while the [StreamSwitch] is off (no listen on the wire, the
// catalog is polled). Each re-sent POST is a new subscription (the server
// acknowledges it again; go-sdk ignores the acknowledgement), never a
// resumption: the listen carries no Last-Event-ID, so a stream back after a
// gap reports [Config.OnStreamRestored]. The acknowledgement is handed on
// but does not count as a message ([StreamAttempt.Messages]): a gateway
// that lets it through and cuts the stream fails at once.
//
// The keeper's body ends only when go-sdk ends the listen (its context,
// canceled by ClientSession.Close) or the session closes; the host's
// request timeout never bounds it.
func (t *Transport) listenPOST(req *http.Request) (*http.Response, error) {
	x := t.begin(req)
	x.Method, x.RequestID = requestIdentity(req)
	x.Local, x.Status, x.ContentType = true, http.StatusOK, "text/event-stream"
	t.finish(req, x)
	b := newStreamBody(t, req)
	b.listen = true
	return keeperAnswer(req, b), nil
}

// listenRequest returns the POST of one listen attempt: a shallow copy of
// go-sdk's POST with a fresh body (go-sdk's body is a bytes.Reader, so
// GetBody is set) and the jar's cookies.
func (b *streamBody) listenRequest() *http.Request {
	req := new(http.Request)
	*req = *b.req
	if b.req.GetBody != nil {
		if body, err := b.req.GetBody(); err == nil {
			req.Body = body
		}
	}
	if b.t.cfg.Jar != nil {
		req.Header = b.req.Header.Clone()
	}
	return req
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
