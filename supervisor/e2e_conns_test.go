package supervisor_test

import (
	"context"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/supervisor"
)

// A host makes each call with a context of its own and cancels it as the
// call returns (context.WithTimeout, defer cancel). go-sdk hands the call
// its result before it has read the answer's body to its end, and net/http
// drops a connection whose request's context ends before EOF; the call's
// own context is detached from its caller once the call returned, so the
// connection is reused. (Bare go-sdk dials one for about one call in ten.)
func TestCallsWithTheirOwnContextKeepTheirConnection(t *testing.T) {
	srv, err := mcptest.NewServer(mcptest.Options{Tools: 1})
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	var dials atomic.Int64
	var d net.Dialer
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return d.DialContext(ctx, network, addr)
	}}
	t.Cleanup(tr.CloseIdleConnections)
	sup := mustNew(t, supervisor.Config{Endpoint: srv.URL(), HTTP: supervisor.HTTPConfig{HTTPClient: &http.Client{Transport: tr}}, Stream: supervisor.StreamConfig{Policy: supervisor.StreamOff}})
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	sup.Start()
	require.NoError(t, sup.WaitForState(ctx, supervisor.Ready))
	call := func() {
		cctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		_, err := sup.CallTool(cctx, &mcp.CallToolParams{Name: mcptest.RecordTool, Arguments: mcptest.IDArgs{ID: "c"}})
		require.NoError(t, err)
	}
	call() // the connection the calls use
	before := dials.Load()
	for range 200 {
		call()
	}
	// net/http may still dial now and then, for a call that starts before
	// the last one's connection is back in its pool (seen: at most 3);
	// without the detach it dialed 21 to 35 times.
	require.LessOrEqual(t, dials.Load()-before, int64(8), "new connections dialed by 200 calls")
}
