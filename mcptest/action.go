package mcptest

import (
	"context"
	"fmt"
	"maps"
	"net"
	"net/http"
	"strconv"
	"time"
)

// Action is what a [Gateway] does with a request a rule selected. Build one
// with the functions of this package ([Respond], [JSONRPCError], [Reset],
// [StreamThenClose] ...).
type Action interface {
	serve(x *exchange)
}

type actionFunc func(x *exchange)

func (f actionFunc) serve(x *exchange) { f(x) }

// Pass sends the request on to the server unchanged.
func Pass() Action {
	return actionFunc(func(x *exchange) {
		x.answeredBy(ByServer)
		x.g.next.ServeHTTP(x.w, x.r)
	})
}

// Respond answers with exactly status, header and body; the server never
// sees the request. No Content-Type is added when header has none.
func Respond(status int, header http.Header, body []byte) Action {
	header = header.Clone()
	body = append([]byte(nil), body...)
	return actionFunc(func(x *exchange) {
		x.answeredBy(ByGateway)
		writeRaw(x.w, status, header, body)
	})
}

func writeRaw(w http.ResponseWriter, status int, header http.Header, body []byte) {
	h := w.Header()
	maps.Copy(h, header)
	if _, ok := header["Content-Type"]; !ok {
		h["Content-Type"] = nil // keep net/http from sniffing one
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// PlainText answers status with a text/plain; charset=utf-8 body.
func PlainText(status int, body string) Action {
	return Respond(status, http.Header{"Content-Type": {"text/plain; charset=utf-8"}}, []byte(body))
}

// HTML answers status with a text/html; charset=utf-8 body, as a web
// application firewall or a login page does.
func HTML(status int, body string) Action {
	return Respond(status, http.Header{"Content-Type": {"text/html; charset=utf-8"}}, []byte(body))
}

// Empty answers status with no body and no Content-Type.
func Empty(status int) Action {
	return Respond(status, nil, nil)
}

// IDMode chooses the id of a gateway-made JSON-RPC error body.
type IDMode int

const (
	// RequestID echoes the request's own JSON-RPC id (null when the request
	// had none): the error answers that request.
	RequestID IDMode = iota
	// NullID writes "id":null, as a server does for an error it cannot tie
	// to a request (JSON-RPC 2.0, section 5).
	NullID
	// NoID omits the id member, as the TypeScript SDK server does when it
	// rejects an unknown session (DESIGN.md, S2).
	NoID
)

// JSONRPCError answers status with an application/json JSON-RPC error body
// whose id is chosen by id. The bytes are, for RequestID,
//
//	{"jsonrpc":"2.0","id":<id>,"error":{"code":<code>,"message":<message>}}
//
// for NullID
//
//	{"jsonrpc":"2.0","error":{"code":<code>,"message":<message>},"id":null}
//
// and for NoID the same without the id member.
func JSONRPCError(status int, id IDMode, code int, message string) Action {
	return actionFunc(func(x *exchange) {
		x.answeredBy(ByGateway)
		body := JSONRPCErrorBody(id, x.msg.ID, code, message)
		writeRaw(x.w, status, http.Header{"Content-Type": {"application/json"}}, body)
	})
}

// JSONRPCErrorBody returns the body [JSONRPCError] writes for a request
// whose raw JSON-RPC id is requestID (nil when it had none).
func JSONRPCErrorBody(id IDMode, requestID []byte, code int, message string) []byte {
	errObj := fmt.Sprintf(`{"code":%d,"message":%s}`, code, strconv.Quote(message))
	switch id {
	case NullID:
		return []byte(`{"jsonrpc":"2.0","error":` + errObj + `,"id":null}`)
	case NoID:
		return []byte(`{"jsonrpc":"2.0","error":` + errObj + `}`)
	default:
		rid := "null"
		if len(requestID) > 0 {
			rid = string(requestID)
		}
		return []byte(`{"jsonrpc":"2.0","id":` + rid + `,"error":` + errObj + `}`)
	}
}

// Delay waits d (bounded by [GatewayOptions.MaxHold]) and then passes the
// request to the server. If the request's context ends first, nothing is
// sent on; [Gateway.Close] ends the wait early.
func Delay(d time.Duration) Action { return DelayThen(d, Pass()) }

// DelayThen waits like [Delay] and then applies next (nil: [Pass]).
func DelayThen(d time.Duration, next Action) Action {
	if next == nil {
		next = Pass()
	}
	return actionFunc(func(x *exchange) {
		if !x.g.wait(x.r, d) {
			x.answeredBy(ByGateway)
			return
		}
		next.serve(x)
	})
}

// Reset drops the connection without a response: the gateway takes over
// the TCP connection and closes it with SO_LINGER 0, so the client sees a
// reset (or EOF where the platform cannot reset). The server never sees
// the request; the log records status 0.
func Reset() Action {
	return actionFunc(func(x *exchange) {
		x.answeredBy(ByGateway)
		dropConnection(x.w, true)
	})
}

// ResetAfterServer passes the request to the server, discards its answer
// and drops the connection with a reset, as [Reset] does: the server ran the
// request, the client never hears how (a call whose outcome is unknown).
// The log records status 0.
func ResetAfterServer() Action {
	return actionFunc(func(x *exchange) {
		x.answeredBy(ByServer)
		x.g.next.ServeHTTP(&discardWriter{header: http.Header{}}, x.r)
		dropConnection(x.w, true)
	})
}

// discardWriter is a ResponseWriter that keeps nothing.
type discardWriter struct{ header http.Header }

func (d *discardWriter) Header() http.Header         { return d.header }
func (d *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d *discardWriter) WriteHeader(int)             {}
func (d *discardWriter) Flush()                      {}

// dropConnection closes the request's connection without a response; with
// reset it asks for an RST instead of a FIN.
func dropConnection(w http.ResponseWriter, reset bool) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		// HTTP/2 or a writer that cannot hijack: abort the stream instead.
		panic(http.ErrAbortHandler)
	}
	if tcp, ok := conn.(*net.TCPConn); ok && reset {
		_ = tcp.SetLinger(0)
	}
	_ = conn.Close()
}

