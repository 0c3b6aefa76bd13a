package supervisor

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/stdio"
)

// TestCommandHostileServerLeavesNothing: a server that starts with a 1 MiB
// stdout line (past MaxLineBytes), then closes its stdout and keeps running
// with stdin's end and SIGTERM ignored: the line is dropped with an event,
// the closed stdout ends the session (the call in flight fails naming the
// exit, errors.As finds the *stdio.ProcessExitError), the process is stopped to
// SIGKILL and started again; after Close no process of it and no goroutine
// of the supervisor is left.
func TestCommandHostileServerLeavesNothing(t *testing.T) {
	requireProcFS(t)
	before := goleak.IgnoreCurrent()
	r := newStdioRig(t, Config{Command: &stdio.Command{StopGrace: 20 * time.Millisecond, KillGrace: 20 * time.Millisecond, MaxLineBytes: 64 << 10}},
		"-huge-line-at-start", "1048576", "-ignore-stdin-eof", "-ignore-sigterm")
	r.sup.Start()
	r.ready()
	dropped := r.waitEvent(events.KindStdoutLineDropped, "oversized")
	require.Equal(t, 64<<10, dropped.Bound)
	pid, pgid, _ := r.pids()
	gen := r.sup.Generation()

	_, err := r.call("closeout", nil)
	var exit *stdio.ProcessExitError
	require.True(t, errors.As(err, &exit), "%v", err)
	assert.Equal(t, stdio.StopKill, exit.Stop)
	assert.Equal(t, pid, exit.PID)
	assert.Equal(t, 1, exit.DroppedLines)
	e := r.waitEvent(events.KindProcessExited, "after sigkill")
	assert.Equal(t, gen, e.Generation)
	_, _, alive := procState(pid)
	assert.False(t, alive, "the process is gone")
	r.restarted(gen)
	pid2, pgid2, _ := r.pids()

	require.NoError(t, r.sup.Close())
	for _, p := range []int{pid, pid2} {
		_, _, alive := procState(p)
		assert.False(t, alive, "pid %d left", p)
	}
	assert.Empty(t, groupMembers(t, pgid))
	assert.Empty(t, groupMembers(t, pgid2))
	require.NoError(t, goleak.Find(before), "a goroutine outlived Close")
}
