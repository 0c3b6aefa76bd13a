package hub_test

import (
	"fmt"
	"slices"
	"strings"
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
	require.Len(t, f.Servers, 3)
	files := f.Servers[0]
	require.Equal(t, "files", files.Name)
	require.Equal(t, "npx", files.Command)
	require.Equal(t, []string{"-y", "@modelcontextprotocol/server-filesystem"}, files.Args)
	require.Equal(t, map[string]string{"A": "b"}, files.Env)
	require.Equal(t, "plain", f.Servers[1].Name)
	s := f.Servers[2]
	require.Equal(t, "search", s.Name)
	require.Equal(t, "https://example.com/mcp", s.URL)
	require.Equal(t, map[string]string{"Authorization": "Bearer t0k"}, s.Headers)
	require.JSONEq(t, `["find"]`, string(s.Extra["alwaysAllow"]))

	require.Len(t, f.Unsupported, 1)
	require.Equal(t, "old", f.Unsupported[0].Name)
	require.JSONEq(t, `"Ctrl+Space"`, string(f.Extra["globalShortcut"]))

	var got []string
	for _, w := range f.Warnings {
		got = append(got, w.String())
	}
	require.ElementsMatch(t, []string{
		`servers file field "globalShortcut": unknown field, kept`,
		`server "old": not connected: the legacy HTTP+SSE transport ("type": "sse") is not supported`,
		`server "search" field "alwaysAllow": unknown field, kept`,
	}, got)
}

// TestStdioEntries: a command is a stdio server with its args, env and
// cwd; with a url, or another type, it is refused; type stdio needs a
// command.
func TestStdioEntries(t *testing.T) {
	f, err := hub.ParseServers([]byte(`{"mcpServers": {
	  "local": {"type": "stdio", "command": "/usr/bin/srv", "args": ["-v"], "env": {"TOKEN": "s3cret"}, "cwd": "/tmp"},
	  "both":  {"command": "srv", "url": "http://127.0.0.1:1/mcp"},
	  "typed": {"command": "srv", "type": "http"},
	  "bare":  {"type": "stdio"},
	  "eq":    {"command": "srv", "env": {"A=B": "c"}},
	  "empty": {"command": "srv", "env": {"": "c"}}
	}}`))
	require.NoError(t, err)
	require.Len(t, f.Servers, 1)
	l := f.Servers[0]
	require.Equal(t, "local", l.Name)
	require.Equal(t, "/tmp", l.Cwd)
	require.Empty(t, f.Servers[0].Extra, "cwd is a known field")
	var why []string
	for _, sc := range f.Unsupported {
		ok, reason := sc.Supported()
		require.False(t, ok)
		why = append(why, sc.Name+": "+reason)
	}
	require.Equal(t, []string{
		`bare: type "stdio" without a "command"`,
		`both: both "command" and "url": a server is stdio or streamable HTTP`,
		`empty: "env" key "": want a name without "=" or NUL, and a value without NUL`,
		`eq: "env" key "A=B": want a name without "=" or NUL, and a value without NUL`,
		`typed: "command" with type "http": a command is a stdio server`,
	}, why)
}

func TestParseServersVSCodeKey(t *testing.T) {
	f, err := hub.ParseServers([]byte(`{"servers": {"a": {"type": "http", "url": "http://127.0.0.1:1/mcp"}}, "inputs": []}`))
	require.NoError(t, err)
	require.Len(t, f.Servers, 1)
	require.Equal(t, "a", f.Servers[0].Name)
}

// An entry marked "disabled": true, as Claude Desktop and Cursor write
// one, is set apart with a warning, not connected; "disabled": false is a
// server like any other, and a disabled entry of the wrong type is an error.
func TestParseServersSetsDisabledEntriesApart(t *testing.T) {
	f, err := hub.ParseServers([]byte(`{"mcpServers": {
		"on": {"url": "http://127.0.0.1:1/mcp", "disabled": false},
		"off": {"command": "srv", "disabled": true},
		"off-sse": {"url": "http://127.0.0.1:1/sse", "type": "sse", "disabled": true}}}`))
	require.NoError(t, err)
	require.Len(t, f.Servers, 1)
	require.Equal(t, "on", f.Servers[0].Name)
	require.Empty(t, f.Unsupported)
	require.Len(t, f.Disabled, 2)
	require.Equal(t, []string{"off", "off-sse"}, []string{f.Disabled[0].Name, f.Disabled[1].Name})
	require.Equal(t, []hub.Warning{
		{Server: "off", Reason: `"disabled": true, not connected`},
		{Server: "off-sse", Reason: `"disabled": true, not connected`},
	}, f.Warnings)

	_, err = hub.ParseServers([]byte(`{"mcpServers": {"x": {"url": "http://127.0.0.1:1/mcp", "disabled": "yes"}}}`))
	var ce *hub.ConfigError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, "disabled", ce.Field)
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

