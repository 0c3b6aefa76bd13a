package mcptest

import (
	"net/http"
	"strconv"
	"time"
)

// JSON-RPC error codes used by the presets (JSON-RPC 2.0, section 5.1).
const (
	// CodeMethodNotFound is JSON-RPC -32601 Method not found.
	CodeMethodNotFound = -32601
	// CodeServerError is JSON-RPC -32000, the first implementation-defined
	// server error; the TypeScript and Python SDK servers use it to reject
	// an unknown session.
	CodeServerError = -32000
)

// StaleSessionMessage is the message the TypeScript SDK server sends with
// its -32000 rejection of an unknown session (DESIGN.md, S2).
const StaleSessionMessage = "Bad Request: No valid session ID provided"

// TemplatesMethodNotFound is S1 (DESIGN.md): every POST of
// resources/templates/list is answered HTTP 400 with
// {"jsonrpc":"2.0","id":<the request's id>,"error":{"code":-32601,"message":"Method not found"}}.
func TemplatesMethodNotFound() Rule {
	return Rule{
		Name:   "S1 templates 400 -32601",
		Match:  Match{Verb: http.MethodPost, Method: "resources/templates/list"},
		Action: JSONRPCError(http.StatusBadRequest, RequestID, CodeMethodNotFound, "Method not found"),
	}
}

// StaleSessionNullID is S2 (DESIGN.md): every request carrying an
// Mcp-Session-Id the server does not know is answered HTTP 400 with
// {"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}.
// It needs [GatewayOptions.KnownSession] (a [Server] fixture sets it).
func StaleSessionNullID() Rule {
	return Rule{
		Name:   "S2 stale session 400 -32000 null id",
		Match:  Match{Session: UnknownSession},
		Action: JSONRPCError(http.StatusBadRequest, NullID, CodeServerError, StaleSessionMessage),
	}
}

// StaleSessionNoID is [StaleSessionNullID] with the id member absent, as the
// TypeScript SDK server writes it:
// {"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}.
func StaleSessionNoID() Rule {
	return Rule{
		Name:   "S2 stale session 400 -32000 no id",
		Match:  Match{Session: UnknownSession},
		Action: JSONRPCError(http.StatusBadRequest, NoID, CodeServerError, StaleSessionMessage),
	}
}

// StaleSession500 is S2's other variant (DESIGN.md): every request carrying
// an Mcp-Session-Id the server does not know is answered HTTP 500 with a
// plain-text body "Internal Server Error".
func StaleSession500() Rule {
	return Rule{
		Name:   "S2 stale session 500",
		Match:  Match{Session: UnknownSession},
		Action: PlainText(http.StatusInternalServerError, "Internal Server Error"),
	}
}

// ToolCallServerError is S4 (DESIGN.md): every tools/call is answered HTTP
// 500 with a plain-text body "Internal Server Error".
func ToolCallServerError() Rule {
	return Rule{
		Name:   "S4 tools/call 500",
		Match:  Match{Verb: http.MethodPost, Method: "tools/call"},
		Action: PlainText(http.StatusInternalServerError, "Internal Server Error"),
	}
}

// ToolCallRateLimited is S4 (DESIGN.md): every tools/call is answered HTTP
// 429 with a non-JSON (text/plain) body "Too Many Requests" and
// Retry-After: <retryAfter in whole seconds, at least 0>.
func ToolCallRateLimited(retryAfter time.Duration) Rule {
	secs := max(int(retryAfter/time.Second), 0)
	return Rule{
		Name:  "S4 tools/call 429",
		Match: Match{Verb: http.MethodPost, Method: "tools/call"},
		Action: Respond(http.StatusTooManyRequests, http.Header{
			"Content-Type": {"text/plain; charset=utf-8"},
			"Retry-After":  {strconv.Itoa(secs)},
		}, []byte("Too Many Requests")),
	}
}

// ForbiddenPage is the HTML body of [ToolCallForbiddenHTML].
const ForbiddenPage = "<!DOCTYPE html><html><head><title>403 Forbidden</title></head>" +
	"<body><h1>Forbidden</h1><p>Request blocked by policy.</p></body></html>"

// ToolCallForbiddenHTML is S4 (DESIGN.md): every tools/call is answered
// HTTP 403 with an HTML page ([ForbiddenPage]) and no WWW-Authenticate
// header, as a web application firewall does.
func ToolCallForbiddenHTML() Rule {
	return Rule{
		Name:   "S4 tools/call 403 html",
		Match:  Match{Verb: http.MethodPost, Method: "tools/call"},
		Action: HTML(http.StatusForbidden, ForbiddenPage),
	}
}

// GETHostile is S5 (DESIGN.md): every GET (the standalone SSE stream) is
// answered 200 text/event-stream and closed at once; POSTs are untouched.
func GETHostile() Rule {
	return Rule{
		Name:   "S5 GET-hostile gateway",
		Match:  Match{Verb: http.MethodGet},
		Action: StreamThenClose(),
	}
}

// IdleCut is S5's healthy case (DESIGN.md): every GET reaches the server,
// and its stream is cut once silent for silence (see [CutAfterSilence]).
func IdleCut(silence time.Duration) Rule {
	return Rule{
		Name:   "S5 idle-cutting proxy",
		Match:  Match{Verb: http.MethodGet},
		Action: CutAfterSilence(silence),
	}
}

// RejectGET answers every GET with status (405, 404, 400 ...) and a
// plain-text body; a 405 also carries "Allow: POST" (RFC 9110, 15.5.6), as
// a server without a standalone stream answers.
func RejectGET(status int) Rule {
	h := http.Header{"Content-Type": {"text/plain; charset=utf-8"}}
	if status == http.StatusMethodNotAllowed {
		h.Set("Allow", "POST")
	}
	return Rule{
		Name:   "GET rejected " + strconv.Itoa(status),
		Match:  Match{Verb: http.MethodGet},
		Action: Respond(status, h, []byte(http.StatusText(status))),
	}
}

// ListenMethod is the JSON-RPC method of the 2026-07-28 era's push channel
// (MCP SEP-2575): a POST whose answer is a long-lived event stream carrying
// the list_changed notifications the client subscribed to.
const ListenMethod = "subscriptions/listen"

// ListenHostile is S5 for the 2026-07-28 era (DESIGN.md): every
// subscriptions/listen POST is answered 200 text/event-stream and closed at
// once, with no event (not even the server's acknowledgement); every other
// POST is untouched. The server never sees the listen.
func ListenHostile() Rule {
	return Rule{
		Name:   "S5 listen-hostile gateway",
		Match:  Match{Verb: http.MethodPost, Method: ListenMethod},
		Action: StreamThenClose(),
	}
}

// ListenIdleCut is S5's healthy case for the 2026-07-28 era: every
// subscriptions/listen POST reaches the server, and its stream is cut once
// silent for silence (see [CutAfterSilence]), as a proxy that cuts idle
// streams does.
func ListenIdleCut(silence time.Duration) Rule {
	return Rule{
		Name:   "S5 listen idle-cutting proxy",
		Match:  Match{Verb: http.MethodPost, Method: ListenMethod},
		Action: CutAfterSilence(silence),
	}
}

// ListenRejected answers every subscriptions/listen POST with status and a
// plain-text body, as a gateway that does not route the method does (a 502
// from a proxy whose upstream failed, a 404 from one that knows only the
// request methods).
func ListenRejected(status int) Rule {
	return Rule{
		Name:   "listen rejected " + strconv.Itoa(status),
		Match:  Match{Verb: http.MethodPost, Method: ListenMethod},
		Action: PlainText(status, http.StatusText(status)),
	}
}
