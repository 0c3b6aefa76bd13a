package main

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The command prints the failed calls' spans with their verdicts and the
// supervisor's metrics, as the exporters' JSON, and the story's own
// outcomes as JSON too: its doc promises JSON lines for jq, and plain lines
// among them broke the pipe.
func TestRunPrintsSpansAndMetrics(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out bytes.Buffer
	require.NoError(t, run(ctx, &out))

	classes := map[string]bool{}
	metrics := map[string]bool{}
	outcomes := 0
	for _, line := range bytes.Split(bytes.TrimSuffix(out.Bytes(), []byte("\n")), []byte("\n")) {
		require.True(t, json.Valid(line), "not a JSON line: %q", line)
		var story struct{ Story, Supervisor, Client string }
		if json.Unmarshal(line, &story) == nil && story.Story == "S4" {
			outcomes++
			require.NotEmpty(t, story.Supervisor)
			require.NotEmpty(t, story.Client)
			continue
		}
		var v struct {
			Name       string
			Attributes []struct {
				Key   string
				Value struct{ Value any }
			}
			ScopeMetrics []struct{ Metrics []struct{ Name string } }
		}
		require.NoError(t, json.Unmarshal(line, &v))
		if v.Name == "tools/call record" {
			for _, a := range v.Attributes {
				if a.Key == "error.type" {
					classes[a.Value.Value.(string)] = true
				}
			}
		}
		for _, sm := range v.ScopeMetrics {
			for _, m := range sm.Metrics {
				metrics[m.Name] = true
			}
		}
	}
	require.Equal(t, 2, outcomes, "one line per rule")
	require.Equal(t, map[string]bool{"server-error": true, "rate-limited": true}, classes)
	for _, name := range []string{"mcpsup.connection.state", "mcpsup.calls.failed", "mcpsup.sessions.opened", "mcpsup.rate_limit.windows", "mcp.client.operation.duration"} {
		require.True(t, metrics[name], "metric %s printed", name)
	}
}
