//go:build unix

package hub_test

import (
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/hub"
	"github.com/mcpsup/mcpsup/internal/stdiotest"
	"github.com/mcpsup/mcpsup/stdio"
)

// Close stopped stdio servers eight at a time: each that ignores the end
// of its stdin holds its stop for its StopGrace (and KillGrace), so 40 of
// them held a shutdown for five stops in a row. Now every supervisor is
// stopped at once. Each test server, once its stdin ends (the first step
// of the stdio transport's shutdown: "the client SHOULD initiate shutdown
// by: first, closing the input stream to the child process", basic/
// transports, stdio), waits until all 24 have seen theirs and only then
// exits by itself: with any fewer stopped at once, none would until
// SIGTERM after StopGrace.
func TestCloseStopsEveryStdioServerAtOnce(t *testing.T) {
	f := newFixture(t, nil)
	bin, err := stdiotest.Build(f.ctx, t.TempDir())
	require.NoError(t, err)
	barrier := t.TempDir()
	cfg := f.config(nil)
	// Long enough that no server is stopped by a signal while the others
	// are on their way: a stop past it fails the test by the counts below.
	cfg.Supervisor.Command = &stdio.Command{StopGrace: 10 * time.Second, KillGrace: time.Second}
	h := hub.New(cfg)
	defer h.Close()
	for i := range slowServers {
		require.NoError(t, h.Add(f.ctx, hub.ServerConfig{Name: fmt.Sprintf("p%02d", i), Command: bin,
			Args: []string{"-eof-barrier", barrier, "-eof-barrier-n", strconv.Itoa(slowServers)}}))
	}
	require.NoError(t, h.WaitReady(f.ctx, hub.All))

	require.NoError(t, h.Close())
	done, err := filepath.Glob(filepath.Join(barrier, "done-*"))
	require.NoError(t, err)
	require.Len(t, done, slowServers, "every server exited by itself, each once all had their stdin closed")
}
