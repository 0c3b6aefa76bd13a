package wire

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// DefaultMaxListItems is the default of [Config.MaxListItems], the same
// as probes.DefaultMaxItems.
const DefaultMaxListItems = 10_000

// listKeys are the keys of the item arrays of the list methods' results.
var listKeys = map[string]string{
	"tools/list": "tools", "prompts/list": "prompts", "resources/list": "resources",
	"resources/templates/list": "resourceTemplates",
}

// listProblem says why the result of a list method's response is refused
// before go-sdk decodes it, "" when it is not: its item array holds more
// than limit items. go-sdk decodes each item into a struct of its own (an
// mcp.Tool is some 170 bytes where `{}` is 2), so a page of 16 MiB of empty
// items would cost the client near a GiB before the pagination's item
// limit is checked. Every key go-sdk reads as the item array counts, an
// escaped one or an earlier duplicate too (each is decoded in turn).
func listProblem(method string, r *jsonrpc.Response, limit int) string {
	if r.Error != nil {
		return ""
	}
	return ListItemsProblem(method, r.Result, limit)
}

// ListItemsProblem says why result, a well-formed JSON result of method, is
// one go-sdk must not decode: it is a list method's (tools/list,
// prompts/list, resources/list, resources/templates/list) and its item
// array holds more than limit items, e.g. "tools/list result with more
// than 10000 tools"; "" otherwise. It reads result once and allocates
// nothing (but for a key written with escapes). The Transport checks every
// list answer with it ([Config.MaxListItems]); a stdio connection can too.
func ListItemsProblem(method string, result []byte, limit int) string {
	key, ok := listKeys[method]
	if !ok {
		return ""
	}
	if n := maxArrayItems(result, key, limit); n > limit {
		return fmt.Sprintf("%s result with more than %d %s", method, limit, key)
	}
	return ""
}

// maxArrayItems returns the most elements of an array that is the value of
// key at the top level of the JSON object obj, counting no further than
// limit+1; 0 when there is none. obj is well-formed JSON (decoded already).
func maxArrayItems(obj []byte, key string, limit int) int {
	most := 0
	depth := 0
	keyed := false // the last string at depth 1 was key, and a ':' follows
	counting, n := false, 0
	for i := 0; i < len(obj); i++ {
		switch c := obj[i]; c {
		case '"':
			end, ok := stringEnd(obj, i+1)
			if !ok {
				return most
			}
			if depth == 1 {
				keyed = isKey(obj, i, end, key)
			}
			if counting && depth == 2 && n == 0 {
				n = 1
			}
			i = end
		case '{', '[':
			if counting && depth == 2 && n == 0 {
				n = 1
			}
			depth++
			if depth == 2 && keyed && c == '[' {
				counting, n = true, 0
			}
			keyed = false
		case '}', ']':
			if counting && depth == 2 {
				most, counting = max(most, n), false
			}
			depth--
			keyed = false
		case ',':
			if counting && depth == 2 {
				n++
				if n > limit {
					return n
				}
			}
			if depth == 1 {
				keyed = false
			}
		case ' ', '\t', '\n', '\r', ':':
		default: // a number, true, false or null
			if counting && depth == 2 && n == 0 {
				n = 1
			}
			if depth == 1 {
				keyed = false
			}
		}
	}
	return most
}

// isKey reports whether the string obj[start:end+1] (quotes included) is
// key, as a decoder reads it (escapes undone), and is followed by ':'.
func isKey(obj []byte, start, end int, key string) bool {
	rest := bytes.TrimLeft(obj[end+1:], " \t\n\r")
	if len(rest) == 0 || rest[0] != ':' {
		return false
	}
	s := obj[start+1 : end]
	if bytes.IndexByte(s, '\\') < 0 {
		return string(s) == key
	}
	var k string
	return json.Unmarshal(obj[start:end+1], &k) == nil && k == key
}

// DefaultMaxJSONValues is the default of [Config.MaxJSONValues].
const DefaultMaxJSONValues = 1 << 20

// valuesProblem says why a message go-sdk is to decode is refused, "" when
// it is not: it holds more than limit JSON values (see
// [Config.MaxJSONValues]).
func valuesProblem(data []byte, limit int) string {
	if moreValues(data, limit) {
		return fmt.Sprintf("JSON-RPC message with more than %d JSON values", limit)
	}
	return ""
}

// JSONValuesProblem says why data, well-formed JSON of a message go-sdk is
// to decode (its params or result), is refused: it holds more than limit
// JSON values, counted as [Config.MaxJSONValues] counts them; "" when it
// does not. It reads data once and allocates nothing.
func JSONValuesProblem(data []byte, limit int) string { return valuesProblem(data, limit) }

// moreValues reports whether data holds more than limit JSON values, as
// [Config.MaxJSONValues] counts them: every object and array, and every
// element or member after the first of each (a '{', '[' or ',' outside
// strings). It reads data once and allocates nothing.
func moreValues(data []byte, limit int) bool {
	if len(data) <= limit {
		return false // each value counted takes a byte of its own
	}
	n := 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '"':
			end, ok := stringEnd(data, i+1)
			if !ok {
				return false
			}
			i = end
		case '{', '[', ',':
			n++
			if n > limit {
				return true
			}
		}
	}
	return false
}

// DefaultMaxMessages is the default of [Config.MaxMessages].
const DefaultMaxMessages = 10_000

// messageArrays are the methods whose messages go-sdk decodes one by one,
// each with a decoder of its own (mcp.PromptMessage and
// mcp.SamplingMessage UnmarshalJSON: some 30 KiB allocated a message), and
// the key of their array: of a prompts/get result, of a
// sampling/createMessage request's params.
var messageArrays = map[string]string{"prompts/get": "messages", "sampling/createMessage": "messages"}

// MessagesProblem says why data, the well-formed result (prompts/get) or
// params (sampling/createMessage) of method, is one go-sdk must not
// decode: its messages array holds more than limit messages, e.g.
// "prompts/get with more than 10000 messages"; "" otherwise, and for every
// other method. It reads data once and allocates nothing (but for a key
// written with escapes).
func MessagesProblem(method string, data []byte, limit int) string {
	key, ok := messageArrays[method]
	if !ok {
		return ""
	}
	if n := maxArrayItems(data, key, limit); n > limit {
		return fmt.Sprintf("%s with more than %d %s", method, limit, key)
	}
	return ""
}
