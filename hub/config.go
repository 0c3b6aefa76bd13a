package hub

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/msgcheck"
	"github.com/mcpsup/mcpsup/stdio"
)

// MaxConfigBytes bounds the servers file ParseServers and LoadServers read.
const MaxConfigBytes = 4 << 20

// ServerConfig is one entry of an mcpServers file: a server the hub
// connects to over streamable HTTP (url), or a stdio server it starts as a
// process (command).
type ServerConfig struct {
	// Name is the server's key in mcpServers: its name in the merged
	// catalog, in events and in the Store.
	Name string
	// URL is the streamable HTTP endpoint ("url").
	URL string
	// Type is the transport as written ("type"): "", "http",
	// "streamable-http" or "streamableHttp" are streamable HTTP; "" or
	// "stdio" with a command is stdio; "sse" (the legacy HTTP+SSE
	// transport) is not supported.
	Type string
	// Headers are sent with every request to this server alone
	// ("headers"). A value may reference environment variables, ${NAME} or
	// VS Code's ${env:NAME}, read by Config.LookupEnv at Add (unset:
	// ErrUnsetVariable). The values, as written and as read, are masked in
	// events, logs and errors, and no stdio server inherits a referenced
	// variable from the hub's environment (its own Env may set it).
	Headers map[string]string
	// Command, Args, Env and Cwd describe a stdio server: the program
	// (looked up in PATH without a slash), its arguments, the variables
	// added to the hub's environment (values masked), its working directory
	// (default the hub's).
	Command string
	Args    []string
	Env     map[string]string
	Cwd     string
	// Disabled: kept but not started (ServersFile.Disabled).
	Disabled bool
	// Extra holds the fields the hub does not know, as written (e.g.
	// "timeout", "alwaysAllow").
	Extra map[string]json.RawMessage
}

// Supported reports whether the hub can connect to the server: a name of
// at most events.MaxNameBytes bytes, and a URL and a streamable HTTP type,
// or a command and no URL (stdio) whose env keys are names (not empty, no
// "=" or NUL; values without NUL). The reason says why not.
func (sc ServerConfig) Supported() (ok bool, reason string) {
	if err := checkNameLength(sc.Name); err != nil {
		return false, err.Error()
	}
	switch {
	case sc.Command != "" && sc.URL != "":
		return false, `both "command" and "url": a server is stdio or streamable HTTP`
	case sc.Command != "" && sc.Type != "" && sc.Type != "stdio":
		return false, fmt.Sprintf(`"command" with type %q: a command is a stdio server`, msgcheck.CutText(sc.Type, 40))
	case sc.Command != "":
		for k, v := range sc.Env {
			// "A=B": "c" would set A to "B=c" (the first "=" ends a key).
			if k == "" || strings.ContainsAny(k, "=\x00") || strings.ContainsRune(v, 0) {
				return false, fmt.Sprintf(`"env" key %q: want a name without "=" or NUL, and a value without NUL`, msgcheck.CutText(k, 40))
			}
		}
		return true, ""
	case sc.Type == "stdio":
		return false, `type "stdio" without a "command"`
	case sc.Type == "sse":
		return false, `the legacy HTTP+SSE transport ("type": "sse") is not supported`
	case sc.Type != "" && sc.Type != "http" && sc.Type != "streamable-http" && sc.Type != "streamableHttp":
		return false, fmt.Sprintf("unknown type %q", msgcheck.CutText(sc.Type, 40))
	case sc.URL == "":
		return false, `no "url"`
	}
	return true, ""
}

