package supervisor_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/supervisor"
)

// A session that ends by itself (here: go-sdk fails the connection when a
// notifications/cancelled POST is answered with a plain-text 400, which no
// JSON-RPC id can rescue) must still be closed by the supervisor, so that
// what go-sdk runs for it (the keepalive goroutine) ends by Close.
func TestSessionEndedByItselfLeavesNoGoroutine(t *testing.T) {
	before := goleak.IgnoreCurrent()
	srv, err := mcptest.NewServer(mcptest.Options{})
	require.NoError(t, err)
	rec := &events.Recorder{}
	sup, err := supervisor.New(supervisor.Config{
		Endpoint:   srv.URL(),
		HTTPClient: srv.HTTPClient(),
		Stream:     supervisor.StreamOff,
		KeepAlive:  time.Hour, // never ticks within the test
		Events:     rec,
	})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sup.Start()
	require.NoError(t, sup.WaitForState(ctx, supervisor.Ready))

	gw := srv.Gateway()
	gw.Add(mcptest.Rule{
		Match:  mcptest.Match{Verb: http.MethodPost, Method: "tools/call"},
		Action: mcptest.Delay(10 * time.Second), // ends when the call is canceled
	})
	gw.Add(mcptest.Rule{
		Match:  mcptest.Match{Verb: http.MethodPost, Method: "notifications/cancelled"},
		Action: mcptest.PlainText(http.StatusBadRequest, "bad request"),
	})
	callCtx, cancelCall := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := sup.CallTool(callCtx, &mcp.CallToolParams{Name: mcptest.RecordTool, Arguments: mcptest.IDArgs{ID: "x"}})
		done <- err
	}()
	require.NoError(t, srv.Log().WaitCount(ctx, "tools/call", 1))
	cancelCall() // go-sdk sends notifications/cancelled: answered 400, the connection fails
	require.Error(t, <-done)
	// The rules stay: the log records a request before the gateway picks its
	// rule, so removing them now could let the cancellation through. The new
	// session sends neither a call nor a cancellation.
	require.NoError(t, srv.Log().WaitCount(ctx, "notifications/cancelled", 1))
	require.Eventually(t, func() bool { return sup.Generation() == 2 && sup.State() == supervisor.Ready },
		10*time.Second, 10*time.Millisecond, "the dead session is replaced")
	// Events reach the sink on their own goroutine: wait for the one sought.
	require.Eventually(t, func() bool {
		for _, e := range rec.Events() {
			if e.Kind == events.KindSessionEnded && e.Detail == "ended by itself" {
				return true
			}
		}
		return false
	}, 10*time.Second, 10*time.Millisecond, "the first session ended by itself")

	require.NoError(t, sup.Close())
	srv.Close()
	require.NoError(t, goleak.Find(before), "a goroutine of the session that ended by itself outlived Close")
}

// A call made as soon as Start returns is a call made while connecting
// (DESIGN.md section 2, calls by state): it waits for ready and is sent
// once. It must not be refused as if the supervisor were still idle.
func TestCallRightAfterStartWaitsForReady(t *testing.T) {
	srv, err := mcptest.NewServer(mcptest.Options{})
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Start hands the first trigger to the loop goroutine and returns; the
	// race is lost often enough that a few supervisors show it.
	for i := range 10 {
		sup, err := supervisor.New(supervisor.Config{Endpoint: srv.URL(), HTTPClient: srv.HTTPClient()})
		require.NoError(t, err)
		sup.Start()
		id := fmt.Sprintf("first-%d", i)
		_, err = sup.CallTool(ctx, &mcp.CallToolParams{Name: mcptest.RecordTool, Arguments: mcptest.IDArgs{ID: id}})
		state := sup.State()
		require.NoError(t, sup.Close())
		require.NoError(t, err, "supervisor %d: a call right after Start (state then: %s)", i, state)
		require.Equal(t, 1, srv.Invocations(mcptest.RecordTool, id))
	}
}
