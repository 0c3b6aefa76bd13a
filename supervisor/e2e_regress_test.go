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

// A session that ends by itself (here: the first standalone GET is answered
// with the null-id -32000 400 that says the session is gone, which the
// stream keeper hands to go-sdk, and go-sdk fails the connection) must
// still be closed by the supervisor, so that what go-sdk runs for it (the
// keepalive goroutine) ends by Close.
func TestSessionEndedByItselfLeavesNoGoroutine(t *testing.T) {
	before := goleak.IgnoreCurrent()
	srv, err := mcptest.NewServer(mcptest.Options{})
	require.NoError(t, err)
	rec := &events.Recorder{}
	sup, err := supervisor.New(supervisor.Config{
		Endpoint: srv.URL(),
		HTTP:     supervisor.HTTPConfig{HTTPClient: srv.HTTPClient()},
		Stream:   supervisor.StreamConfig{Policy: supervisor.StreamOn},
		Recovery: supervisor.RecoveryConfig{KeepAlive: time.Hour}, // never ticks within the test
		Observe:  supervisor.ObserveConfig{Events: rec},
	})
	require.NoError(t, err)
	srv.Gateway().Add(mcptest.Rule{
		Match:  mcptest.Match{Verb: http.MethodGet, Occurrence: mcptest.First()},
		Action: mcptest.JSONRPCError(http.StatusBadRequest, mcptest.NullID, mcptest.CodeServerError, mcptest.StaleSessionMessage),
	})
	sup.Start()
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
		sup, err := supervisor.New(supervisor.Config{Endpoint: srv.URL(), HTTP: supervisor.HTTPConfig{HTTPClient: srv.HTTPClient()}})
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
