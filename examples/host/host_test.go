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
	"go.uber.org/goleak"

	"github.com/mcpsup/mcpsup/mcptest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Two runs of the host over one servers file: the first connects, calls a
// tool and detaches; the second resumes both sessions with no initialize.
// The legacy SSE entry, the disabled one and the unknown field are
// reported, not fatal.
func TestHostResumesAcrossRuns(t *testing.T) {
	a, err := mcptest.NewServer(mcptest.Options{Tools: 1})
	require.NoError(t, err)
	t.Cleanup(a.Close)
	b, err := mcptest.NewServer(mcptest.Options{Tools: 1})
	require.NoError(t, err)
	t.Cleanup(b.Close)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcp.json")
	require.NoError(t, os.WriteFile(cfg, fmt.Appendf(nil, `{"mcpServers": {
		"a": {"url": %q, "headers": {"X-Token": "hush-hush-1234"}},
		"b": {"url": %q, "disabled": false, "timeout": 30},
		"off": {"url": "http://127.0.0.1:1/mcp", "disabled": true},
		"old": {"url": "http://127.0.0.1:1/sse", "type": "sse"}}}`, a.URL(), b.URL()), 0o600))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	var out, errOut bytes.Buffer
	code := run(ctx, []string{"-config", cfg, "-call", "b__record", "-args", `{"id":"run1"}`}, &out, &errOut)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
	text := out.String()
	require.Contains(t, text, "merged catalog: 6 tools")
	require.Contains(t, text, "a__tool-1")
	require.Contains(t, text, "b__record")
	require.Contains(t, text, "call b__record: recorded run1 #1")
	require.Contains(t, text, `the legacy HTTP+SSE transport ("type": "sse") is not supported`)
	require.Contains(t, text, `field "timeout": unknown field, kept`)
	require.Contains(t, text, `server "off": "disabled": true, not connected`)
	require.Contains(t, text, "states saved in "+cfg+".state")
	require.NotContains(t, text, "hush-hush-1234")
	require.Equal(t, 1, b.Invocations(mcptest.RecordTool, "run1"))
	a.Log().Reset()
	b.Log().Reset()

	out.Reset()
	code = run(ctx, []string{"-config", cfg, "-call", "a__record", "-args", `{"id":"run2"}`, "-end-session"}, &out, &errOut)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
	require.Contains(t, out.String(), "resuming")
	require.Zero(t, a.Log().Count("initialize"), "a resumed")
	require.Zero(t, b.Log().Count("initialize"), "b resumed")
	require.Equal(t, 1, a.Invocations(mcptest.RecordTool, "run2"))
	require.Equal(t, 1, a.Log().CountVerb("DELETE"), "-end-session ends the sessions")
	entries, err := os.ReadDir(cfg + ".state")
	require.NoError(t, err)
	require.Empty(t, entries, "-end-session deletes the states")
}

func TestHostUsage(t *testing.T) {
	var out, errOut bytes.Buffer
	require.Equal(t, 2, run(context.Background(), nil, &out, &errOut))
	require.Contains(t, errOut.String(), "-config is required")
	require.Equal(t, 1, run(context.Background(), []string{"-config", filepath.Join(t.TempDir(), "none.json")}, &out, &errOut))
}
