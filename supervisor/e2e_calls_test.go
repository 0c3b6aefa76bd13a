package supervisor_test

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/supervisor"
)

// A call whose caller gave no deadline runs on the supervisor's call clock
// alone (Config.CallTimeout), which is also what Close ends it with: the
// call is canceled, not left to its timeout.
func TestE2ECloseCancelsACallWithoutDeadline(t *testing.T) {
	e := newE2E(t, mcptest.Options{}, supervisor.Config{CallTimeout: time.Hour})
	e.start()
	errc := make(chan error, 1)
	go func() {
		_, err := e.sup.CallTool(context.Background(), &mcp.CallToolParams{Name: mcptest.BlockTool, Arguments: mcptest.IDArgs{ID: "c"}})
		errc <- err
	}()
	require.Eventually(t, func() bool { return e.srv.Invocations(mcptest.BlockTool, "c") == 1 },
		e2eTimeout, time.Millisecond, "the call reached the server")
	require.NoError(t, e.sup.Close())
	err := <-errc
	var ce *supervisor.CallError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, classify.Canceled, ce.Verdict.Class, "%v", err)
	require.ErrorIs(t, err, supervisor.ErrClosed)
}
