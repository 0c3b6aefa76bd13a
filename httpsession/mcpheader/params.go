package mcpheader

import (
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"sync"

	"github.com/mcpsup/mcpsup/msgcheck"
)

const paramHeaderPrefix = "Mcp-Param-"

// maxSafeInteger bounds an integer argument carried in a header: one a
// float64 holds exactly (streamable-http.mdx, Value Encoding).
const maxSafeInteger = 1<<53 - 1

// paramBinding is one annotated property: its path from the arguments'
// root and its header's name.
type paramBinding struct {
	path   []string
	header string
}

// Params gives a tools/call its Mcp-Param-<Name> headers, one for each
// argument annotated `x-mcp-header: <Name>` in the tool's input schema, from
// the tools/list results it was handed (go-sdk's own map is behind a
// context key). It keeps only tools with a binding. The zero value is
// ready; safe for concurrent use.
type Params struct {
	mu    sync.Mutex
	tools map[string][]paramBinding
}

// NoteTools takes the bindings of the tools of a tools/list result; a
// tool listed without one loses those it had.
func (p *Params) NoteTools(result json.RawMessage) {
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

// schemaProperty is what a binding is read from.
type schemaProperty struct {
	XMCPHeader string                    `json:"x-mcp-header"`
	Properties map[string]schemaProperty `json:"properties"`
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
func (p *Params) Set(h http.Header, tool string, params json.RawMessage) {
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
		if s, ok := headerValue(v); ok {
			h.Set(paramHeaderPrefix+b.header, s)
		}
	}
}

// headerValue renders a primitive argument as its header value, in the
// Base64 sentinel form when it needs it (streamable-http.mdx, Value
// Encoding).
func headerValue(v any) (string, bool) {
	var s string
	switch v := v.(type) {
	case string:
		s = v
	case bool:
		s = strconv.FormatBool(v)
	case float64:
		if v != math.Trunc(v) || math.Abs(v) > maxSafeInteger {
			return "", false
		}
		s = strconv.FormatInt(int64(v), 10)
	default:
		return "", false
	}
	return Value(s), true
}
