package httpsession

import (
	"bytes"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/msgcheck"
)

// AnswerRefusedError is the error of a call whose 2xx answer the session
// refused before go-sdk decoded it, as stdio.AnswerRefusedError is over
// stdio: not the call's JSON-RPC response (content type, coding, id,
// shape), past a bound (Config.MaxJSONBody, MaxSSEEvent, a msgcheck.Limits
// bound), or an event stream that ended without it. It wraps
// classify.ErrProtocol; a *classify.HTTPError carrying the exchange wraps
// it. Its text is go-sdk's error from the refusal ([CodeHTTPAnswer]).
type AnswerRefusedError struct {
	// Method is the call's MCP method, e.g. "tools/call".
	Method string
	// Problem says what was wrong, e.g. "JSON body larger than 4096 bytes"
	// or "tools/call result with more than 5 content blocks".
	Problem string
	text    string
}

func (e *AnswerRefusedError) Error() string {
	if e.text == "" {
		return fmt.Sprintf("mcpsup: the HTTP server's answer to %s was refused: %s", e.Method, e.Problem)
	}
	return e.text
}

// Unwrap returns classify.ErrProtocol.
func (e *AnswerRefusedError) Unwrap() error { return classify.ErrProtocol }

// refusedAnswer reports whether x records an answer the session refused in
// place of go-sdk's decoding that classify, the one owner of the rule, reads
// as protocol by itself (a 2xx marked Malformed). A body or stream that
// broke off is no answer (TransportErr), a non-2xx the server's own.
func refusedAnswer(x Exchange) bool {
	return x.Rewritten && x.TransportErr == nil && classify.Error(&classify.HTTPError{Exchange: x}).Class == classify.Protocol
}

// CodeHTTPAnswer is the JSON-RPC error code (JSON-RPC 2.0 section 5.1,
// server error range) of the responses a session writes in place of
// an answer it refused. The message names the HTTP status and content type
// or the problem, e.g. "HTTP 403 Forbidden (text/html)"; the data object is
// {"httpStatus":403,"contentType":"text/html","problem":"...","body":"<snippet>"}.
const CodeHTTPAnswer = msgcheck.CodeRefused

// transientStatus reports the statuses go-sdk v1.8.0 rejects per call
// (-32005) without ending the session (mcp/streamable.go
// isTransientHTTPStatus).
func transientStatus(s int) bool {
	return s == 429 || (s >= 500 && s <= 504 && s != 501)
}

// answerProblem says why r, decoded for the call want (see
// [decodeMessageFor]), is not the response to it, or returns "" when it is:
// the ids are equal (JSON-RPC 2.0 section 5), and it carries exactly one of
// result and error, a result being a JSON object (MCP schema, Result).
func answerProblem(r *jsonrpc.Response, want callID) string {
	switch result := bytes.TrimSpace(r.Result); {
	case !want.answeredBy(r):
		return fmt.Sprintf("response id %s, not the request's id %s", msgcheck.IDText(r.ID), msgcheck.IDText(want.ID()))
	case r.Error != nil && len(result) > 0:
		return "response has both result and error"
	case r.Error != nil:
		return ""
	case len(result) == 0:
		return "response has neither result nor error"
	case bytes.Equal(result, []byte("null")):
		return "response result is null"
	case result[0] != '{':
		return "response result is not a JSON object"
	}
	return ""
}
