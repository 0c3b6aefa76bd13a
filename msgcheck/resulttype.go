package msgcheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	segjson "github.com/segmentio/encoding/json"

	"github.com/mcpsup/mcpsup/internal/jsonscan"
)

// The resultType of a result (MCP 2026-07-28, changelog.mdx item 8: "All
// results now carry a required resultType field: "complete" for ordinary
// results and "input_required" for multi round-trip request interim
// results. Clients MUST treat results from earlier-protocol servers that
// omit the field as "complete"").
const (
	resultComplete      = "complete"
	resultInputRequired = "input_required"
)

// mrtrMethods are the requests an input_required result may answer
// (basic/patterns/mrtr.mdx: "Servers MUST NOT send InputRequiredResult
// responses on any other client requests").
var mrtrMethods = map[string]bool{"tools/call": true, "prompts/get": true, "resources/read": true}

// inputCapability names the client capability each input request needs
// (mrtr.mdx: "Servers MUST NOT send an inputRequests that the client has
// not declared support for in its capabilities") and the go-sdk handler
// that declares it.
var inputCapability = map[string][2]string{
	"elicitation/create":     {"elicitation", "mcp.ClientOptions.ElicitationHandler"},
	"sampling/createMessage": {"sampling", "mcp.ClientOptions.CreateMessageHandler or CreateMessageWithToolsHandler"},
	"roots/list":             {"roots", "roots (mcp.ClientOptions.Capabilities)"},
}

// checkResultType applies the resultType rules to r, the response to req,
// before go-sdk reads it. go-sdk v1.8.0 reads no
// resultType: its multi round-trip middleware (mcp/mrtr.go) fulfils and
// re-sends a tools/call, prompts/get or resources/read whenever the result
// holds inputRequests, up to ten times, and hands any other result to the
// caller as a success. So:
//
//   - a resultType other than "complete" and "input_required" is a problem
//     (the result is invalid);
//   - a result that is complete (resultType "complete" or absent) loses its
//     inputRequests and requestState (changed reports it): they belong to an
//     input_required result only, and go-sdk would re-send the call for them;
//   - an input_required result is a problem when it answers another method,
//     or when it asks for input the request's clientCapabilities (its
//     `_meta`, sent by go-sdk on every 2026-07-28 request) do not declare:
//     go-sdk would refuse that input itself and report its own -32602 as if
//     the server had answered it. The problem names the capability and the
//     handler that declares it;
//   - an input_required result with neither inputRequests nor requestState
//     is a problem (mrtr.mdx: "Servers MUST include at least one of
//     inputRequests or requestState in every InputRequiredResult");
//   - one with requestState alone gets an empty inputRequests (changed
//     reports it): the client "MAY retry the original request immediately"
//     and "MUST echo back the exact value" of requestState (mrtr.mdx, Client
//     Requirements), which go-sdk does for an empty inputRequests, its
//     load-shedding answer: it re-sends the request with the state at once,
//     at most three times in a row (maxLoadSheddingMultiRoundTripRetries),
//     then fails the call. Without inputRequests go-sdk handed the interim
//     result to the caller as the call's success.
//
// A result whose fields go-sdk could not decode is left to go-sdk.
func checkResultType(req Request, r *jsonrpc.Response) (problem string, changed bool) {
	method := req.Method
	if r.Error != nil || !mayHoldResultType(r.Result) || plainlyComplete(r.Result) {
		return "", false
	}
	// Raw members alias r.Result (jsonscan.DecodeFlags: DontCopyRawMessage): the
	// common answer, "complete" written plainly, costs no copy.
	var v struct {
		ResultType    json.RawMessage `json:"resultType"`
		InputRequests json.RawMessage `json:"inputRequests"`
		RequestState  json.RawMessage `json:"requestState"`
	}
	if _, err := segjson.Parse(r.Result, &v, jsonscan.DecodeFlags); err != nil {
		return "", false
	}
	rt := resultComplete // absent: complete
	switch {
	case len(v.ResultType) == 0:
	case bytes.Equal(v.ResultType, []byte(`"complete"`)):
	case bytes.Equal(v.ResultType, []byte(`"input_required"`)):
		rt = resultInputRequired
	default:
		// Escaped, or not a string: go-sdk reads it into a string, or
		// fails the result itself.
		if json.Unmarshal(v.ResultType, &rt) != nil {
			return "", false
		}
	}
	switch rt {
	case resultComplete:
		if present(v.InputRequests) || present(v.RequestState) {
			return "", dropInputFields(r)
		}
		return "", false
	case resultInputRequired:
		if !mrtrMethods[method] {
			return fmt.Sprintf("resultType %q answers %s, which takes no input_required result", rt, method), false
		}
		switch {
		case present(v.InputRequests):
			var reqs map[string]json.RawMessage
			if json.Unmarshal(v.InputRequests, &reqs) != nil {
				return "", false // go-sdk fails it itself
			}
			return inputProblem(req, reqs), false
		case present(v.RequestState):
			return "", retryWithState(r)
		}
		return fmt.Sprintf("resultType %q holds neither inputRequests nor requestState", rt), false
	}
	return fmt.Sprintf("resultType %.64q is neither %q nor %q", rt, resultComplete, resultInputRequired), false
}

