package msgcheck

import (
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/stretchr/testify/require"
)

// The resultType rules (changelog.mdx of 2026-07-28, item 8; mrtr.mdx),
// case by case: what is refused, what is made complete, what passes as it
// came.
func TestCheckResultType(t *testing.T) {
	const caps = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{"io.modelcontextprotocol/clientCapabilities":{"roots":{}}}}}`
	const noCaps = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}`
	for _, c := range []struct {
		name, method, req, result string
		problem                   string // "" when accepted
		want                      string // the result go-sdk gets, when changed
	}{
		{"complete", "tools/call", caps, `{"resultType":"complete","content":[]}`, "", ""},
		{"absent", "tools/call", noCaps, `{"content":[]}`, "", ""},
		{"unknown", "tools/call", caps, `{"resultType":"bogus"}`, `resultType "bogus" is neither "complete" nor "input_required"`, ""},
		{"empty", "tools/list", caps, `{"resultType":"","tools":[]}`, `resultType "" is neither "complete" nor "input_required"`, ""},
		{"escaped key", "tools/call", caps, `{"result\u0054ype":"bogus"}`, `resultType "bogus" is neither "complete" nor "input_required"`, ""},
		{"absent with input", "tools/call", noCaps, `{"content":[],"inputRequests":{"r":{"method":"roots/list"}},"requestState":"s"}`, "", `{"content":[]}`},
		{"complete with state", "prompts/get", caps, `{"resultType":"complete","messages":[],"requestState":"s"}`, "", `{"messages":[],"resultType":"complete"}`},
		{"input on a list", "tools/list", caps, `{"resultType":"input_required","requestState":"s"}`, `resultType "input_required" answers tools/list, which takes no input_required result`, ""},
		{"declared input", "tools/call", caps, `{"resultType":"input_required","inputRequests":{"r":{"method":"roots/list"}}}`, "", ""},
		{"undeclared input", "tools/call", caps, `{"resultType":"input_required","inputRequests":{"e":{"method":"sampling/createMessage"}}}`,
			`inputRequests "e" asks sampling/createMessage, but the request's clientCapabilities declare no sampling: the client needs mcp.ClientOptions.CreateMessageHandler or CreateMessageWithToolsHandler`, ""},
		{"unknown input", "tools/call", caps, `{"resultType":"input_required","inputRequests":{"x":{"method":"x/y"}}}`,
			`inputRequests "x" asks "x/y", not elicitation/create, sampling/createMessage or roots/list`, ""},
		{"2025 request: capabilities unknown", "tools/call", noCaps, `{"resultType":"input_required","inputRequests":{"e":{"method":"elicitation/create"}}}`, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) { requireResultType(t, c.method, c.req, c.result, c.problem, c.want) })
	}
}

// mrtr.mdx, Server Requirements: "Servers MUST include at least one of
// inputRequests or requestState in every InputRequiredResult"; Client
// Requirements: without inputRequests "the client MAY retry the original
// request immediately", and it "MUST echo back the exact value" of
// requestState. go-sdk v1.8.0 re-sends only for an inputRequests that is
// there, so both results below reached the caller as the call's success:
// the one with neither is refused, the one with requestState alone gets
// the empty inputRequests go-sdk re-sends for.
func TestInputRequiredWithoutInputRequests(t *testing.T) {
	const req = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}}`
	for _, c := range []struct {
		name, method, result, problem, want string
	}{
		{"neither", "tools/call", `{"resultType":"input_required"}`,
			`resultType "input_required" holds neither inputRequests nor requestState`, ""},
		{"both null", "resources/read", `{"resultType":"input_required","inputRequests":null,"requestState":null}`,
			`resultType "input_required" holds neither inputRequests nor requestState`, ""},
		{"state alone", "tools/call", `{"resultType":"input_required","requestState":"abc"}`,
			"", `{"resultType":"input_required","requestState":"abc","inputRequests":{}}`},
		{"state, inputRequests null", "prompts/get", `{"resultType":"input_required","inputRequests":null,"requestState":"abc"}`,
			"", `{"resultType":"input_required","requestState":"abc","inputRequests":{}}`},
		{"empty inputRequests: go-sdk's load shedding", "tools/call", `{"resultType":"input_required","inputRequests":{}}`, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) { requireResultType(t, c.method, req, c.result, c.problem, c.want) })
	}
}

// requireResultType runs checkResultType on result, the answer to the
// request body req of method: problem is the one it must find ("" none),
// want the result go-sdk must get when it changes ("" unchanged).
func requireResultType(t *testing.T, method, req, result, problem, want string) {
	t.Helper()
	body := func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(req)), nil }
	r := &jsonrpc.Response{Result: []byte(result)}
	gotProblem, changed := checkResultType(Request{Method: method, Body: body}, r)
	require.Equal(t, problem, gotProblem)
	require.Equal(t, want != "", changed)
	if changed {
		require.JSONEq(t, want, string(r.Result))
	} else {
		require.Equal(t, result, string(r.Result), "untouched")
	}
}
