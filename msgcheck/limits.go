package msgcheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"iter"

	"github.com/mcpsup/mcpsup/internal/jsonscan"
)

// Defaults of [Limits] (DESIGN.md section 7 has the figures behind them).
const (
	DefaultMaxListItems           = 10_000 // ListItems; probes.DefaultMaxItems
	DefaultMaxJSONValues          = 1 << 20
	DefaultMaxMessages            = 10_000
	DefaultMaxContentBlocks       = 10_000
	DefaultMaxInputRequestObjects = 1_000 // some 64 KiB decoded each at worst
)

// Limits bound what go-sdk may decode of one server message, beyond its
// bytes (DESIGN.md section 7). A zero field bounds nothing;
// [Limits.WithDefaults] gives the defaults.
type Limits struct {
	ListItems  int // the items of one page of a list method's result
	JSONValues int // the JSON values of one message
	// Messages bounds the messages of a prompts/get result and of a
	// sampling/createMessage request's params.
	Messages int
	// ContentBlocks bounds the content blocks of a tools/call result and of
	// prompts/get's and sampling/createMessage's messages, nested ones
	// included, and a resources/read result's contents.
	ContentBlocks int
	// InputRequestObjects bounds the JSON objects in a tools/call,
	// prompts/get or resources/read result's inputRequests.
	InputRequestObjects int
}

// WithDefaults returns l with each zero or negative field set to its default.
func (l Limits) WithDefaults() Limits {
	for _, f := range []struct {
		v *int
		d int
	}{{&l.ListItems, DefaultMaxListItems}, {&l.JSONValues, DefaultMaxJSONValues}, {&l.Messages, DefaultMaxMessages},
		{&l.ContentBlocks, DefaultMaxContentBlocks}, {&l.InputRequestObjects, DefaultMaxInputRequestObjects}} {
		if *f.v <= 0 {
			*f.v = f.d
		}
	}
	return l
}

// Problem says why a message must not reach go-sdk, "" when it may: data
// (the whole message, or payload itself) holds more than JSONValues JSON
// values, or payload (the result of a call of method, or the params of the
// server's request of method) holds an array past its bound, e.g.
// "tools/list result with more than 10000 tools". Both are well-formed JSON.
func (l Limits) Problem(method string, data, payload []byte) string {
	if l.JSONValues > 0 && moreValues(data, l.JSONValues) {
		return fmt.Sprintf("JSON-RPC message with more than %d JSON values", l.JSONValues)
	}
	a, ok := decodedArrays[method]
	if !ok {
		return ""
	}
	subject := method + " result"
	if a.blocks == blocksInMessages {
		subject = method // "prompts/get with more than 10000 messages"
	}
	limit, noun := l.ListItems, a.key // a list's items
	switch a.key {
	case "messages":
		limit = l.Messages
	case "contents":
		limit, noun = l.ContentBlocks, "resource contents"
	}
	switch {
	case a.key != "" && mayHoldMore(payload, limit) && maxArrayItems(payload, a.key, limit) > limit:
		return fmt.Sprintf("%s with more than %d %s", subject, limit, noun)
	case a.blocks != noBlocks && mayHoldMore(payload, l.ContentBlocks) && contentBlocks(payload, a.blocks, l.ContentBlocks) > l.ContentBlocks:
		return fmt.Sprintf("%s with more than %d content blocks", subject, l.ContentBlocks)
	case a.inputRequests && mayHoldMore(payload, l.InputRequestObjects) &&
		objectsUnder(payload, inputRequestsKey, l.InputRequestObjects) > l.InputRequestObjects:
		return fmt.Sprintf("%s with more than %d objects in %s", subject, l.InputRequestObjects, inputRequestsKey)
	}
	return ""
}

// mayHoldMore reports whether payload can hold more than limit things of a
// byte each; a limit of 0 bounds nothing.
func mayHoldMore(payload []byte, limit int) bool { return limit > 0 && len(payload) > limit }

