package hub_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/hub"
)

func TestParseServersKeepsWhatItDoesNotUse(t *testing.T) {
	f, err := hub.ParseServers([]byte(`{
	  "mcpServers": {
	    "search": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer t0k"}, "type": "http", "alwaysAllow": ["find"]},
	    "files":  {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem"], "env": {"A": "b"}},
	    "old":    {"url": "https://example.com/sse", "type": "sse"},
	    "plain":  {"url": "http://127.0.0.1:3001/mcp"}
	  },
	  "globalShortcut": "Ctrl+Space"
	}`))
	require.NoError(t, err)
	require.Len(t, f.Servers, 2)
	require.Equal(t, "plain", f.Servers[0].Name)
	s := f.Servers[1]
	require.Equal(t, "search", s.Name)
	require.Equal(t, "https://example.com/mcp", s.URL)
	require.Equal(t, map[string]string{"Authorization": "Bearer t0k"}, s.Headers)
	require.JSONEq(t, `["find"]`, string(s.Extra["alwaysAllow"]))

	require.Len(t, f.Unsupported, 2)
	require.Equal(t, "files", f.Unsupported[0].Name)
	require.Equal(t, "npx", f.Unsupported[0].Command)
	require.Equal(t, []string{"-y", "@modelcontextprotocol/server-filesystem"}, f.Unsupported[0].Args)
	ok, why := f.Unsupported[0].Supported()
	require.False(t, ok)
	require.Contains(t, why, "stdio")
	require.JSONEq(t, `"Ctrl+Space"`, string(f.Extra["globalShortcut"]))

	var got []string
	for _, w := range f.Warnings {
		got = append(got, w.String())
	}
	require.ElementsMatch(t, []string{
		`servers file field "globalShortcut": unknown field, kept`,
		`server "files": not connected: stdio servers (command) are not supported yet`,
		`server "old": not connected: the legacy HTTP+SSE transport ("type": "sse") is not supported`,
		`server "search" field "alwaysAllow": unknown field, kept`,
	}, got)
}

func TestParseServersVSCodeKey(t *testing.T) {
	f, err := hub.ParseServers([]byte(`{"servers": {"a": {"type": "http", "url": "http://127.0.0.1:1/mcp"}}, "inputs": []}`))
	require.NoError(t, err)
	require.Len(t, f.Servers, 1)
	require.Equal(t, "a", f.Servers[0].Name)
}

func TestParseServersErrorsNameThePlace(t *testing.T) {
	for _, tc := range []struct {
		doc, server, field string
	}{
		{`[1]`, "", ""},
		{`{"other": {}}`, "", "mcpServers"},
		{`{"mcpServers": []}`, "", "mcpServers"},
		{`{"mcpServers": {"a": 3}}`, "a", ""},
		{`{"mcpServers": {"a": {"url": 3}}}`, "a", "url"},
		{`{"mcpServers": {"a": {"url": "http://x/mcp", "headers": {"X": 1}}}}`, "a", "headers"},
	} {
		_, err := hub.ParseServers([]byte(tc.doc))
		var ce *hub.ConfigError
		require.ErrorAs(t, err, &ce, tc.doc)
		require.Equal(t, tc.server, ce.Server, tc.doc)
		require.Equal(t, tc.field, ce.Field, tc.doc)
	}
	big := make([]byte, hub.MaxConfigBytes+1)
	_, err := hub.ParseServers(big)
	require.ErrorContains(t, err, "more than")
}
