package supervisor_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/supervisor"
)

// A server that floods the standalone stream with pings and never answers
// the POSTs of their responses gets at most Config.Limits.MaxResponsesInFlight of
// them (16 by default) at once: the rest are dropped, the first 16 drops
// each an event, and
// the connection stays ready and usable. Close ends the held POSTs.
func TestResponseFloodIsBounded(t *testing.T) {
	for _, c := range []struct{ config, inFlight int }{{0, 16}, {4, 4}} {
		t.Run(fmt.Sprintf("MaxResponsesInFlight=%d", c.config), func(t *testing.T) { testResponseFlood(t, c.config, c.inFlight) })
	}
}

func testResponseFlood(t *testing.T, config, inFlight int) {
	const pings = 100
	var flood strings.Builder
	for i := 1; i <= pings; i++ {
		fmt.Fprintf(&flood, "data: {\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"ping\"}\n\n", i)
	}
	srv, err := mcptest.NewServer(mcptest.Options{Tools: 1})
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	srv.Gateway().Add(mcptest.HostileSSE([]byte(flood.String()), 30*time.Second))
	srv.Gateway().Add(mcptest.Rule{Name: "responses never answered",
		Match:  mcptest.Match{Verb: http.MethodPost, Response: true},
		Action: mcptest.HoldHeaders(30 * time.Second)})
	rec := &events.Recorder{}
	sup := mustNew(t, fastStream(supervisor.Config{
		Endpoint: srv.URL(),
		Name:     t.Name(),
		HTTP:     supervisor.HTTPConfig{HTTPClient: srv.HTTPClient()},
		Observe:  supervisor.ObserveConfig{Events: rec},
		Limits:   supervisor.LimitsConfig{MaxResponsesInFlight: config},
	}))
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	sup.Start()
	require.NoError(t, sup.WaitForState(ctx, supervisor.Ready))

	responses := func(e mcptest.Entry) bool { return e.Verb == http.MethodPost && e.Method == "" && e.ID != "" }
	dropped, err := rec.WaitFor(ctx, func(es []events.Event) bool {
		n := 0
		for _, e := range es {
			if e.Kind == events.KindResponseDropped {
				n++
			}
		}
		return n == 16
	})
	require.NoError(t, err, "the drops are reported")
	require.NoError(t, srv.Log().WaitFunc(ctx, inFlight, responses))
	// The POSTs stay held: however many pings the client has read by now,
	// no more of their responses reach the gateway.
	_, err = sup.CallTool(ctx, &mcp.CallToolParams{Name: mcptest.RecordTool, Arguments: mcptest.IDArgs{ID: "after"}})
	require.NoError(t, err, "the connection is usable")
	assert.Equal(t, inFlight, srv.Log().CountFunc(responses), "responses that reached the gateway")
	var counts []int
	for _, e := range dropped {
		if e.Kind == events.KindResponseDropped {
			assert.Equal(t, inFlight, e.Bound)
			counts = append(counts, e.Count)
		}
	}
	for n := 1; n <= 16; n++ { // reported from the senders' goroutines, in any order
		assert.Contains(t, counts, n)
	}
	assert.Equal(t, supervisor.Ready, sup.State())

	require.NoError(t, sup.Close())
	require.NoError(t, srv.Log().WaitFunc(ctx, inFlight, func(e mcptest.Entry) bool { return responses(e) && e.Done }),
		"Close ends the held responses")
}
