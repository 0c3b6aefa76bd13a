package httpsession

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/mcpsup/mcpsup/msgcheck"
)

// The 2026-07-28 request headers taken from params (streamable-http.mdx,
// "Standard Request Headers", "Custom Headers from Tool Parameters").
const (
	headerName        = "Mcp-Name" // a tools/call's tool, a prompts/get's prompt, a resources/read's URI
	paramHeaderPrefix = "Mcp-Param-"
	// maxSafeInteger bounds an integer argument carried in a header: one a
	// float64 holds exactly (Value Encoding).
	maxSafeInteger = 1<<53 - 1
	// The Base64 sentinel of a header value (Value Encoding).
	sentinelPrefix, sentinelSuffix = "=?base64?", "?="
)

// paramHeaders gives a tools/call its Mcp-Param-<Name> headers, one for each
// argument annotated `x-mcp-header: <Name>` in the tool's input schema, from
// the tools/list results it was handed (go-sdk's own map is behind a context
// key). The zero value is ready; safe for concurrent use.
type paramHeaders struct {
	mu    sync.Mutex
	tools map[string][]paramBinding // only tools with a binding
}

// paramBinding is one annotated property: its path from the arguments' root
// and its header's name.
type paramBinding struct {
	path   []string
	header string
}

// schemaProperty is what a binding is read from.
type schemaProperty struct {
	XMCPHeader string                    `json:"x-mcp-header"`
	Properties map[string]schemaProperty `json:"properties"`
}

// NoteTools takes the bindings of the tools of a tools/list result; a tool
// listed without one loses those it had.
func (p *paramHeaders) NoteTools(result json.RawMessage) {
	if !msgcheck.MayHoldHeaderAnnotation(result) {
		return
	}
	var res struct {
		Tools []struct {
			Name        string         `json:"name"`
			InputSchema schemaProperty `json:"inputSchema"`
		} `json:"tools"`
	}
	if json.Unmarshal(result, &res) != nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, tool := range res.Tools {
		b := collectBindings(tool.InputSchema.Properties, nil, nil)
		if len(b) == 0 {
			delete(p.tools, tool.Name)
			continue
		}
		if p.tools == nil {
			p.tools = map[string][]paramBinding{}
		}
		p.tools[tool.Name] = b
	}
}

func collectBindings(props map[string]schemaProperty, prefix []string, out []paramBinding) []paramBinding {
	for name, prop := range props {
		path := append(append([]string(nil), prefix...), name)
		if prop.XMCPHeader != "" {
			out = append(out, paramBinding{path: path, header: prop.XMCPHeader})
		}
		out = collectBindings(prop.Properties, path, out)
	}
	return out
}

// Set gives a tools/call of tool with params its Mcp-Param-* headers: an
// argument that is absent, null, or no string, boolean or integer within
// 2^53-1 gets none.
func (p *paramHeaders) Set(h http.Header, tool string, params json.RawMessage) {
	p.mu.Lock()
	bindings := p.tools[tool]
	p.mu.Unlock()
	if len(bindings) == 0 {
		return
	}
	var call struct {
		Arguments map[string]any `json:"arguments"`
	}
	if json.Unmarshal(params, &call) != nil {
		return
	}
	for _, b := range bindings {
		var v any = call.Arguments
		for _, step := range b.path {
			obj, _ := v.(map[string]any)
			v = obj[step]
		}
		var s string
		switch v := v.(type) {
		case string:
			s = v
		case bool:
			s = strconv.FormatBool(v)
		case float64:
			if v != math.Trunc(v) || math.Abs(v) > maxSafeInteger {
				continue
			}
			s = strconv.FormatInt(int64(v), 10)
		default:
			continue
		}
		h.Set(paramHeaderPrefix+b.header, headerValue(s))
	}
}

// headerValue is v as a header value, in the Base64 sentinel form
// ("=?base64?...?=") when it needs it (Value Encoding: clients "MUST
// encode it using the Base64 sentinel format").
func headerValue(v string) string {
	if needsBase64(v) {
		return sentinelPrefix + base64.StdEncoding.EncodeToString([]byte(v)) + sentinelSuffix
	}
	return v
}

// needsBase64 reports whether v has white space at either end, a byte
// outside visible ASCII, space and tab (RFC 9110 section 5.5), or the
// sentinel's own form.
func needsBase64(v string) bool {
	if v != strings.TrimSpace(v) || (strings.HasPrefix(v, sentinelPrefix) && strings.HasSuffix(v, sentinelSuffix)) {
		return true
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c != '\t' && (c < 0x20 || c > 0x7e) {
			return true
		}
	}
	return false
}
