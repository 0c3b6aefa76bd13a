package msgcheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"

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

// inputCapability names the client capability each input request needs
// (mrtr.mdx: "Servers MUST NOT send an inputRequests that the client has
// not declared support for in its capabilities") and the go-sdk handler
// that declares it.
var inputCapability = map[string][2]string{
	"elicitation/create":     {"elicitation", "mcp.ClientOptions.ElicitationHandler"},
	"sampling/createMessage": {"sampling", "mcp.ClientOptions.CreateMessageHandler or CreateMessageWithToolsHandler"},
	"roots/list":             {"roots", "roots (mcp.ClientOptions.Capabilities)"},
}

// checkResultType applies the resultType rules to r, the response to req.
// go-sdk v1.8.0 reads no resultType: it re-sends a call whenever the result
// holds inputRequests (mcp/mrtr.go), else takes it as a success. So an
// unknown resultType is a problem; a complete result loses inputRequests and
// requestState; an input_required one is a problem on a method that takes
// none, asking for input the request's clientCapabilities do not declare, or
// holding neither field (mrtr.mdx: "Servers MUST include at least one");
// with requestState alone it gets an empty inputRequests, so go-sdk echoes
// the state back. A result go-sdk cannot decode is left to go-sdk.
func checkResultType(req Request, r *jsonrpc.Response) (problem string, changed bool) {
	if !mayHold(r.Result, "resultType", "inputRequests", "requestState") || plainlyComplete(r.Result) {
		return "", false
	}
	var v struct {
		ResultType    json.RawMessage `json:"resultType"`
		InputRequests json.RawMessage `json:"inputRequests"`
		RequestState  json.RawMessage `json:"requestState"`
	}
	if _, err := segjson.Parse(r.Result, &v, jsonscan.DecodeFlags); err != nil {
		return "", false
	}
	rt := resultComplete // absent: complete
	if len(v.ResultType) > 0 && json.Unmarshal(v.ResultType, &rt) != nil {
		return "", false // not a string: go-sdk fails that itself
	}
	switch rt {
	case resultComplete:
		if present(v.InputRequests) || present(v.RequestState) {
			return "", editResult(r, func(fields map[string]json.RawMessage) bool {
				delete(fields, "inputRequests")
				delete(fields, "requestState")
				return true
			})
		}
		return "", false
	case resultInputRequired:
		if !decodedArrays[req.Method].inputRequests {
			return fmt.Sprintf("resultType %q answers %s, which takes no input_required result", rt, req.Method), false
		}
		switch {
		case present(v.InputRequests):
			var reqs map[string]json.RawMessage
			if json.Unmarshal(v.InputRequests, &reqs) != nil {
				return "", false // go-sdk fails it itself
			}
			return inputProblem(req, reqs), false
		case present(v.RequestState):
			return "", editResult(r, func(fields map[string]json.RawMessage) bool {
				fields["inputRequests"] = json.RawMessage(`{}`)
				return true
			})
		}
		return fmt.Sprintf("resultType %q holds neither inputRequests nor requestState", rt), false
	}
	return fmt.Sprintf("resultType %.64q is neither %q nor %q", rt, resultComplete, resultInputRequired), false
}

func present(raw json.RawMessage) bool {
	return len(raw) > 0 && !bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}

// plainlyComplete reports the common result without decoding it: no escape,
// one "resultType":"complete", no inputRequests or requestState.
func plainlyComplete(result []byte) bool {
	return bytes.IndexByte(result, '\\') < 0 && bytes.Count(result, []byte(`"resultType"`)) == 1 &&
		bytes.Contains(result, []byte(`"resultType":"complete"`)) &&
		!bytes.Contains(result, []byte("inputRequests")) && !bytes.Contains(result, []byte("requestState"))
}

// editResult applies edit to the members of r's result, an object, and
// reports whether the result changed (edit returns false: no change).
func editResult(r *jsonrpc.Response, edit func(fields map[string]json.RawMessage) bool) bool {
	var fields map[string]json.RawMessage
	if json.Unmarshal(r.Result, &fields) != nil || fields == nil || !edit(fields) {
		return false
	}
	b, err := json.Marshal(fields)
	if err != nil {
		return false
	}
	r.Result = b
	return true
}

// inputProblem says which input request of reqs the request's declared
// clientCapabilities do not cover; "" when all are, or none are declared.
func inputProblem(req Request, reqs map[string]json.RawMessage) string {
	if len(reqs) == 0 {
		return ""
	}
	caps, ok := declaredCapabilities(req)
	if !ok {
		return ""
	}
	for _, id := range slices.Sorted(maps.Keys(reqs)) { // one answer, one problem
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

const maxCapabilitiesBody = 4 << 20 // the request body read for its capabilities

// declaredCapabilities returns the clientCapabilities a request's `_meta`
// declares (SEP-2575), by key; false when the body cannot be read again or
// declares none.
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