// decodedArrays are the methods whose payload msgcheck reads, by what it
// holds: arrays go-sdk decodes item by item, each item costing far more than
// its bytes (every key go-sdk reads as the array counts, escaped or
// duplicate too), an input_required result, a ttlMs hint.
var decodedArrays = map[string]struct {
	key    string    // "": no array counted by key (tools/call: its blocks are)
	blocks blockTree // where the payload's content blocks are
	// inputRequests: the methods an input_required result may answer, its
	// objects held to InputRequestObjects (basic/patterns/mrtr.mdx:
	// "Servers MUST NOT send InputRequiredResult responses on any other
	// client requests").
	inputRequests bool
	cacheable     bool // its result carries a ttlMs hint (SEP-2549, MCP 2026-07-28 Cacheable)
}{
	"tools/list": {key: "tools", cacheable: true}, "prompts/list": {key: "prompts", cacheable: true},
	"resources/list": {key: "resources", cacheable: true}, "resources/templates/list": {key: "resourceTemplates", cacheable: true},
	"prompts/get":            {key: "messages", blocks: blocksInMessages, inputRequests: true},
	"sampling/createMessage": {key: "messages", blocks: blocksInMessages},
	"tools/call":             {blocks: blocksAtTop, inputRequests: true},
	"resources/read":         {key: "contents", inputRequests: true},
}

// maxArrayItems returns the most elements of an array that is the value of
// key at the top level of the JSON object obj, counting no further than
// limit+1; 0 when there is none. obj is well-formed JSON (decoded already).
func maxArrayItems(obj []byte, key string, limit int) int {
	most := 0
	for v := range keyValues(obj, key) {
		if v[0] == '[' {
			if most = max(most, arrayElements(v, limit)); most > limit {
				return most
			}
		}
	}
	return most
}

// tokens yields the index i of each byte of the JSON data outside strings
// but white space and ':', and a string once, i and end at its quotes (else
// end is i). It stops at a string data ends inside.
func tokens(data []byte) iter.Seq2[int, int] {
	return func(yield func(i, end int) bool) {
		for i := 0; i < len(data); i++ {
			end := i
			switch data[i] {
			case ' ', '\t', '\n', '\r', ':':
				continue
			case '"':
				var ok bool
				if end, ok = jsonscan.StringEnd(data, i+1); !ok {
					return
				}
			}
			if !yield(i, end) {
				return
			}
			i = end
		}
	}
}

// keyValues yields each object or array that is the value of key at the top
// level of the well-formed JSON object obj, every occurrence (escaped too).
func keyValues(obj []byte, key string) iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		depth, start := 0, -1 // start: where the value being yielded begins
		keyed := false        // the last string at depth 1 was key, and a ':' follows
		for i, end := range tokens(obj) {
			switch c := obj[i]; c {
			case '"':
				keyed = depth == 1 && isKey(obj, i, end, key)
			case '{', '[':
				if keyed && depth == 1 {
					start = i
				}
				depth++
				keyed = false
			case '}', ']':
				if depth--; depth == 1 && start >= 0 {
					if !yield(obj[start : i+1]) {
						return
					}
					start = -1
				}
			default:
				keyed = false
			}
		}
	}
}

// arrayElements returns the elements of the JSON array arr, counting no
// further than limit+1.
func arrayElements(arr []byte, limit int) int {
	n, depth := 0, 0
	for i := range tokens(arr) {
		c := arr[i]
		if c == '}' || c == ']' {
			depth--
			continue
		}
		if depth == 1 && (n == 0 || c == ',') {
			n++
		}
		if c == '{' || c == '[' {
			depth++
		}
		if n > limit {
			break
		}
	}
	return n
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

// moreValues reports whether data holds more than limit JSON values, counted
// as every '{', '[' or ',' outside strings.
func moreValues(data []byte, limit int) bool {
	if len(data) <= limit {
		return false // each value counted takes a byte of its own
	}
	n := 0
	for i := range tokens(data) {
		if c := data[i]; c == '{' || c == '[' || c == ',' {
			if n++; n > limit {
				return true
			}
		}
	}
	return false
}
