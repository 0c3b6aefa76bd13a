// Package msgcheck checks a server's MCP messages before go-sdk decodes
// them, the same for every transport: what go-sdk may decode of one
// message ([Limits]: JSON values, list items, messages, content blocks,
// input requests), and what a decoded response must be to reach it
// ([Checker.Response]: a ttlMs go-sdk can decode, the resultType rules of
// MCP 2026-07-28, the x-mcp-header constraints on tools/list). A problem is
// a sentence naming what was wrong; the transport fails the one call it
// answers (or drops the one message) with it, and nothing else.
package msgcheck

import (
	"io"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// CodeRefused is the JSON-RPC error code of the error response a
// transport gives go-sdk in the server's place for an answer it refused (a
// problem this package named, an HTTP error status): in the
// implementation-defined server-error range -32000 to -32099 of JSON-RPC
// 2.0, section 5.1, so that no server's own code is taken for it.
const CodeRefused = -32090

// era20260728 is the first protocol version of the 2026-07-28 era.
const era20260728 = "2026-07-28"

// ModernVersion reports whether protocol version v is 2026-07-28 or later:
// the one comparison by which a request's or a session's era decides the
// rules of that era (streams, standard headers, log level, keepalive).
// Versions are dates, so they compare as strings.
func ModernVersion(v string) bool { return v >= era20260728 }

// Request is the request of the client's that a response answers, as the
// checks need it.
type Request struct {
	// Method is the request's method.
	Method string
	// ProtocolVersion is the version the request went out with (its
	// MCP-Protocol-Version header on HTTP); "" for none. The x-mcp-header
	// rules, which are streamable HTTP's, apply from 2026-07-28 on: a
	// transport without headers leaves it "".
	ProtocolVersion string
	// Body returns the request message as it was sent, in
	// http.Request.GetBody's shape. It is read (at most 4 MiB) only for an
	// input_required result that asks for input, to find the request's
	// declared clientCapabilities; nil: none known, none checked.
	Body func() (io.ReadCloser, error)
}

// Checker checks decoded responses. The zero value checks with nothing
// logged; safe for concurrent use.
type Checker struct {
	// Logger gets a warning for each tool dropped from a tools/list
	// result; nil: none.
	Logger *slog.Logger
}

// Response checks r, the decoded response to req, and makes it one go-sdk
// reads as the protocol means it: a list result's ttlMs it cannot decode
// is truncated or removed ([tameTTLHint]), the resultType rules apply
// ([checkResultType]), and a 2026-07-28 tools/list result loses every tool
// with an invalid x-mcp-header ([dropInvalidHeaderTools]). problem, when
// not "", says why r must not reach go-sdk; else changed reports whether
// r.Result was rewritten. An error response is left alone.
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
