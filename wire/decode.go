package wire

import (
	"bytes"
	"errors"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/segmentio/encoding/json"
)

// maxJSONDepth is the nesting of JSON objects and arrays past which go-sdk
// v1.8.0 refuses a message (internal/json defaultMaxDepth), counted over
// the whole data as go-sdk counts it.
const maxJSONDepth = 1000

// decodeFlags are the flags go-sdk's decoder uses (internal/json
// NewDecoder: DontMatchCaseInsensitiveStructFields). DontCopyRawMessage
// only lets params and result alias the data (see [decodeMessage]).
const decodeFlags = json.DontMatchCaseInsensitiveStructFields | json.DontCopyRawMessage

var errMaxDepth = fmt.Errorf("json: exceeded maximum nesting depth of %d", maxJSONDepth)

// wireDecode has the shape of go-sdk's decode form of a message
// (internal/jsonrpc2 wireDecode): Method is raw so that a "method" key with
// an empty or null value still makes a request.
type wireDecode struct {
	VersionTag string          `json:"jsonrpc"`
	ID         any             `json:"id,omitempty"`
	Method     json.RawMessage `json:"method"`
	Params     json.RawMessage `json:"params,omitempty"`
	Result     json.RawMessage `json:"result,omitempty"`
	Error      *jsonrpc.Error  `json:"error,omitempty"`
}

// decodeScratch is what one [decodeMessage] parses into; pooled, so that
// decoding a message costs no allocation but the message's own.
type decodeScratch struct {
	value  json.RawMessage
	msg    wireDecode
	method string
}

var scratchPool = sync.Pool{New: func() any { return new(decodeScratch) }}

// decodeMessage returns the message go-sdk v1.8.0's jsonrpc.DecodeMessage
// returns for data, or an error when it returns one, without its decoder's
// 64 KiB buffer: the first JSON value of data is found as go-sdk's
// json.Decoder finds it and decoded with the same parser, flags, depth
// bound and rules (internal/jsonrpc2 DecodeMessage). Params and Result
// alias data. exact reports that go-sdk reads data itself as msg and that
// data may be handed on as it is: data is that one value, with nothing
// after it but JSON whitespace and no line break anywhere (so it is one SSE
// data line too), and msg is not a request with an empty method, which
// go-sdk writes without one and so cannot be re-encoded either (see
// [encodeMessage]). FuzzDecodeMessage holds it to jsonrpc.DecodeMessage.
func decodeMessage(data []byte) (msg jsonrpc.Message, exact bool, err error) {
	if err := checkMaxDepth(data); err != nil {
		return nil, false, err
	}
	sc := scratchPool.Get().(*decodeScratch)
	defer func() { *sc = decodeScratch{}; scratchPool.Put(sc) }()
	// The value go-sdk's json.Decoder.Decode reads: the first one in data.
	rest, err := json.Parse(data, &sc.value, decodeFlags)
	if err != nil {
		return nil, false, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
	}
	w := &sc.msg
	if _, err := json.Parse(sc.value, w, decodeFlags); err != nil {
		return nil, false, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
	}
	if w.VersionTag != "2.0" {
		return nil, false, fmt.Errorf("invalid message version tag %q; expected %q", w.VersionTag, "2.0")
	}
	id, err := jsonrpc.MakeID(w.ID)
	if err != nil {
		return nil, false, err
	}
	exact = len(rest) == 0 && !bytes.ContainsAny(data, "\r\n")
	if len(w.Method) > 0 {
		if _, err := json.Parse(w.Method, &sc.method, decodeFlags); err != nil {
			return nil, false, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
		}
		method := sc.method
		return &jsonrpc.Request{ID: id, Method: method, Params: w.Params}, exact && method != "", nil
	}
	if !id.IsValid() {
		return nil, false, errInvalidMessage
	}
	r := &jsonrpc.Response{ID: id, Result: w.Result}
	if w.Error != nil {
		r.Error = w.Error
	}
	return r, exact, nil
}

// errInvalidMessage is the failure of a message with neither a method nor
// an id, which go-sdk refuses as jsonrpc2.ErrInvalidRequest.
var errInvalidMessage = errors.New("JSON-RPC message with neither method nor id")

// checkMaxDepth is go-sdk's depth check (internal/json checkMaxDepth): it
// counts '{' and '[' against '}' and ']' outside strings over all of data.
func checkMaxDepth(data []byte) error {
	depth, inString, escaped := 0, false, false
	for _, b := range data {
		if inString {
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
			continue
		}
		switch b {
		case '"':
			inString = true
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

// handOn returns the bytes go-sdk gets for msg, decoded from data by
// [decodeMessage]: data itself when exact, msg re-encoded otherwise.
func handOn(data []byte, msg jsonrpc.Message, exact bool) ([]byte, error) {
	if exact {
		return data, nil
	}
	return encodeMessage(msg)
}

// parseIdentity reads the method and the raw id of one JSON-RPC request
// body written by go-sdk (see [requestIdentity]); ok is false unless buf is
// exactly one JSON object.
func parseIdentity(buf []byte) (method string, id json.RawMessage, ok bool) {
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	rest, err := json.Parse(buf, &msg, json.DontCopyRawMessage|json.DontCopyString)
	if err != nil || len(rest) != 0 {
		return "", nil, false
	}
	return msg.Method, msg.ID, true
}
