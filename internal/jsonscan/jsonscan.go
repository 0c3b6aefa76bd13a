// Package jsonscan holds the byte-level JSON scanning that the message
// checks (package msgcheck) and the HTTP transport share: where a string
// ends, where an object or array ends, and the flags go-sdk decodes with.
// None of it validates JSON; callers hand it data decoded already, or
// refuse what it cannot find.
package jsonscan

import (
	"bytes"

	"github.com/segmentio/encoding/json"
)

// DecodeFlags are the flags go-sdk's decoder uses (internal/json
// NewDecoder: DontMatchCaseInsensitiveStructFields). DontCopyRawMessage
// only lets raw members alias the data decoded.
const DecodeFlags = json.DontMatchCaseInsensitiveStructFields | json.DontCopyRawMessage

// StringEnd returns the index of the quote that closes the string whose
// contents start at from, false when data ends first. A quote is escaped
// when an odd run of backslashes precedes it.
func StringEnd(data []byte, from int) (int, bool) {
	for j := from; ; {
		k := bytes.IndexByte(data[j:], '"')
		if k < 0 {
			return 0, false
		}
		end := j + k
		run := 0
		for p := end - 1; p >= j && data[p] == '\\'; p-- {
			run++
		}
		if run%2 == 0 {
			return end, true
		}
		j = end + 1
	}
}

// SkipComposite returns what follows the JSON object or array b starts
// with, found by its brackets outside strings; it checks no more of its
// syntax. ok is false when b starts with anything else or ends first.
func SkipComposite(b []byte) (rest []byte, ok bool) {
	if len(b) == 0 || b[0] != '{' && b[0] != '[' {
		return nil, false
	}
	depth := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				return b[i+1:], true
			}
		case '"':
			end, ok := StringEnd(b, i+1)
			if !ok {
				return nil, false
			}
			i = end
		}
	}
	return nil, false
}
