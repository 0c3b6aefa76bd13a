package main

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/mcptest"
)

// -call with -every calls the tools in order, again and again, printing each
// outcome: the first answered 500 by the gateway, then results.
func TestWatchCallsToolsEveryInterval(t *testing.T) {
	srv := newServer(t)
	srv.Gateway().Add(mcptest.Rule{
		Match:  mcptest.Match{Verb: http.MethodPost, Method: "tools/call", Occurrence: mcptest.First()},
		Action: mcptest.PlainText(http.StatusInternalServerError, "boom"),
	})
	code, out, errText := interruptWhen(t, "call record: ok: recorded w #1",
		"-url", srv.URL(), "-every", "10ms", "-call", `record={"id":"w"}`, "-call", `tool-1={"text":"twice"}`)
	require.Equal(t, 0, code, "stderr: %s", errText)
	text := out.String()
	assert.Contains(t, text, "call record: failed: server-error, HTTP 500, answered, not resendable [ready, generation 1]")
	assert.Contains(t, text, "call tool-1: ok: tool-1: twice [ready, generation 1]")
	// The record call of the next round succeeds and counts at the server.
	assert.GreaterOrEqual(t, srv.Invocations(mcptest.RecordTool, "w"), 1)
	assert.Less(t, strings.Index(text, "call record: failed"), strings.Index(text, "call tool-1: ok"), "in order")
}

func TestWatchCallFlagsAreChecked(t *testing.T) {
	for args, want := range map[string]string{
		"-call =x":               "the tool name is empty",
		"-call t=[1]":            "must be a JSON object",
		"-call t={":              "must be a JSON object",
		"-every 1s":              "-every needs -call",
		"-call t -every -1s":     "-every must not be negative",
		"-config f.json -call t": "not with -config",
	} {
		t.Run(args, func(t *testing.T) {
			argv := strings.Fields(args)
			if !strings.Contains(args, "-config") {
				argv = append([]string{"-url", "http://127.0.0.1:1/mcp"}, argv...)
			}
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), argv, &stdout, &stderr)
			assert.Equal(t, 2, code)
			assert.Contains(t, stderr.String(), want)
		})
	}
}

func TestParseCall(t *testing.T) {
	c, err := parseCall(`search={"q":"go","n":2}`)
	require.NoError(t, err)
	assert.Equal(t, "search", c.name)
	assert.Equal(t, map[string]any{"q": "go", "n": float64(2)}, c.args)
	c, err = parseCall("ping")
	require.NoError(t, err)
	assert.Nil(t, c.args)
}
