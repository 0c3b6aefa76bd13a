package classify

import (
	"encoding/json"
	"strings"

	segjson "github.com/segmentio/encoding/json"
)

// embeddedRPCError decodes a JSON-RPC error object embedded in message text
// (`Error POSTing to endpoint: {"jsonrpc":...}`): at most maxEmbeddedTries
// candidates, each a '{' followed by '"'.
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
		if r, ok := ParseRPCError([]byte(text[start:])); ok {
			return r.RPCError, true
		}
	}
	return RPCError{}, false
}

// BodyRPCError is a JSON-RPC error response decoded from bytes.
type BodyRPCError struct {
	RPCError
	ID string // the response's id as raw JSON: "" when absent, "null" when null
}

// ParseRPCError decodes the first JSON value in b as a JSON-RPC 2.0 error
// response (JSON-RPC 2.0 section 5): "jsonrpc":"2.0", an integer error code,
// member names matched exactly; trailing bytes ignored; the message cut to
// [MaxDetail] bytes. It reports false for anything else. Linear in len(b);
// safe for concurrent use.
func ParseRPCError(b []byte) (BodyRPCError, bool) {
	var top struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *struct {
			Code    *int64 `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	// Member names match exactly, unlike encoding/json's.
	if _, err := segjson.Parse(b, &top, segjson.DontMatchCaseInsensitiveStructFields); err != nil ||
		top.JSONRPC != "2.0" || top.Error == nil || top.Error.Code == nil {
		return BodyRPCError{}, false
	}
	id := strings.TrimSpace(string(top.ID))
	return BodyRPCError{
		RPCError: RPCError{
			Present: true,
			Code:    *top.Error.Code,
			Message: cut(top.Error.Message, MaxDetail),
			HasID:   id != "" && id != "null",
		},
		ID: id,
	}, true
}
