package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/events"
)

// runBound bounds a demo run in tests; the demo itself takes about a second.
const runBound = 40 * time.Second

func TestDemoEveryStoryEndsAsDesigned(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), runBound)
	defer cancel()
	jsonl := filepath.Join(t.TempDir(), "events.jsonl")
	var stdout, stderr bytes.Buffer

	code := run(ctx, []string{"-v", "-events", jsonl}, &stdout, &stderr)
	out := stdout.String()
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, stderr.String())
	require.Empty(t, stderr.String())

	for _, s := range allStories() {
		row := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(s.name) + `\s+(ready|closed \(was ready\)|failed \(churn\)).*ok \(\d+ checks\)$`)
		assert.Regexp(t, row, out, "table row of %s", s.name)
	}
	assert.Contains(t, out, "all 7 stories ended as docs/DESIGN.md requires")
	assert.NotContains(t, out, "FAIL")
	assert.Regexp(t, `(?m)^S4 .*429:0 500:0 403:0 404:3 `, out)
	assert.Regexp(t, `(?m)^S5 .*off: GET-hostile \(auto\)`, out)

	// The live timeline shows the decisive events of each story.
	assert.Regexp(t, `(?m)^s1-blind-resume\s.*resuming-blind -> probing`, out)
	assert.Regexp(t, `(?m)^s2-stale-null-id\s.*probing -> stale-recovering`, out)
	assert.Regexp(t, `(?m)^s4-call-errors\s.*call-failed\s+tools/call`, out)
	assert.Regexp(t, `(?m)^s5-get-hostile\s.*stream-disabled`, out)
	assert.Regexp(t, `(?m)^healthy\s.*connecting -> ready`, out)
	assert.Regexp(t, `(?m)^stdio-crash\s.*process-exited`, out)
	assert.Regexp(t, `(?m)^stdio-churn\s.*churn-limit-reached.*reason churn`, out)

	// The JSON-lines recording holds every server's events.
	f, err := os.Open(jsonl)
	require.NoError(t, err)
	defer f.Close()
	evs, err := events.ReadJSONLines(f)
	require.NoError(t, err)
	servers := map[string]bool{}
	for _, e := range evs {
		servers[e.Server] = true
	}
	for _, s := range []string{"s1-seed", "s1-blind-resume", "s2-seed", "s2-stale-null-id", "s4-call-errors", "s5-get-hostile", "healthy", "stdio-crash", "stdio-churn"} {
		assert.True(t, servers[s], "events of %s recorded", s)
	}
}

func TestDemoReportsEveryUnmetExpectation(t *testing.T) {
	ss := []story{
		{name: "passing", run: func(context.Context, *env) (r result) {
			r.state = "ready"
			r.expect(true, "state ready", "ready")
			return r
		}},
		{name: "failing", run: func(context.Context, *env) (r result) {
			r.state = "failed"
			r.expect(true, "a session", "1")
			r.expect(false, "zero initialize on the wire", "%d", 2)
			return r
		}},
	}
	results := runStories(context.Background(), ss, &env{sink: events.Multi()})
	var out bytes.Buffer
	writeTable(&out, results)
	failed := writeFailures(&out, results)

	require.Equal(t, 1, failed)
	assert.Regexp(t, `(?m)^passing\s+ready.*ok \(1 checks\)$`, out.String())
	assert.Regexp(t, `(?m)^failing\s+failed.*FAILED$`, out.String())
	assert.Contains(t, out.String(), "FAIL failing: expected zero initialize on the wire; got 2")
	assert.NotContains(t, out.String(), "a session;")
	assert.Contains(t, out.String(), "1 of 2 stories did not end as docs/DESIGN.md requires")
}

func TestDemoFailsWhenTheRunIsCutShort(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stdout, stderr bytes.Buffer
	code := run(ctx, []string{"-quiet"}, &stdout, &stderr)
	require.Equal(t, 1, code, stdout.String())
	assert.Contains(t, stdout.String(), "did not run to its end")
	assert.Equal(t, 7, strings.Count(stdout.String(), "FAILED"), stdout.String())
}

func TestDemoUsage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	assert.Equal(t, 2, run(context.Background(), []string{"extra"}, &stdout, &stderr))
	assert.Equal(t, 2, run(context.Background(), []string{"-timeout", "0s"}, &stdout, &stderr))
	assert.Equal(t, 2, run(context.Background(), []string{"-nope"}, &stdout, &stderr))
	assert.Equal(t, 0, run(context.Background(), []string{"-h"}, &stdout, &stderr))
}
