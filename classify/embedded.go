package classify

import (
	"bytes"
	"encoding/json"
	"strings"
)

// embeddedRPCError finds a JSON-RPC error object embedded in message text,
// e.g. `Error POSTing to endpoint: {"jsonrpc":"2.0","id":3,"error":{...}}`,
// and decodes it as JSON. Only '{' followed by '"' starts a candidate, and at
// most maxEmbeddedTries candidates are decoded.
func embeddedRPCError(text string) (RPCError, bool) {
	tries := 0
	for i := 0; i < len(text) && tries < maxEmbeddedTries; {
		j := strings.IndexByte(text[i:], '{')
		if j < 0 {
			break
		}
		start := i + j
		i = start + 1
		rest := strings.TrimLeft(text[i:], " \t\r\n")
		if !strings.HasPrefix(rest, `"`) {
			continue
		}
		tries++
		if r, ok := parseRPCError(strings.NewReader(text[start:])); ok {
			return r.RPCError, true
		}
	}
	return RPCError{}, false
}

// BodyRPCError is a JSON-RPC error response decoded from bytes.
type BodyRPCError struct {
	RPCError
	// ID is the response's id as raw JSON: "" when absent, "null" when null.
	ID string
}

// ParseRPCError decodes the first JSON value in b as a JSON-RPC 2.0 error
// response ({"jsonrpc":"2.0","id":...,"error":{"code":...,"message":...}},
// JSON-RPC 2.0 section 5). It requires "jsonrpc":"2.0" and an integer error
// code; trailing bytes after the value are ignored; the message is cut to
// [MaxDetail] bytes. It reports false for anything else, including malformed
// JSON and nesting deeper than encoding/json accepts. The wire layer uses it on
// response bodies. Work is linear in len(b); it is safe for concurrent use.
func ParseRPCError(b []byte) (BodyRPCError, bool) {
	return parseRPCError(bytes.NewReader(b))
}

type rpcErrorResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   *struct {
		Code    *int64 `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func parseRPCError(r interface {
	Read([]byte) (int, error)
}) (BodyRPCError, bool) {
	var m rpcErrorResponse
	if err := json.NewDecoder(r).Decode(&m); err != nil {
		return BodyRPCError{}, false
	}
	if m.JSONRPC != "2.0" || m.Error == nil || m.Error.Code == nil {
		return BodyRPCError{}, false
	}
	id := strings.TrimSpace(string(m.ID))
	return BodyRPCError{
		RPCError: RPCError{
			Present: true,
			Code:    *m.Error.Code,
			Message: cut(m.Error.Message, MaxDetail),
			HasID:   id != "" && id != "null",
		},
		ID: id,
	}, true
}
