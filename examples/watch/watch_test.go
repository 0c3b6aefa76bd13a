package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/supervisor"
)

// bound limits every wait on a real server.
const bound = 20 * time.Second

// output is a stdout that signals when a line containing a text arrives.
type output struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{}
}

func newOutput() *output { return &output{changed: make(chan struct{})} }

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	close(o.changed)
	o.changed = make(chan struct{})
	return o.buf.Write(p)
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// waitFor blocks until the output contains text, or fails the test.
func (o *output) waitFor(t *testing.T, text string) {
	t.Helper()
	timer := time.NewTimer(bound)
	defer timer.Stop()
	for {
		o.mu.Lock()
		has, ch := strings.Contains(o.buf.String(), text), o.changed
		o.mu.Unlock()
		if has {
			return
		}
		select {
		case <-ch:
		case <-timer.C:
			t.Fatalf("no %q in the output:\n%s", text, o.String())
		}
	}
}

func newServer(t *testing.T) *mcptest.Server {
	t.Helper()
	srv, err := mcptest.NewServer(mcptest.Options{Tools: 2, Prompts: 1})
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	return srv
}

// interruptWhenReady runs the command until its catalog is listed, then
// cancels its context as Ctrl-C does, and returns the exit status.
func interruptWhenReady(t *testing.T, args ...string) (int, *output, string) {
	t.Helper()
	return interruptWhen(t, "ready: catalog", args...)
}

// interruptWhen runs the command until its output shows text, then cancels
// its context as Ctrl-C does, and returns the exit status.
func interruptWhen(t *testing.T, text string, args ...string) (int, *output, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := newOutput()
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, args, out, &stderr) }()
	out.waitFor(t, text)
	cancel()
	select {
	case code := <-done:
		return code, out, stderr.String()
	case <-time.After(bound):
		t.Fatal("run did not return after the interrupt")
		return 0, nil, ""
	}
}

func readResume(t *testing.T, path string) *supervisor.ResumeState {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	rs, err := supervisor.ParseResumeState(data)
	require.NoError(t, err)
	return rs
}

func TestWatchDetachesThenResumesWithoutInitialize(t *testing.T) {
	srv := newServer(t)
	path := filepath.Join(t.TempDir(), "session.json")
	log := srv.Log()

	// First run: bounded by -timeout, it detaches and saves the session.
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"-url", srv.URL(), "-resume", path, "-timeout", "3s"}, &stdout, &stderr)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	assert.Contains(t, stdout.String(), "ready: catalog of generation 1: 4 tools, 0 resources, 1 prompts")
	assert.Contains(t, stdout.String(), "stopping (-timeout 3s elapsed)")
	rs := readResume(t, path)
	require.Equal(t, srv.SessionIDs(), []string{rs.SessionID}, "the saved session is the server's live one")
	assert.Equal(t, srv.URL(), rs.Endpoint)
	assert.NotNil(t, rs.InitializeResult, "the capabilities are saved: the next resume is not blind")
	assert.Equal(t, 1, log.Count("initialize"))
	assert.Equal(t, 0, log.CountVerb(http.MethodDelete), "detaching sends no DELETE")
	assert.True(t, srv.KnownSession(rs.SessionID))
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	assert.NotContains(t, stdout.String(), rs.SessionID, "the raw session id is never printed")

	// Second run: resumes that session; interrupted once ready.
	code, out, errText := interruptWhenReady(t, "-url", srv.URL(), "-resume", path)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, errText)
	assert.Equal(t, 1, log.Count("initialize"), "the resume sends no initialize")
	assert.Equal(t, 0, log.CountVerb(http.MethodDelete))
	assert.Contains(t, out.String(), "resuming session "+events.HashSessionID(rs.SessionID))
	assert.Contains(t, out.String(), "idle -> resuming-known")
	assert.Contains(t, out.String(), "ready: catalog of generation 1: 4 tools")
	assert.Equal(t, rs.SessionID, readResume(t, path).SessionID, "the same session is saved again")
	assert.NotContains(t, out.String(), rs.SessionID)
}

