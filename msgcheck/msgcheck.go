// Package msgcheck is the one message-level check of every transport: what
// go-sdk may decode of a server's message ([Limits]), and what a decoded
// response must be to reach it ([Checker.Response]). A problem is a sentence
// naming what was wrong; the transport fails the one call it answers (or
// drops the one message) with it, and nothing else.
package msgcheck

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// CodeRefused is the JSON-RPC error code of the response a transport gives
// go-sdk in place of an answer it refused: in JSON-RPC 2.0's
// implementation-defined server-error range (-32000 to -32099, section 5.1).
const CodeRefused = -32090

// ModernVersion reports whether protocol version v is 2026-07-28 or later,
// the one era comparison. Versions are dates: they compare as strings.
func ModernVersion(v string) bool { return v >= "2026-07-28" }

// Request is the client's request a response answers.
type Request struct {
	Method string
	// ProtocolVersion is its MCP-Protocol-Version header; "" on a transport
	// without headers (the x-mcp-header rules are streamable HTTP's).
	ProtocolVersion string
	// Body returns the request as sent (http.Request.GetBody's shape), read
	// (at most 4 MiB) only for the clientCapabilities an input_required
	// result is checked against; nil: none checked.
	Body func() (io.ReadCloser, error)
}

// Checker checks decoded responses. The zero value checks with nothing
// logged; safe for concurrent use.
type Checker struct {
	// Logger warns of each tool dropped from a tools/list result; nil: none.
	Logger *slog.Logger
}

// Response checks r, the decoded response to req, and makes it one go-sdk
// reads as the protocol means it. problem, when not "", says why r must not
// reach go-sdk; else changed reports whether r.Result was rewritten. An
// error response is left alone.
func (c Checker) Response(req Request, r *jsonrpc.Response) (problem string, changed bool) {
	if r.Error != nil {
		return "", false
	}
	changed = tameTTLHint(req.Method, r)
	problem, typed := checkResultType(req, r)
	if problem != "" {
		return problem, false
	}
	return "", dropInvalidHeaderTools(req, r, c.Logger) || typed || changed
}

// IDText renders a JSON-RPC id quoted in an error or a fact: its JSON
// (control bytes escaped), at most 64 bytes.
func IDText(id jsonrpc.ID) string {
	b, _ := json.Marshal(id.Raw()) // nil, an int64 or a string
	return fmt.Sprintf("%.64s", b)
}

// CutText shortens untrusted text quoted in an error or a fact to its first
// n bytes and "…".
func CutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
