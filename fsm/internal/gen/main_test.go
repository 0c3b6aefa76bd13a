package main

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/fsm"
)

// TestStatechartUpToDate fails when docs/statechart.md differs from what the
// table produces. Fix with: go generate ./fsm
func TestStatechartUpToDate(t *testing.T) {
	got, err := os.ReadFile("../../../docs/statechart.md")
	require.NoError(t, err)
	require.Equal(t, string(statechart()), string(got),
		"docs/statechart.md is stale: run go generate ./fsm")
}

// Every state and every non-ignored row appears in the generated document.
func TestStatechartCoversTable(t *testing.T) {
	doc := string(statechart())
	require.True(t, strings.HasPrefix(doc, "<!-- Code generated"))
	require.Contains(t, doc, "```mermaid\nstateDiagram-v2\n")
	for _, s := range fsm.States() {
		require.Contains(t, doc, `state "`+s.String()+`"`)
	}
	for _, r := range fsm.Table() {
		if r.Ignore {
			continue
		}
		row := "| `" + r.From.String() + "` | `" + r.Trigger.String() + "` |"
		require.Contains(t, doc, row)
	}
	require.Contains(t, doc, "resuming_known --> listing_declared: attached / list-declared")
	require.Contains(t, doc, "listing_declared --> stale_recovering: discovery-failed [stale-recovery-unused+expiry-evidence+session-budget-left]")
	require.Contains(t, doc, "failed --> resuming_known: retry-due [retrying+resume-known+session-budget-left] / attach")
}
