package stdio

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/msgcheck"
)

// AnswerRefusedError is the error of a request whose answer the transport
// refused before go-sdk decoded it: over a msgcheck bound, or a dropped
// stdout line (over Command.MaxLineBytes, or not one JSON-RPC message) whose
// start names the request's id. It wraps classify.ErrProtocol; the request's
// error is a classify.WrittenError around it (outcome unknown).
type AnswerRefusedError struct {
	// Method is the request's MCP method, e.g. "tools/call".
	Method string
	// Problem says what was wrong, e.g. "a line longer than 16777216 bytes".
	Problem string
}

func (e *AnswerRefusedError) Error() string {
	return fmt.Sprintf("mcpsup: the stdio server's answer to %s was refused: %s", e.Method, e.Problem)
}

// Unwrap returns classify.ErrProtocol.
func (e *AnswerRefusedError) Unwrap() error { return classify.ErrProtocol }

// callMark is what markingConn tells stdioSession.facts of one request.
type callMark struct {
	written atomic.Bool
	refused atomic.Pointer[string] // the problem, when the answer was refused
	method  string                 // the request's, set by keepMark (markingConn.mu)
	forget  func()                 // set by keepMark in Write, on the caller's goroutine
}

// done forgets the mark in its conn and returns what it holds.
func (m *callMark) done() (written bool, refused string) {
	if m.forget != nil {
		m.forget()
	}
	if p := m.refused.Load(); p != nil {
		refused = *p
	}
	return m.written.Load(), refused
}

const idScan = 4 << 10 // bytes of a dropped line lineID reads

// lineID returns the id of a dropped line that is a JSON-RPC response: a
// top-level integer "id" within the first idScan bytes, before "result" or
// "error" (go-sdk and most servers write "jsonrpc", "id", then the rest).
// A line with a "method" is the server's own request (its ids are its own).
func lineID(line []byte) (int64, bool) {
	dec := json.NewDecoder(bytes.NewReader(line[:min(len(line), idScan)]))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return 0, false
	}
	var id json.RawMessage
	for {
		t, err := dec.Token() // a member's name
		key, ok := t.(string)
		if err != nil || !ok || key == "method" {
			return 0, false
		}
		if key == "result" || key == "error" {
			n, err := strconv.ParseInt(string(id), 10, 64)
			return n, err == nil
		}
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return 0, false
		}
		if key == "id" {
			id = v
		}
	}
}

// refusal is the response (msgcheck.CodeRefused) go-sdk gets in place of a
// refused answer to request id.
func refusal(id jsonrpc.ID, problem string) *jsonrpc.Response {
	return &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: msgcheck.CodeRefused, Message: "mcpsup: answer refused: " + problem}}
}
