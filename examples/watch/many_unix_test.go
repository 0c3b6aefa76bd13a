//go:build unix

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/internal/stdiotest"
)

// -config watches a stdio entry ("command") beside a streamable HTTP one,
// as its doc says: the process is started, its tools reach the merged
// catalog, and it is stopped at exit.
func TestWatchConfigWatchesAStdioServer(t *testing.T) {
	a := newServer(t)
	dir := t.TempDir()
	bin, err := stdiotest.Build(t.Context(), dir)
	require.NoError(t, err)
	cfg := filepath.Join(dir, "mcp.json")
	require.NoError(t, os.WriteFile(cfg, fmt.Appendf(nil, `{"mcpServers": {"a": {"url": %q}, "local": {"command": %q}}}`, a.URL(), bin), 0o600))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := newOutput()
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"-config", cfg}, out, &bytes.Buffer{}) }()
	out.waitFor(t, "+a__record")
	out.waitFor(t, "+local__echo")
	cancel()
	select {
	case code := <-done:
		require.Equal(t, 0, code, out.String())
	case <-time.After(bound):
		t.Fatal("run did not return after the interrupt")
	}
	require.Contains(t, out.String(), "watching 2 server(s)")
}
