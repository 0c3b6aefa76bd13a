package wire

import (
	"bytes"
	"net/http"
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
		t.Run(c.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, "http://127.0.0.1/", bytes.NewReader([]byte(c.req)))
			require.NoError(t, err)
			r := &jsonrpc.Response{Result: []byte(c.result)}
			problem, changed := checkResultType(req, c.method, r)
			require.Equal(t, c.problem, problem)
			require.Equal(t, c.want != "", changed)
			if changed {
				require.JSONEq(t, c.want, string(r.Result))
			} else {
				require.Equal(t, c.result, string(r.Result), "untouched")
			}
		})
	}
}
