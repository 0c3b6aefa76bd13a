package hub

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// MaxConfigBytes bounds the servers file ParseServers and LoadServers read.
const MaxConfigBytes = 4 << 20

// ServerConfig is one entry of an mcpServers file: a server the hub
// connects to over streamable HTTP.
type ServerConfig struct {
	// Name is the server's name in the hub: its key in mcpServers. It
	// prefixes the server's items in the merged catalog and names the
	// server in events (events.Event.Server) and in the Store.
	Name string
	// URL is the streamable HTTP endpoint ("url").
	URL string
	// Type is the transport as written ("type"): "", "http",
	// "streamable-http" or "streamableHttp" are streamable HTTP; "sse"
	// (the legacy HTTP+SSE transport) and "stdio" are not supported yet.
	Type string
	// Headers are sent with every request to the server ("headers"). Their
	// values are treated as credentials: the hub masks them in events, logs
	// and its errors.
	Headers map[string]string
	// Command, Args and Env describe a stdio server ("command", "args",
	// "env"); the hub reports such an entry as unsupported.
	Command string
	Args    []string
	Env     map[string]string
	// Extra holds the fields the hub does not know, as written, for the host
	// that does (e.g. "disabled", "timeout", "alwaysAllow").
	Extra map[string]json.RawMessage
}

// Supported reports whether the hub can connect to the server: a URL and a
// streamable HTTP type, no command. The reason says why not.
func (sc ServerConfig) Supported() (ok bool, reason string) {
	switch {
	case sc.Command != "" || sc.Type == "stdio":
		return false, "stdio servers (command) are not supported yet"
	case sc.Type == "sse":
		return false, `the legacy HTTP+SSE transport ("type": "sse") is not supported`
	case sc.Type != "" && sc.Type != "http" && sc.Type != "streamable-http" && sc.Type != "streamableHttp":
		return false, fmt.Sprintf("unknown type %q", cutText(sc.Type, 40))
	case sc.URL == "":
		return false, `no "url"`
	}
	return true, ""
}

// ServersFile is a parsed mcpServers file, the JSON that Claude Desktop,
// Cursor and VS Code read:
//
//	{"mcpServers": {"search": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer …"}}}}
//
// (VS Code's "servers" key is read the same way when "mcpServers" is absent).
type ServersFile struct {
	// Servers are the entries the hub can connect to, sorted by name.
	Servers []ServerConfig
	// Unsupported are the entries it cannot (stdio, legacy SSE, no URL),
	// sorted by name; Warnings say why.
	Unsupported []ServerConfig
	// Warnings report what was kept but not understood: unknown fields and
	// unsupported entries. None is fatal.
	Warnings []Warning
	// Extra holds the unknown top-level fields, as written.
	Extra map[string]json.RawMessage
}

// Warning is one thing of a servers file the hub did not use.
type Warning struct {
	Server string // "" for a top-level field
	Field  string // the JSON field, "" for the whole entry
	Reason string
}

func (w Warning) String() string {
	where := "servers file"
	if w.Server != "" {
		where = fmt.Sprintf("server %q", w.Server)
	}
	if w.Field != "" {
		where += fmt.Sprintf(" field %q", w.Field)
	}
	return where + ": " + w.Reason
}

// ConfigError reports a servers file that cannot be read: not JSON, or a
// known field of the wrong type. Server and Field name the place ("" when
// the document as a whole is wrong).
type ConfigError struct {
	Server, Field, Reason string
	Err                   error
}

func (e *ConfigError) Error() string {
	w := Warning{Server: e.Server, Field: e.Field, Reason: e.Reason}
	return "hub: " + w.String()
}

func (e *ConfigError) Unwrap() error { return e.Err }

// LoadServers reads and parses the servers file at path (see ParseServers).
func LoadServers(path string) (*ServersFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxConfigBytes+1))
	if err != nil {
		return nil, err
	}
	return ParseServers(data)
}

// ParseServers parses an mcpServers file of at most MaxConfigBytes. Unknown
// fields are kept (Extra) and reported (Warnings), unsupported entries are
// set apart (Unsupported); a document that is not JSON, or a known field of
// the wrong type, is a *ConfigError naming the place.
func ParseServers(data []byte) (*ServersFile, error) {
	if len(data) > MaxConfigBytes {
		return nil, &ConfigError{Reason: fmt.Sprintf("more than %d bytes", MaxConfigBytes)}
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, &ConfigError{Reason: "not a JSON object: " + err.Error(), Err: err}
	}
	out := &ServersFile{}
	key := "mcpServers"
	if _, ok := top[key]; !ok {
		if _, ok := top["servers"]; ok {
			key = "servers"
		}
	}
	raw, ok := top[key]
	if !ok {
		return nil, &ConfigError{Field: "mcpServers", Reason: "missing"}
	}
	for k, v := range top {
		if k == key {
			continue
		}
		if out.Extra == nil {
			out.Extra = map[string]json.RawMessage{}
		}
		out.Extra[k] = v
		out.Warnings = append(out.Warnings, Warning{Field: k, Reason: "unknown field, kept"})
	}
	var entries map[string]json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil, &ConfigError{Field: key, Reason: "want an object of servers by name", Err: err}
	}
	for name, body := range entries {
		sc, warns, err := parseEntry(name, body)
		if err != nil {
			return nil, err
		}
		out.Warnings = append(out.Warnings, warns...)
		if ok, why := sc.Supported(); !ok {
			out.Unsupported = append(out.Unsupported, sc)
			out.Warnings = append(out.Warnings, Warning{Server: name, Reason: "not connected: " + why})
			continue
		}
		out.Servers = append(out.Servers, sc)
	}
	byName := func(a, b ServerConfig) int { return strings.Compare(a.Name, b.Name) }
	slices.SortFunc(out.Servers, byName)
	slices.SortFunc(out.Unsupported, byName)
	slices.SortFunc(out.Warnings, func(a, b Warning) int {
		if c := strings.Compare(a.Server, b.Server); c != 0 {
			return c
		}
		return strings.Compare(a.Field, b.Field)
	})
	return out, nil
}

// parseEntry parses one server entry.
func parseEntry(name string, body json.RawMessage) (ServerConfig, []Warning, error) {
	sc := ServerConfig{Name: name}
	if name == "" {
		return sc, nil, &ConfigError{Field: "mcpServers", Reason: "a server with an empty name"}
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		return sc, nil, &ConfigError{Server: name, Reason: "want an object", Err: err}
	}
	var warns []Warning
	field := func(k string, dst any) error {
		v, ok := fields[k]
		if !ok {
			return nil
		}
		delete(fields, k)
		if err := json.Unmarshal(v, dst); err != nil {
			return &ConfigError{Server: name, Field: k, Reason: "wrong type: " + err.Error(), Err: err}
		}
		return nil
	}
	for _, f := range []struct {
		k   string
		dst any
	}{{"url", &sc.URL}, {"type", &sc.Type}, {"headers", &sc.Headers}, {"command", &sc.Command}, {"args", &sc.Args}, {"env", &sc.Env}} {
		if err := field(f.k, f.dst); err != nil {
			return sc, nil, err
		}
	}
	for k := range fields {
		warns = append(warns, Warning{Server: name, Field: k, Reason: "unknown field, kept"})
	}
	if len(fields) > 0 {
		sc.Extra = fields
	}
	return sc, warns, nil
}

// cutText shortens untrusted text quoted in an error.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
