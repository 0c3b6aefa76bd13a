package classify

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
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
		if r, ok := parseRPCError(strings.NewReader(text[start:])); ok {
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
	return parseRPCError(bytes.NewReader(b))
}

func parseRPCError(r io.Reader) (BodyRPCError, bool) {
	// Maps, not structs: encoding/json matches struct fields in any case.
	var top map[string]json.RawMessage
	if err := json.NewDecoder(r).Decode(&top); err != nil {
		return BodyRPCError{}, false
	}
	var version string
	if json.Unmarshal(top["jsonrpc"], &version) != nil || version != "2.0" {
		return BodyRPCError{}, false
	}
	var e map[string]json.RawMessage
	if json.Unmarshal(top["error"], &e) != nil || e == nil {
		return BodyRPCError{}, false
	}
	var code int64
	raw, ok := e["code"]
	if !ok || string(raw) == "null" || json.Unmarshal(raw, &code) != nil {
		return BodyRPCError{}, false
	}
	var message string
	if m, ok := e["message"]; ok && json.Unmarshal(m, &message) != nil {
		return BodyRPCError{}, false
	}
	id := strings.TrimSpace(string(top["id"]))
	return BodyRPCError{
		RPCError: RPCError{
			Present: true,
			Code:    code,
			Message: cut(message, MaxDetail),
			HasID:   id != "" && id != "null",
		},
		ID: id,
	}, true
}
