package mcptest

import (
	"net/http"
	"time"
)

// RawSSE answers 200 text/event-stream with exactly body, raw SSE lines that
// need not be well-formed (a line without a colon, data that is not
// JSON-RPC, an event of any size, bytes that are no text at all), then
// holds the response open for hold (bounded by [GatewayOptions.MaxHold]),
// until the client goes away or [Gateway.Close] is called; hold 0 ends it
// at once. Meant for the standalone GET stream. The server never sees the
// request.
func RawSSE(body []byte, hold time.Duration) Action {
	body = append([]byte(nil), body...)
	return actionFunc(func(x *exchange) {
		x.answeredBy(ByGateway)
		h := x.w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		x.w.WriteHeader(http.StatusOK)
		_, _ = x.w.Write(body)
		x.w.Flush()
		if hold > 0 {
			x.g.wait(x.r, hold)
		}
	})
}

// HostileSSE returns the rule that answers the first standalone GET with
// [RawSSE](body, hold) and passes the later ones to the server.
func HostileSSE(body []byte, hold time.Duration) Rule {
	return Rule{
		Name:   "hostile standalone stream",
		Match:  Match{Verb: http.MethodGet, Occurrence: First()},
		Action: RawSSE(body, hold),
	}
}
