package msgcheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	segjson "github.com/segmentio/encoding/json"

	"github.com/mcpsup/mcpsup/internal/jsonscan"
)

// tameTTLHint makes a list result's ttlMs one go-sdk can decode (it decodes
// into an int, mcp/protocol.go Cacheable, and fails the whole result on
// anything else): a number is truncated and clamped to 32 bits, anything else
// removed. It reports whether r.Result changed.
func tameTTLHint(method string, r *jsonrpc.Response) bool {
	if !decodedArrays[method].cacheable || !mayHold(r.Result, "ttlMs") {
		return false
	}
	var hint struct { // decoded as go-sdk does: every key it reads as ttlMs counts
		TTLMs int `json:"ttlMs"`
	}
	if _, err := segjson.Parse(r.Result, &hint, jsonscan.DecodeFlags); err == nil && hint.TTLMs >= math.MinInt32 && hint.TTLMs <= math.MaxInt32 {
		return false
	}
	return editResult(r, func(fields map[string]json.RawMessage) bool {
		raw := fields["ttlMs"]
		if f, err := strconv.ParseFloat(string(bytes.TrimSpace(raw)), 64); err == nil || errors.Is(err, strconv.ErrRange) {
			f = max(min(math.Trunc(f), math.MaxInt32), math.MinInt32)
			fields["ttlMs"] = json.RawMessage(strconv.Itoa(int(f)))
		} else {
			delete(fields, "ttlMs")
		}
		return true
	})
}