func TestWatchEndSessionSendsDeleteAndRemovesTheResumeFile(t *testing.T) {
	srv := newServer(t)
	path := filepath.Join(t.TempDir(), "session.json")
	code, _, errText := interruptWhenReady(t, "-url", srv.URL(), "-resume", path)
	require.Equal(t, 0, code, errText)
	rs := readResume(t, path)

	code, out, errText := interruptWhenReady(t, "-url", srv.URL(), "-resume", path, "-end-session")
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, errText)
	assert.Equal(t, 1, srv.Log().Count("initialize"), "the session was resumed, then ended")
	require.Equal(t, 1, srv.Log().CountFunc(func(e mcptest.Entry) bool {
		return e.Verb == http.MethodDelete && e.SessionID == rs.SessionID
	}), "one DELETE of the session")
	assert.False(t, srv.KnownSession(rs.SessionID), "the server ended the session")
	assert.NoFileExists(t, path)
	assert.Contains(t, out.String(), "session ended (DELETE)")
}

func TestWatchRefusesAMalformedResumeFile(t *testing.T) {
	srv := newServer(t)
	cases := []struct {
		name, doc, field string
	}{
		{"wrong type", `{"version":1,"session_id":42,"protocol_version":"2025-11-25"}`, "session_id"},
		{"unknown version", `{"version":7,"session_id":"abc","protocol_version":"2025-11-25"}`, "version"},
		{"bad protocol version", `{"version":1,"session_id":"abc","protocol_version":"yesterday"}`, "protocol_version"},
		{"other endpoint", `{"version":1,"endpoint":"http://127.0.0.1:1/mcp","session_id":"abc","protocol_version":"2025-11-25"}`, "endpoint"},
		{"not JSON", `session=abc`, "(document)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "session.json")
			require.NoError(t, os.WriteFile(path, []byte(tc.doc), 0o600))
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), []string{"-url", srv.URL(), "-resume", path, "-timeout", "1m"}, &stdout, &stderr)
			require.Equal(t, 1, code)
			assert.Contains(t, stderr.String(), "resume file "+path+" refused")
			assert.Regexp(t, `resume state: ([A-Za-z]+\.)?`+regexp.QuoteMeta(tc.field)+`:`, stderr.String())
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, tc.doc, string(data), "the file is left as it was")
		})
	}
	assert.Empty(t, srv.Log().Entries(), "nothing was sent")
}

func TestWatchWritesEventsAsJSONLines(t *testing.T) {
	srv := newServer(t)
	path := filepath.Join(t.TempDir(), "events.jsonl")
	code, out, errText := interruptWhenReady(t, "-url", srv.URL(), "-name", "local", "-events", path, "-end-session")
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, errText)

	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	evs, err := events.ReadJSONLines(f)
	require.NoError(t, err)
	var path2 []string
	for _, e := range evs {
		assert.Equal(t, "local", e.Server)
		if e.Kind == events.KindTransition && e.From != e.To {
			path2 = append(path2, string(e.From)+">"+string(e.To))
		}
	}
	assert.Equal(t, []string{"idle>connecting", "connecting>ready", "ready>closed"}, path2)
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	for _, id := range srv.SessionIDs() {
		assert.NotContains(t, string(raw), id)
	}
	var first map[string]any
	require.NoError(t, json.Unmarshal(bytes.SplitN(raw, []byte("\n"), 2)[0], &first))
	assert.EqualValues(t, 1, first["v"])
}

func TestWatchStandaloneStreamOffOpensNoGET(t *testing.T) {
	srv := newServer(t)
	code, out, errText := interruptWhenReady(t, "-url", srv.URL(), "-standalone-sse", "off", "-end-session")
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, errText)
	assert.Equal(t, 0, srv.Log().CountVerb(http.MethodGet))
	assert.Equal(t, 1, srv.Log().CountVerb(http.MethodDelete))
}

