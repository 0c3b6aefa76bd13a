package msgcheck

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	segjson "github.com/segmentio/encoding/json"

	"github.com/mcpsup/mcpsup/internal/jsonscan"
)

// listMethods are the methods whose results carry a ttlMs hint (SEP-2549,
// MCP 2026-07-28 Cacheable).
var listMethods = map[string]bool{
	"tools/list": true, "prompts/list": true, "resources/list": true, "resources/templates/list": true,
}

// tameTTLHint makes the ttlMs of a list result one go-sdk can decode.
// go-sdk v1.8.0 decodes ttlMs into an int (mcp/protocol.go Cacheable), so a
// fractional, exponent, out-of-range or non-number ttlMs fails the whole
// result, and a server would lose its catalog over a freshness hint. Here a
// JSON number is truncated toward zero and clamped to a 32-bit int (the
// supervisor caps a ttl at a day anyway); anything else is removed (no
// hint). It reports whether r.Result changed; the result of any other
// method, or without ttlMs, is left alone.
func tameTTLHint(method string, r *jsonrpc.Response) bool {
	if r.Error != nil || !listMethods[method] || !mayHoldTTLHint(r.Result) {
		return false
	}
	// Every go-sdk list result carries ttlMs: on this, the common path,
	// the hint is decoded as go-sdk decodes it, into an int by its own
	// decoder with its flags (one allocation, the hint), so that every key
	// go-sdk reads as ttlMs is read, an escaped one or an earlier duplicate
	// too; the result is rebuilt only when go-sdk could not decode it.
	var hint struct {
		TTLMs int `json:"ttlMs"`
	}
	if _, err := segjson.Parse(r.Result, &hint, jsonscan.DecodeFlags); err == nil && hint.TTLMs >= math.MinInt32 && hint.TTLMs <= math.MaxInt32 {
		return false
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(r.Result, &fields) != nil {
		return false
	}
	raw := fields["ttlMs"]
	if f, err := strconv.ParseFloat(string(bytes.TrimSpace(raw)), 64); err == nil || isRange(err) {
		f = max(min(math.Trunc(f), math.MaxInt32), math.MinInt32)
		fields["ttlMs"] = json.RawMessage(strconv.Itoa(int(f)))
	} else {
		delete(fields, "ttlMs")
	}
	b, err := json.Marshal(fields)
	if err != nil {
		return false
	}
	r.Result = b
	return true
}

// mayHoldTTLHint reports whether result may carry a key go-sdk reads as
// ttlMs: one written as it is, or one with an escape.
func mayHoldTTLHint(result []byte) bool {
	return bytes.Contains(result, []byte("ttlMs")) || bytes.IndexByte(result, '\\') >= 0
}

func isRange(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}
