package hub_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/hub"
)

// A server name of 2 MiB was taken as it was: written whole into every
// event of the server (a JSON-lines record ReadJSONLines then refused, past
// events.MaxLineBytes), its errors and qualified names. A name is bounded
// by the one rule of every name an event carries, events.MaxNameBytes:
// Add refuses a longer one (ErrNameTooLong), ParseServers sets its entry
// apart as unsupported, and the warning's event names it cut, so the
// record reads back.
func TestLongServerNameIsRefusedAndCutInEvents(t *testing.T) {
	long := strings.Repeat("n", 2<<20)
	var rec bytes.Buffer
	lines := events.NewJSONLines(&rec)
	// The default naming bounds a name closer (its namespace, MaxNamespaceLen):
	// a naming that does not spell the server's name out leaves this bound.
	short := func(server, item string) string { return "s__" + item }
	h := hub.New(hub.Config{Events: lines, Naming: short})
	defer h.Close()

	err := h.Add(t.Context(), hub.ServerConfig{Name: long, URL: "http://127.0.0.1:1/mcp"})
	require.ErrorIs(t, err, hub.ErrNameTooLong)
	require.Less(t, len(err.Error()), 2*events.MaxNameBytes, "the error names the server cut")
	require.NoError(t, h.Add(t.Context(), hub.ServerConfig{Name: strings.Repeat("n", events.MaxNameBytes), URL: "http://127.0.0.1:1/mcp"}), "a name at the bound is taken")

	doc, err := json.Marshal(map[string]any{"mcpServers": map[string]any{long: map[string]any{"url": "http://127.0.0.1:1/mcp"}}})
	require.NoError(t, err)
	f, err := hub.ParseServers(doc)
	require.NoError(t, err)
	require.Empty(t, f.Servers)
	require.Len(t, f.Unsupported, 1)
	require.NoError(t, h.AddServers(t.Context(), f))
	// The server at the bound keeps reporting until Close, which waits for
	// its events: the record is read once nothing writes it.
	require.NoError(t, h.Close())

	require.NoError(t, lines.Err())
	evs, err := events.ReadJSONLines(&rec)
	require.NoError(t, err, "every record reads back")
	warned := false
	for _, ev := range evs {
		require.LessOrEqual(t, len(ev.Server), events.MaxNameBytes)
		if ev.Kind == hub.KindConfigWarning {
			warned = true
			require.Equal(t, events.CutName(long), ev.Server)
			require.Contains(t, ev.Detail, "server name too long")
			require.Less(t, len(ev.Detail), 2*events.MaxNameBytes+200)
		}
	}
	require.True(t, warned)
}