func TestWatchUsage(t *testing.T) {
	cases := map[string][]string{
		"no url":         {},
		"bad url":        {"-url", "ftp://example.com/mcp"},
		"relative url":   {"-url", "/mcp"},
		"bad sse mode":   {"-url", "http://127.0.0.1:1/mcp", "-standalone-sse", "sometimes"},
		"extra argument": {"-url", "http://127.0.0.1:1/mcp", "more"},
		"negative time":  {"-url", "http://127.0.0.1:1/mcp", "-timeout", "-1s"},
		"unknown flag":   {"-nope"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			assert.Equal(t, 2, run(context.Background(), args, &stdout, &stderr))
			assert.NotEmpty(t, stderr.String())
			assert.Empty(t, stdout.String())
		})
	}
	var stdout, stderr bytes.Buffer
	assert.Equal(t, 0, run(context.Background(), []string{"-h"}, &stdout, &stderr))
	assert.Contains(t, stderr.String(), "-standalone-sse")
}

func TestWatchResumeOfAnUnknownSessionRecoversOnceAndSavesTheNewOne(t *testing.T) {
	srv := newServer(t)
	path := filepath.Join(t.TempDir(), "session.json")
	code, _, errText := interruptWhenReady(t, "-url", srv.URL(), "-resume", path)
	require.Equal(t, 0, code, errText)
	old := readResume(t, path)
	require.NoError(t, srv.Restart())

	code, out, errText := interruptWhenReady(t, "-url", srv.URL(), "-resume", path)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, errText)
	assert.Equal(t, 1, strings.Count(out.String(), "-> stale-recovering"), out.String())
	assert.Equal(t, 2, srv.Log().Count("initialize"), "one new handshake")
	saved := readResume(t, path)
	assert.NotEqual(t, old.SessionID, saved.SessionID)
	assert.True(t, srv.KnownSession(saved.SessionID), "the new session is saved")
}

func TestWatchExitsWithAnErrorAfterATerminalFailure(t *testing.T) {
	srv := newServer(t)
	srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Verb: http.MethodPost}, Action: mcptest.PlainText(http.StatusUnauthorized, "no")})
	path := filepath.Join(t.TempDir(), "session.json")
	code, out, errText := interruptWhen(t, "reason unauthorized", "-url", srv.URL(), "-resume", path)
	require.Equal(t, 1, code, out.String())
	assert.Contains(t, errText, "terminal failed state: unauthorized")
	assert.Contains(t, out.String(), "no session to resume")
	assert.NoFileExists(t, path)
}

// watch set no keepalive: a server killed while its session was idle (the
// standalone stream off, no call) stayed ready on the timeline for good.
// With -keepalive the ping finds it gone and the session leaves ready.
func TestWatchKeepAliveSeesAKilledServerLeaveReady(t *testing.T) {
	srv := newServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := newOutput()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"-url", srv.URL(), "-standalone-sse", "off", "-keepalive", "100ms"}, out, &bytes.Buffer{})
	}()
	out.waitFor(t, "ready: catalog")
	srv.Close()
	out.waitFor(t, "ready -> ")
	cancel()
	select {
	case <-done:
	case <-time.After(bound):
		t.Fatal("run did not return after the interrupt")
	}
}

// -keepalive defaults to defaultKeepAlive, takes 0 for off, and refuses a
// negative interval.
func TestWatchKeepAliveFlag(t *testing.T) {
	o, err := parseFlags([]string{"-url", "http://127.0.0.1:1/mcp"}, &bytes.Buffer{})
	require.NoError(t, err)
	require.Equal(t, defaultKeepAlive, o.keepAlive)
	o, err = parseFlags([]string{"-url", "http://127.0.0.1:1/mcp", "-keepalive", "0"}, &bytes.Buffer{})
	require.NoError(t, err)
	require.Zero(t, o.keepAlive)
	_, err = parseFlags([]string{"-url", "http://127.0.0.1:1/mcp", "-keepalive", "-1s"}, &bytes.Buffer{})
	var ue *usageError
	require.ErrorAs(t, err, &ue)
}
