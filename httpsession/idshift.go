package httpsession

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
)

// A resumed session is the server's session of before, but go-sdk's new
// ClientSession numbers its requests from 1 again, and a request id "MUST
// NOT have been previously used by the requestor within the same session"
// (MCP, basic protocol, requests). A reused id collides with a call the
// previous holder left running (go-sdk's server refuses it: -32600
// "duplicate in-flight request ID"), and a server or gateway that
// deduplicates by id would answer it with the old call's result. So on a
// resumed session the Transport moves every integer request id go-sdk
// sends by the session's shift, a random number in [minIDShift,
// maxIDShift), and moves the answers' ids back before go-sdk reads them.
// Two holders of one session overlap in ids only when their shifts fall
// within their request counts of each other. A fresh session's shift is 0:
// its ids go out as go-sdk makes them.
const (
	minIDShift = 1 << 32
	// maxIDShift keeps a shifted id within 15 digits: a float64 (which
	// go-sdk reads ids into, jsonrpc.MakeID) holds it exactly, and the
	// plain-integer path of [requestID] reads it.
	maxIDShift = 1 << 46
)

// shiftOf returns the session's id shift.
func (t *Transport) shiftOf() int64 { return t.idShift.Load() }

// newIDShift draws a resumed session's id shift.
func newIDShift() int64 { return minIDShift + rand.Int64N(maxIDShift-minIDShift) }

// shiftRequest returns req with its id (or a notifications/cancelled's
// params.requestId) moved by shift, and whether it moved it; req as it is
// when shift is 0, there is nothing to move (a response to the server's
// request carries the server's id; an id that is no integer is not
// go-sdk's numbering), or its body cannot be read again (no GetBody), in
// which case it goes out as go-sdk wrote it. The body is read and decoded
// once.
func shiftRequest(req *http.Request, x *Exchange, shift int64) (*http.Request, bool) {
	call := x.Method != "" && x.RequestID != ""
	if shift == 0 || req.GetBody == nil || !call && x.Method != "notifications/cancelled" {
		return req, false
	}
	body, err := req.GetBody()
	if err != nil {
		return req, false
	}
	data, err := io.ReadAll(body)
	_ = body.Close()
	if err != nil {
		return req, false
	}
	moved, ok := shiftedBody(data, call, shift)
	if !ok {
		return req, false
	}
	out := new(http.Request)
	*out = *req
	out.Body = io.NopCloser(bytes.NewReader(moved))
	out.ContentLength = int64(len(moved))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(moved)), nil }
	return out, true
}

// shiftedBody returns the JSON-RPC message data with its "id" (call) or its
// params' "requestId" (a cancellation) moved by shift, false when that
// member is not a plain integer. The other members are kept as they were,
// their order not (JSON objects are unordered, RFC 8259 section 4).
func shiftedBody(data []byte, call bool, shift int64) ([]byte, bool) {
	var top, params map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil {
		return nil, false
	}
	obj, key := top, "id"
	if !call {
		if json.Unmarshal(top["params"], &params) != nil {
			return nil, false
		}
		obj, key = params, "requestId"
	}
	n, ok := plainInt(bytes.TrimSpace(obj[key]))
	if !ok {
		return nil, false
	}
	obj[key] = json.RawMessage(strconv.FormatInt(n+shift, 10))
	if !call {
		p, ok := encodeObject(params)
		if !ok {
			return nil, false
		}
		top["params"] = p
	}
	return encodeObject(top)
}

// encodeObject encodes m without escaping HTML characters, so that the
// members' text is kept byte for byte.
func encodeObject(m map[string]json.RawMessage) ([]byte, bool) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(m) != nil {
		return nil, false
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), true
}