// ServersFile is a parsed mcpServers file, as Claude Desktop, Cursor and VS
// Code read it (VS Code's "servers" key when "mcpServers" is absent):
//
//	{"mcpServers": {"search": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer …"}}}}
type ServersFile struct {
	// Servers are the entries the hub can connect to, sorted by name.
	Servers []ServerConfig
	// Unsupported are those it cannot (see Supported), sorted by name.
	Unsupported []ServerConfig
	// Disabled are those marked "disabled": true, sorted by name, not
	// checked further.
	Disabled []ServerConfig
	// Warnings report what was kept but not used: unknown fields,
	// unsupported and disabled entries, repeated names (the last taken).
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

// String names the server and the field each cut to events.MaxNameBytes:
// the file chose them.
func (w Warning) String() string {
	where := "servers file"
	if w.Server != "" {
		where = fmt.Sprintf("server %q", events.CutName(w.Server))
	}
	if w.Field != "" {
		where += fmt.Sprintf(" field %q", events.CutName(w.Field))
	}
	return where + ": " + w.Reason
}

// ConfigError reports a servers file that cannot be read: not a regular
// file (wrapping ErrNotRegularFile), larger than MaxConfigBytes, not JSON,
// or a known field of the wrong type, at Server and Field ("": the whole).
type ConfigError struct {
	Server, Field, Reason string
	Err                   error
}

func (e *ConfigError) Error() string {
	w := Warning{Server: e.Server, Field: e.Field, Reason: e.Reason}
	return "hub: " + w.String()
}

func (e *ConfigError) Unwrap() error { return e.Err }

// LoadServers reads and parses the servers file at path (see ParseServers):
// a *ConfigError wrapping ErrNotRegularFile, refused without waiting on it,
// when it is not a regular file; the os error when it cannot be opened.
func LoadServers(path string) (*ServersFile, error) {
	data, err := readRegular(path, MaxConfigBytes)
	if errors.Is(err, ErrNotRegularFile) {
		return nil, &ConfigError{Reason: err.Error(), Err: err}
	}
	if err != nil {
		return nil, err
	}
	return ParseServers(data)
}

// ParseServers parses an mcpServers file of at most MaxConfigBytes. Unknown
// fields are kept (Extra) and reported (Warnings), unsupported and disabled
// entries set apart; a document that is not JSON, or a known field of the
// wrong type, is a *ConfigError naming the place.
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
		key = "servers" // VS Code's
	}
	raw, ok := top[key]
	if !ok {
		return nil, &ConfigError{Field: "mcpServers", Reason: "missing"}
	}
	for _, k := range repeatedNames(data) {
		out.Warnings = append(out.Warnings, Warning{Field: k, Reason: repeatedReason})
	}
	delete(top, key)
	for k := range top {
		out.Warnings = append(out.Warnings, Warning{Field: k, Reason: "unknown field, kept"})
	}
	if len(top) > 0 {
		out.Extra = top
	}
	var entries map[string]json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil, &ConfigError{Field: key, Reason: "want an object of servers by name", Err: err}
	}
	for _, name := range repeatedNames(raw) {
		out.Warnings = append(out.Warnings, Warning{Server: name, Reason: "repeated server name, the last entry is taken"})
	}
	for _, name := range slices.Sorted(maps.Keys(entries)) {
		sc, warns, err := parseEntry(name, entries[name])
		if err != nil {
			return nil, err
		}
		out.Warnings = append(out.Warnings, warns...)
		if sc.Disabled {
			out.Disabled = append(out.Disabled, sc)
			out.Warnings = append(out.Warnings, Warning{Server: name, Reason: `"disabled": true, not connected`})
		} else if ok, why := sc.Supported(); !ok {
			out.Unsupported = append(out.Unsupported, sc)
			out.Warnings = append(out.Warnings, Warning{Server: name, Reason: "not connected: " + why})
		} else {
			out.Servers = append(out.Servers, sc)
		}
	}
	slices.SortFunc(out.Warnings, func(a, b Warning) int {
		return cmp.Or(strings.Compare(a.Server, b.Server), strings.Compare(a.Field, b.Field))
	})
	return out, nil
}

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
	for _, k := range repeatedNames(body) {
		warns = append(warns, Warning{Server: name, Field: k, Reason: repeatedReason})
	}
	for _, k := range []string{"headers", "env"} {
		for _, n := range repeatedNames(fields[k]) {
			warns = append(warns, Warning{Server: name, Field: k, Reason: strconv.Quote(msgcheck.CutText(n, 64)) + " " + repeatedReason})
		}
	}
	for _, f := range []struct {
		k   string
		dst any
	}{{"url", &sc.URL}, {"type", &sc.Type}, {"headers", &sc.Headers}, {"command", &sc.Command}, {"args", &sc.Args}, {"env", &sc.Env}, {"cwd", &sc.Cwd}, {"disabled", &sc.Disabled}} {
		if v, ok := fields[f.k]; ok {
			delete(fields, f.k)
			if err := json.Unmarshal(v, f.dst); err != nil {
				return sc, nil, &ConfigError{Server: name, Field: f.k, Reason: "wrong type: " + err.Error(), Err: err}
			}
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

func checkNameLength(name string) error {
	if len(name) > events.MaxNameBytes {
		return fmt.Errorf("%w: %d bytes, more than %d", ErrNameTooLong, len(name), events.MaxNameBytes)
	}
	return nil
}

const repeatedReason = "repeated, the last is taken"

// repeatedNames returns the names the JSON object data gives more than
// once, in order of their second use (RFC 8259 section 4 leaves their
// meaning to the parser; encoding/json takes the last silently).
func repeatedNames(data []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	uses := map[string]int{} // linear in the names
	var out []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return out
		}
		name, _ := tok.(string)
		uses[name]++
		if uses[name] == 2 {
			out = append(out, name)
		}
		var skip json.RawMessage // one Decode scans the value whole
		if dec.Decode(&skip) != nil {
			return out
		}
	}
	return out
}

// command is the stdio.Command of a stdio entry on the template's bounds,
// its Env sorted by key; nil for an HTTP entry.
func (sc ServerConfig) command(template *stdio.Command) *stdio.Command {
	if sc.Command == "" {
		return nil
	}
	var c stdio.Command
	if template != nil {
		c = *template
	}
	c.Path, c.Args, c.Dir = sc.Command, slices.Clone(sc.Args), sc.Cwd
	c.Env = nil
	for _, k := range slices.Sorted(maps.Keys(sc.Env)) {
		c.Env = append(c.Env, k+"="+sc.Env[k])
	}
	return &c
}
