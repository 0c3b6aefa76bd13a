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
)

// -config watches every server of an mcpServers file through one hub; an
// interrupt detaches them all and saves their states in the -resume
// directory; the next run resumes them with no initialize.
func TestWatchConfigWatchesMany(t *testing.T) {
	a, b := newServer(t), newServer(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcp.json")
	require.NoError(t, os.WriteFile(cfg, fmt.Appendf(nil, `{"mcpServers": {"a": {"url": %q}, "b": {"url": %q}, "c": {"url": "http://127.0.0.1:1/sse", "type": "sse"}}}`, a.URL(), b.URL()), 0o600))
	states := filepath.Join(dir, "states")

	watchUntil := func(texts ...string) (int, string) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		out := newOutput()
		var stderr bytes.Buffer
		done := make(chan int, 1)
		go func() { done <- run(ctx, []string{"-config", cfg, "-resume", states}, out, &stderr) }()
		for _, text := range texts {
			out.waitFor(t, text)
		}
		cancel()
		select {
		case code := <-done:
			return code, out.String() + stderr.String()
		case <-time.After(bound):
			t.Fatal("run did not return after the interrupt")
			return 0, ""
		}
	}
	code, out := watchUntil("+a__record", "+b__record")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "watching 2 server(s)")
	require.Contains(t, out, `the legacy HTTP+SSE transport ("type": "sse") is not supported`)
	require.Contains(t, out, "resume states saved in "+states)
	for _, srv := range []string{"a", "b"} {
		_, err := os.Stat(filepath.Join(states, srv+".json"))
		require.NoError(t, err)
	}
	a.Log().Reset()
	b.Log().Reset()

	code, out = watchUntil("+a__record", "+b__record")
	require.Equal(t, 0, code, out)
	require.Zero(t, a.Log().Count("initialize"), "a resumed")
	require.Zero(t, b.Log().Count("initialize"), "b resumed")
}

func TestWatchConfigUsage(t *testing.T) {
	for _, args := range [][]string{
		{"-url", "http://127.0.0.1:1/mcp", "-config", "x.json"},
		{"-config", "x.json", "-name", "n"},
		{},
	} {
		var out, errOut bytes.Buffer
		require.Equal(t, 2, run(context.Background(), args, &out, &errOut), "%v", args)
	}
}
