// Package jsonscan holds the byte-level JSON scanning that the message
// checks (package msgcheck) and the HTTP transport share: where a string
// ends and the flags go-sdk decodes with.
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
