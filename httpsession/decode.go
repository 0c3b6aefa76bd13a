package httpsession

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/segmentio/encoding/json"

	"github.com/mcpsup/mcpsup/internal/jsonscan"
)

// maxJSONDepth is go-sdk v1.8.0's nesting bound (internal/json defaultMaxDepth).
const maxJSONDepth = 1000

var errMaxDepth = fmt.Errorf("json: exceeded maximum nesting depth of %d", maxJSONDepth)

// wireDecode is go-sdk's decode form of a message (internal/jsonrpc2
// wireDecode): a "method" key with an empty or null value makes a request.
type wireDecode struct {
	VersionTag json.RawMessage `json:"jsonrpc"`      // read as go-sdk's string by [versionTag]
	ID         json.RawMessage `json:"id,omitempty"` // read as go-sdk's any by [messageID]
	Method     json.RawMessage `json:"method"`
	Params     json.RawMessage `json:"params,omitempty"`
	Result     json.RawMessage `json:"result,omitempty"`
	Error      *jsonrpc.Error  `json:"error,omitempty"`
}

// decodeMessage is go-sdk v1.8.0's jsonrpc.DecodeMessage without its
// decoder's 64 KiB buffer per message (same parser, flags, depth bound and
// rules; FuzzDecodeMessage holds it to go-sdk's). Params and Result alias
// data.
func decodeMessage(data []byte) (jsonrpc.Message, error) {
	return decodeMessageFor(data, callID{})
}

// decodeMessageFor is decodeMessage for the answer to the call want: a
// response carrying want's plain integer id is returned with the zero ID,
// which stands for want's.
func decodeMessageFor(data []byte, want callID) (jsonrpc.Message, error) {
	if err := checkMaxDepth(data); err != nil {
		return nil, err
	}
	w := new(wireDecode) // the first value in data, as go-sdk's json.Decoder reads it
	_, err := json.Parse(data, w, jsonscan.DecodeFlags)
	if err != nil {
		return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
	}
	if tag, err := versionTag(w.VersionTag); err != nil {
		return nil, err
	} else if tag != "2.0" {
		return nil, fmt.Errorf("invalid message version tag %q; expected %q", tag, "2.0")
	}
	id, matched, inexact, err := messageID(w.ID, want)
	if err != nil {
		return nil, err
	}
	if len(w.Method) > 0 {
		var method string
		if _, err := json.Parse(w.Method, &method, jsonscan.DecodeFlags); err != nil {
			return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
		}
		if matched {
			id = want.ID() // a request keeps its id: the zero ID would make it a notification
		}
		return &jsonrpc.Request{ID: id, Method: method, Params: w.Params}, nil
	}
	if !id.IsValid() && !matched {
		return nil, errInvalidMessage
	}
	if want.plain && !matched && inexact {
		id, _ = jsonrpc.MakeID(string(w.ID)) // 2.5 answers no call, where go-sdk's int64 would make it 2
	}
	r := &jsonrpc.Response{ID: id, Result: w.Result}
	if w.Error != nil {
		r.Error = w.Error
	}
	return r, nil
}

// messageID returns the id go-sdk reads from raw, a message's "id" (nil
// when absent), as jsonrpc.MakeID of the decoded value. It is matched, with
// the zero ID, when its value is want's plain id however written (3, 3.0,
// 3e0). inexact reports a number go-sdk's int64 of its float64 does not
// hold: a fraction, or one past the range of int64.
func messageID(raw json.RawMessage, want callID) (id jsonrpc.ID, matched, inexact bool, err error) {
	if len(raw) == 0 {
		return jsonrpc.ID{}, false, false, nil
	}
	if n, ok := plainInt(raw); ok {
		if want.plain && want.n == n {
			return jsonrpc.ID{}, true, false, nil
		}
		id, err := jsonrpc.MakeID(float64(n)) // as go-sdk would, from its float64
		return id, false, false, err
	}
	var v any
	if _, err := json.Parse(raw, &v, jsonscan.DecodeFlags); err != nil {
		return jsonrpc.ID{}, false, false, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
	}
	if f, isNumber := v.(float64); isNumber {
		if want.plain && f == float64(want.n) {
			return jsonrpc.ID{}, true, false, nil // want's id written otherwise: 3.0, 3e0
		}
		inexact = f != math.Trunc(f) || f >= math.MaxInt64 || f < math.MinInt64
	}
	id, err = jsonrpc.MakeID(v)
	return id, false, inexact, err
}

// callID is the JSON-RPC id of the call an answer must carry ([callIDOf]):
// go-sdk's plain integer ids as their value, any other as the jsonrpc.ID
// go-sdk reads. The zero callID is no call's.
type callID struct {
	n     int64 // as on the wire: go-sdk's id plus shift
	plain bool
	other jsonrpc.ID // when not plain
	shift int64      // what a plain id was moved by on the wire (idshift.go)
}

// callIDOf is the callID of a request sent with id, moved by shift when it
// is a plain integer ([conn.wireID]).
func callIDOf(id jsonrpc.ID, shift int64) callID {
	if n, ok := id.Raw().(int64); ok && n >= 0 && n < 1e15 {
		return callID{n: n, plain: true, shift: shift}
	}
	return callID{other: id}
}

// ID returns c as go-sdk reads it from the wire.
func (c callID) ID() jsonrpc.ID {
	if !c.plain {
		return c.other
	}
	id, _ := jsonrpc.MakeID(float64(c.n))
	return id
}

// unmoveBodyID moves x.BodyRPCID back by c's shift when it is a plain
// integer: the exchange records ids as go-sdk numbered them.
func (c callID) unmoveBodyID(x *Exchange) {
	if c.shift == 0 {
		return
	}
	if n, ok := plainInt([]byte(x.BodyRPCID)); ok {
		x.BodyRPCID = strconv.FormatInt(n-c.shift, 10)
	}
}

// answeredBy reports whether r, a response decoded for c, carries c's id.
func (c callID) answeredBy(r *jsonrpc.Response) bool {
	if c.plain {
		return r.ID == (jsonrpc.ID{}) // matched by value in messageID
	}
	return r.ID == c.other
}

// versionTag returns the "jsonrpc" string go-sdk reads from raw ("" when
// absent).
func versionTag(raw json.RawMessage) (string, error) {
	if string(raw) == `"2.0"` {
		return "2.0", nil
	}
	var tag string
	if len(raw) > 0 {
		if _, err := json.Parse(raw, &tag, jsonscan.DecodeFlags); err != nil {
			return "", fmt.Errorf("unmarshaling jsonrpc message: %w", err)
		}
	}
	return tag, nil
}

// plainInt reads b as a JSON integer without sign, exponent or leading
// zero, of at most 15 digits.
func plainInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 15 || (b[0] == '0' && len(b) > 1) {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// errInvalidMessage is the failure of a message with neither a method nor
// an id, which go-sdk refuses as jsonrpc2.ErrInvalidRequest.
var errInvalidMessage = errors.New("JSON-RPC message with neither method nor id")

// checkMaxDepth is go-sdk's depth check (internal/json checkMaxDepth):
// '{' and '[' against '}' and ']' outside strings, over all of data.
func checkMaxDepth(data []byte) error {
	depth := 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '"':
			end, ok := jsonscan.StringEnd(data, i+1)
			if !ok {
				return nil // the rest is inside a string
			}
			i = end
		case '{', '[':
			depth++
			if depth > maxJSONDepth {
				return errMaxDepth
			}
		case '}', ']':
			if depth > 0 {
				depth--
			}
		}
	}
	return nil
}