// present reports a member that is there and not null.
func present(raw json.RawMessage) bool {
	return len(raw) > 0 && !bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}

// mayHoldResultType reports whether result may carry a key go-sdk reads as
// resultType, inputRequests or requestState: one written as it is, or one
// with an escape.
func mayHoldResultType(result []byte) bool {
	return bytes.Contains(result, []byte("resultType")) || bytes.Contains(result, []byte("inputRequests")) ||
		bytes.Contains(result, []byte("requestState")) || bytes.IndexByte(result, '\\') >= 0
}

// plainlyComplete reports the common 2026-07-28 result, read without
// decoding: no escape (so every "resultType" is a key, never inside a
// string), one resultType key, written "resultType":"complete", and no
// inputRequests or requestState. A nested key of that name would leave the
// result's own absent: complete too.
func plainlyComplete(result []byte) bool {
	return bytes.IndexByte(result, '\\') < 0 && bytes.Count(result, []byte(`"resultType"`)) == 1 &&
		bytes.Contains(result, []byte(`"resultType":"complete"`)) &&
		!bytes.Contains(result, []byte("inputRequests")) && !bytes.Contains(result, []byte("requestState"))
}

// dropInputFields removes inputRequests and requestState from r's result;
// it reports whether the result changed.
func dropInputFields(r *jsonrpc.Response) bool {
	return editResult(r, func(fields map[string]json.RawMessage) {
		delete(fields, "inputRequests")
		delete(fields, "requestState")
	})
}

// retryWithState gives r's input_required result, which holds a
// requestState and no inputRequests, an empty inputRequests: go-sdk
// re-sends the request with the state (see [checkResultType]). It reports
// whether the result changed.
func retryWithState(r *jsonrpc.Response) bool {
	return editResult(r, func(fields map[string]json.RawMessage) {
		fields["inputRequests"] = json.RawMessage(`{}`)
	})
}

// editResult applies edit to the members of r's result, an object; it
// reports whether the result changed (false: not an object, left as it
// came).
func editResult(r *jsonrpc.Response, edit func(fields map[string]json.RawMessage)) bool {
	var fields map[string]json.RawMessage
	if json.Unmarshal(r.Result, &fields) != nil || fields == nil {
		return false
	}
	edit(fields)
	b, err := json.Marshal(fields)
	if err != nil {
		return false
	}
	r.Result = b
	return true
}

// inputProblem says which input request of reqs the request's declared
// clientCapabilities do not cover, or "" when all are covered or the
// request declares none (a 2025-era request: its capabilities went in
// initialize).
func inputProblem(req Request, reqs map[string]json.RawMessage) string {
	if len(reqs) == 0 {
		return ""
	}
	caps, ok := declaredCapabilities(req)
	if !ok {
		return ""
	}
	ids := make([]string, 0, len(reqs))
	for id := range reqs {
		ids = append(ids, id)
	}
	sort.Strings(ids) // one answer, one problem
	for _, id := range ids {
		var ir struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(reqs[id], &ir)
		need, known := inputCapability[ir.Method]
		if !known {
			return fmt.Sprintf("inputRequests %.64q asks %.64q, not elicitation/create, sampling/createMessage or roots/list", id, ir.Method)
		}
		if _, declared := caps[need[0]]; !declared {
			return fmt.Sprintf("inputRequests %.64q asks %s, but the request's clientCapabilities declare no %s: the client needs %s", id, ir.Method, need[0], need[1])
		}
	}
	return ""
}

// maxCapabilitiesBody bounds the request body read for its capabilities.
const maxCapabilitiesBody = 4 << 20

// declaredCapabilities returns the clientCapabilities a request's `_meta`
// declares (SEP-2575, io.modelcontextprotocol/clientCapabilities), by key;
// false when the body cannot be read again or declares none.
func declaredCapabilities(req Request) (map[string]json.RawMessage, bool) {
	if req.Body == nil {
		return nil, false
	}
	body, err := req.Body()
	if err != nil {
		return nil, false
	}
	defer body.Close()
	b, err := io.ReadAll(io.LimitReader(body, maxCapabilitiesBody))
	if err != nil {
		return nil, false
	}
	var msg struct {
		Params struct {
			Meta struct {
				Caps map[string]json.RawMessage `json:"io.modelcontextprotocol/clientCapabilities"`
			} `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(b, &msg) != nil || msg.Params.Meta.Caps == nil {
		return nil, false
	}
	return msg.Params.Meta.Caps, true
}
