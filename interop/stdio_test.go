//go:build linux

package interop

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/stdio"
	"github.com/mcpsup/mcpsup/supervisor"
)

// TestEverythingOverStdio supervises the TypeScript reference server in
// stdio mode (the package's default transport): it serves, a SIGKILL of its
// process is a session that died and a new process serves, and Close leaves
// no process behind.
func TestEverythingOverStdio(t *testing.T) {
	node, entry := findEverything(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rec := &events.Recorder{}
	sup, err := supervisor.New(supervisor.Config{
		Name:     "everything",
		Command:  &stdio.Command{Path: node, Args: []string{entry, "stdio"}, StopGrace: 2 * time.Second},
		Observe:  supervisor.ObserveConfig{Events: rec},
		Recovery: supervisor.RecoveryConfig{Backoff: supervisor.Backoff{InitialInterval: 10 * time.Millisecond}},
	})
	require.NoError(t, err)
	defer sup.Close()
	sup.Start()
	require.NoError(t, sup.WaitForState(ctx, supervisor.Ready))
	require.NotNil(t, sup.Catalog().Tool("echo"))
	echo := func(text string) string {
		res, err := sup.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": text}})
		require.NoError(t, err)
		return res.Content[0].(*mcp.TextContent).Text
	}
	assert.Contains(t, echo("one"), "one")

	first := childrenRunning(t, entry)
	require.Len(t, first, 1, "one node process, a child of this one")
	require.NoError(t, syscall.Kill(first[0], syscall.SIGKILL))
	_, err = rec.WaitFor(ctx, func(es []events.Event) bool {
		for _, e := range es {
			if e.Kind == events.KindTransition && e.Trigger == events.TriggerSessionDied {
				assert.Contains(t, e.Verdict.Detail, "signal 9 (SIGKILL)")
				return true
			}
		}
		return false
	})
	require.NoError(t, err)
	assert.Contains(t, echo("two"), "two", "a new process serves the call, which waited for it")
	assert.Equal(t, 2, sup.SessionsOpened())
	second := childrenRunning(t, entry)
	require.Len(t, second, 1)
	assert.NotEqual(t, first[0], second[0])

	require.NoError(t, sup.Close())
	assert.Empty(t, childrenRunning(t, entry), "no node process outlives Close")
	_, err = os.Stat(filepath.Join("/proc", strconv.Itoa(second[0])))
	assert.True(t, os.IsNotExist(err), "reaped, no zombie")
}

// childrenRunning lists the processes of this one whose command line
// holds arg, from /proc.
func childrenRunning(t *testing.T, arg string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte(arg)) {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+2:]))
		if ppid, _ := strconv.Atoi(f[1]); ppid == os.Getpid() {
			out = append(out, pid)
		}
	}
	return out
}
