//go:build unix

package interop

import (
	"errors"
	"net/http"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMissingServerSkipsLocallyFailsInCI checks the rule for a machine
// without the server: skip with a loud message, fail when CI is set.
func TestMissingServerSkipsLocallyFailsInCI(t *testing.T) {
	t.Setenv(everythingEnv, filepath.Join(t.TempDir(), "absent", "index.js"))

	t.Setenv("CI", "")
	got := runFind(t)
	require.Equal(t, "skip", got.ended)
	require.Contains(t, got.msg, "INTEROP TESTS NOT RUN")
	require.Contains(t, got.msg, "bash interop/install.sh")

	t.Setenv("CI", "true")
	got = runFind(t)
	require.Equal(t, "fatal", got.ended)
	require.Contains(t, got.msg, "INTEROP TESTS NOT RUN")
}

// TestKillFreesThePort checks that Kill leaves no process behind and that
// a new process can take the same port.
func TestKillFreesThePort(t *testing.T) {
	s := startEverything(t)
	pid, url := s.proc.cmd.Process.Pid, s.URL()

	s.Kill()
	require.ErrorIs(t, syscall.Kill(-pid, 0), syscall.ESRCH, "process group %d is gone", pid)
	hc, _ := newHTTPClient(t)
	_, err := hc.Get(url)
	require.ErrorIs(t, err, syscall.ECONNREFUSED, "nothing listens after Kill")

	s.Restart()
	require.Equal(t, url, s.URL())
	resp, err := hc.Get(url)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, "a GET without a session")
}

// findOutcome is how findEverything ended on a recordingTB.
type findOutcome struct {
	ended string // "returned", "skip" or "fatal"
	msg   string
}

// runFind runs findEverything on a recordingTB and reports how it ended.
func runFind(t *testing.T) (out findOutcome) {
	t.Helper()
	tb := &recordingTB{TB: t}
	defer func() {
		if r := recover(); r != nil && r != errStopped {
			panic(r)
		}
		out = findOutcome{ended: tb.ended, msg: tb.msg}
		if out.ended == "" {
			out.ended = "returned"
		}
	}()
	findEverything(tb)
	return out
}

var errStopped = errors.New("test stopped")

// recordingTB records how a helper stopped the test instead of stopping it.
type recordingTB struct {
	testing.TB
	ended, msg string
}

func (r *recordingTB) Helper() {}

func (r *recordingTB) Skip(args ...any) { r.stop("skip", args...) }

func (r *recordingTB) Fatal(args ...any) { r.stop("fatal", args...) }

func (r *recordingTB) stop(how string, args ...any) {
	r.ended = how
	if len(args) > 0 {
		if s, ok := args[0].(string); ok {
			r.msg = s
		}
	}
	panic(errStopped)
}
