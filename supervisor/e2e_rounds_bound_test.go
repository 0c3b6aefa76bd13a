package supervisor_test

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/supervisor"
)

// mrtr.mdx: a server answers a round with input_required until it has
// what it needs. One that answers input_required forever is stopped by
// go-sdk's client after 10 rounds, or 3 rounds with an empty inputRequests
// (load shedding; go-sdk v1.8.0 mcp/mrtr.go): the server broke the
// multi-round-trip bound, a protocol failure, counted at the server. The
// session serves on.
func TestE2EEndlessInputRequiredIsAProtocolError(t *testing.T) {
	cases := []struct {
		name   string
		result string
		calls  int64
	}{
		{"input requests", `{"resultType":"input_required","inputRequests":{"r":{"method":"roots/list","params":{}}},"requestState":"s"}`, 10},
		{"load shedding", `{"resultType":"input_required","inputRequests":{},"requestState":"s"}`, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ts, calls := resultServer(t, true, c.result)
			sup, ctx := readyOn(t, ts, mcp.ClientOptions{})
			require.Equal(t, "2026-07-28", sup.ResumeState().ProtocolVersion)
			_, err := sup.CallTool(ctx, &mcp.CallToolParams{Name: "t"})
			var ce *supervisor.CallError
			require.ErrorAs(t, err, &ce)
			require.Equal(t, classify.Protocol, ce.Verdict.Class, "%v", err)
			require.Equal(t, c.calls, calls.Load(), "tools/call requests the server got")
			require.Equal(t, supervisor.Ready, sup.State())
		})
	}
}
