package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/events"
)

func TestWatchHTTPListensOnLoopbackOnly(t *testing.T) {
	for _, addr := range []string{":0", "0.0.0.0:0", "[::]:0", "192.0.2.1:80", "example.com:80", "127.0.0.1"} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), []string{"-url", "http://127.0.0.1:1/mcp", "-http", addr}, &stdout, &stderr)
		assert.Equal(t, 2, code, addr)
		assert.Contains(t, stderr.String(), "-http", addr)
		assert.Empty(t, stdout.String(), addr)
	}
	for _, addr := range []string{"127.0.0.1:0", "127.9.9.9:0", "[::1]:0", "localhost:0"} {
		_, err := parseFlags([]string{"-url", "http://127.0.0.1:1/mcp", "-http", addr}, io.Discard)
		assert.NoError(t, err, addr)
	}
	_, err := parseFlags([]string{"-url", "http://127.0.0.1:1/mcp", "-http", "0.0.0.0:0", "-http-allow-remote"}, io.Discard)
	assert.NoError(t, err, "an explicit flag allows a non-loopback address")
	_, err = parseFlags([]string{"-url", "http://127.0.0.1:1/mcp", "-http-allow-remote"}, io.Discard)
	assert.ErrorContains(t, err, "-http-allow-remote needs -http")
}

func TestWatchServesTheLiveTimeline(t *testing.T) {
	srv := newServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := newOutput()
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"-url", srv.URL(), "-name", "local", "-http", "127.0.0.1:0", "-end-session"}, out, &stderr)
	}()
	out.waitFor(t, "ready: catalog")
	m := regexp.MustCompile(`live timeline at (http://127\.0\.0\.1:\d+/)`).FindStringSubmatch(out.String())
	require.NotNil(t, m, "watch prints the timeline's address:\n%s", out)
	base := m[1]

	resp, err := http.Get(base)
	require.NoError(t, err)
	page, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, string(page), `"server":"local"`, "the page holds the events so far")
	assert.Contains(t, string(page), `<body data-live="events?after=`)

	// A page of another site whose name resolves to 127.0.0.1 is refused.
	req, err := http.NewRequest(http.MethodGet, base+"events", nil)
	require.NoError(t, err)
	req.Host = "attacker.example"
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)

	streamCtx, streamCancel := context.WithTimeout(context.Background(), bound)
	defer streamCancel()
	req, err = http.NewRequestWithContext(streamCtx, http.MethodGet, base+"events", nil)
	require.NoError(t, err)
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	sc := bufio.NewScanner(resp.Body)
	var first events.Event
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			require.NoError(t, first.UnmarshalJSON([]byte(data)))
			break
		}
	}
	assert.Equal(t, "local", string(first.Server))
	assert.Equal(t, string(events.KindTransition), string(first.Kind))
	assert.Equal(t, "connecting", string(first.To))

	cancel()
	select {
	case code := <-done:
		require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, stderr.String())
	case <-time.After(bound):
		t.Fatal("run did not return after the interrupt")
	}
	// The stream carried the events up to the end, then ended with watch.
	lastState := ""
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var e events.Event
			require.NoError(t, e.UnmarshalJSON([]byte(data)))
			if e.Kind == events.KindTransition {
				lastState = string(e.To)
			}
		}
	}
	assert.Equal(t, "closed", lastState, "the stream carried the close")
}
