package httpsession

import (
	"bytes"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpsup/mcpsup/msgcheck"
)

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