// StreamThenClose answers 200 text/event-stream and ends the response at
// once, with no event: what a gateway hostile to the standalone GET stream
// does (DESIGN.md, S5). The server never sees the request.
func StreamThenClose() Action {
	return actionFunc(func(x *exchange) {
		x.answeredBy(ByGateway)
		h := x.w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		x.w.WriteHeader(http.StatusOK)
		x.w.Flush()
	})
}

// CutAfterSilence passes the request to the server and ends the response
// once no byte has flowed for silence (bounded by
// [GatewayOptions.MaxHold]): a proxy that cuts idle streams (DESIGN.md,
// S5). Meant for the standalone GET stream; the server sees the request
// and sees it end as a client disconnect.
func CutAfterSilence(silence time.Duration) Action {
	return actionFunc(func(x *exchange) {
		x.answeredBy(ByServer)
		d := x.g.bound(silence)
		ctx, cancel := context.WithCancel(x.r.Context())
		defer cancel()
		timer := time.AfterFunc(d, cancel)
		defer timer.Stop()
		x.w.watchWrites(func() { timer.Reset(d) })
		defer x.w.watchWrites(nil)
		watched := make(chan struct{})
		go func() {
			defer close(watched)
			select {
			case <-x.g.closing:
				cancel()
			case <-ctx.Done():
			}
		}()
		x.g.next.ServeHTTP(x.w, x.r.WithContext(ctx))
		cancel()
		<-watched
	})
}

// HoldHeaders sends nothing for hold (bounded by
// [GatewayOptions.MaxHold]) and then closes the connection without a
// response; it ends early, the same way, when the request's context ends
// or [Gateway.Close] is called. The server never sees the request.
func HoldHeaders(hold time.Duration) Action {
	return actionFunc(func(x *exchange) {
		x.answeredBy(ByGateway)
		if x.g.wait(x.r, hold) {
			dropConnection(x.w, false)
		}
	})
}