// JSON names should be unique (RFC 8259, section 4), and a servers file
// that repeats one means what its parser makes of it: the last one here,
// as JavaScript's JSON.parse takes it, but without a word, so a file that
// names a server twice had its first entry dropped (its headers, its URL)
// and nobody told. A repeated server name, field, header or env variable is
// a warning naming it; the last is taken.
func TestParseServersWarnsOfRepeatedNames(t *testing.T) {
	f, err := hub.ParseServers([]byte(`{
	  "mcpServers": {
	    "search": {"url": "https://a.example/mcp"},
	    "search": {"url": "https://b.example/mcp", "url": "https://c.example/mcp",
	               "headers": {"Authorization": "Bearer one", "Authorization": "Bearer two"}},
	    "files":  {"command": "npx", "env": {"A": "1", "A": "2"}}
	  },
	  "mcpServers": {
	    "search": {"url": "https://b.example/mcp", "url": "https://c.example/mcp",
	               "headers": {"Authorization": "Bearer one", "Authorization": "Bearer two"}},
	    "files":  {"command": "npx", "env": {"A": "1", "A": "2"}}
	  }
	}`))
	require.NoError(t, err)
	require.Len(t, f.Servers, 2)
	require.Equal(t, "https://c.example/mcp", f.Servers[1].URL, "the last is taken")
	require.Equal(t, "Bearer two", f.Servers[1].Headers["Authorization"])
	require.Equal(t, "2", f.Servers[0].Env["A"])
	var got []string
	for _, w := range f.Warnings {
		got = append(got, w.String())
	}
	require.ElementsMatch(t, []string{
		`servers file field "mcpServers": repeated, the last is taken`,
		`server "files" field "env": "A" repeated, the last is taken`,
		`server "search" field "headers": "Authorization" repeated, the last is taken`,
		`server "search" field "url": repeated, the last is taken`,
	}, got)

	f, err = hub.ParseServers([]byte(`{"mcpServers": {"a": {"url": "http://x/1"}, "a": {"url": "http://x/2"}}}`))
	require.NoError(t, err)
	require.Len(t, f.Servers, 1)
	require.Equal(t, []hub.Warning{{Server: "a", Reason: "repeated server name, the last entry is taken"}}, f.Warnings)
}

// A file whose objects give many names again and again (a server name, a
// header name, a top-level field) took a time growing with the square of
// their count to parse: each repeated name was looked for among those
// found before. Each repeated name is still one warning, however often it
// is given, and the last value is taken; BenchmarkLoadServers shows the
// parse of such files at the size bound linear in their size.
func TestParseServersWithManyRepeatedNames(t *testing.T) {
	const n = 5000
	var b strings.Builder
	b.WriteString(`{"mcpServers": {`)
	for i := range n {
		fmt.Fprintf(&b, `"s%d": {}, "s%d": {}, "s%d": {"url": "http://127.0.0.1:1/%d"}, `, i, i, i, i)
	}
	b.WriteString(`"h": {"url": "http://127.0.0.1:1/h", "headers": {`)
	for i := range n {
		fmt.Fprintf(&b, `"X-H%d": "a", "X-H%d": "b", `, i, i)
	}
	b.WriteString(`"X-Last": "c"}}}, `)
	for i := range n {
		fmt.Fprintf(&b, `"f%d": 1, "f%d": 2, `, i, i)
	}
	b.WriteString(`"last": 3}`)
	f, err := hub.ParseServers([]byte(b.String()))
	require.NoError(t, err)
	require.Len(t, f.Servers, n+1)
	require.Equal(t, "http://127.0.0.1:1/7", f.Servers[slices.IndexFunc(f.Servers, func(sc hub.ServerConfig) bool { return sc.Name == "s7" })].URL, "the last is taken")
	require.Len(t, f.Servers[0].Headers, n+1)
	require.Equal(t, "b", f.Servers[0].Headers["X-H7"])
	require.Len(t, f.Extra, n+1)
	kinds := map[string]int{}
	seen := map[string]bool{}
	for _, w := range f.Warnings {
		s := w.String()
		require.False(t, seen[s], "warned once: %s", s)
		seen[s] = true
		switch {
		case w.Reason == "repeated server name, the last entry is taken":
			kinds["server"]++
		case w.Server == "h" && w.Field == "headers":
			kinds["header"]++
		case w.Server == "" && w.Reason == "repeated, the last is taken":
			kinds["field"]++
		}
	}
	require.Equal(t, map[string]int{"server": n, "header": n, "field": n}, kinds)
}
