package msgcheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// dropInvalidHeaderTools removes from a tools/list result every tool whose
// inputSchema breaks an `x-mcp-header` constraint, with a warning, and
// reports whether r.Result changed (streamable-http.mdx, Schema Extension:
// clients "MUST exclude the invalid tool from the result of tools/list" and
// "SHOULD log a warning"). go-sdk v1.8.0 checks only annotations under
// `properties` (mcp/streamable_headers.go filterValidTools).
func dropInvalidHeaderTools(req Request, r *jsonrpc.Response, log *slog.Logger) bool {
	if req.Method != "tools/list" || !ModernVersion(req.ProtocolVersion) || !MayHoldHeaderAnnotation(r.Result) {
		return false
	}
	return editResult(r, func(fields map[string]json.RawMessage) bool {
		var tools []json.RawMessage
		if json.Unmarshal(fields["tools"], &tools) != nil {
			return false
		}
		kept := slices.DeleteFunc(slices.Clone(tools), func(raw json.RawMessage) bool {
			var tool struct {
				Name        string `json:"name"`
				InputSchema any    `json:"inputSchema"`
			}
			if json.Unmarshal(raw, &tool) != nil {
				return false
			}
			err := headerAnnotationsValid(tool.InputSchema)
			if err != nil && log != nil {
				log.Warn("mcpsup/msgcheck: tool excluded from tools/list: invalid x-mcp-header", "tool", tool.Name, "reason", err.Error())
			}
			return err != nil
		})
		if len(kept) == len(tools) {
			return false
		}
		b, err := json.Marshal(kept)
		fields["tools"] = b
		return err == nil
	})
}

// MayHoldHeaderAnnotation reports whether result may carry an
// `x-mcp-header` key, plainly or escaped.
func MayHoldHeaderAnnotation(result []byte) bool { return mayHold(result, "x-mcp-header") }

// mayHold reports whether result may carry one of keys, plainly or escaped.
func mayHold(result []byte, keys ...string) bool {
	for _, k := range keys {
		if bytes.Contains(result, []byte(k)) {
			return true
		}
	}
	return bytes.IndexByte(result, '\\') >= 0
}

// headerAnnotationsValid checks every `x-mcp-header` of a tool's inputSchema
// (streamable-http.mdx, Schema Extension): on a property reached by "a chain
// consisting solely of properties keys" from the root, a non-empty HTTP token
// (RFC 9110 section 5.1) unique case-insensitively, on a property of type
// integer, string or boolean. "An x-mcp-header annotation anywhere else
// makes the annotation — and thus the tool definition — invalid".
func headerAnnotationsValid(schema any) error {
	return walkSchema(schema, "", true, false, true, map[string]bool{})
}

// The keywords of a schema object (JSON Schema 2020-12, and draft-07's
// definitions, dependencies and additionalItems) by what their value holds.
var (
	// dataKeywords hold instances: an `x-mcp-header` key in them is data.
	dataKeywords = map[string]bool{"default": true, "const": true, "enum": true, "examples": true}
	// schemaMapKeywords map names to schemas; a name is never a keyword.
	schemaMapKeywords = map[string]bool{"properties": true, "patternProperties": true, "$defs": true,
		"definitions": true, "dependentSchemas": true, "dependencies": true}
	// schemaKeywords hold a schema or an array of schemas.
	schemaKeywords = map[string]bool{"items": true, "prefixItems": true, "additionalItems": true,
		"additionalProperties": true, "unevaluatedItems": true, "unevaluatedProperties": true,
		"propertyNames": true, "contains": true, "not": true, "if": true, "then": true, "else": true,
		"allOf": true, "anyOf": true, "oneOf": true, "contentSchema": true}
)

// walkSchema checks node, a schema or an array of them when schema is set,
// else a keyword value that holds no schema (an `x-mcp-header` key at any
// depth in it is not statically reachable); static says every step to it
// was a `properties` key, property that it is a property's schema. Only a
// schema object's own keys are keywords.
func walkSchema(node any, path string, static, property, schema bool, seen map[string]bool) error {
	switch n := node.(type) {
	case []any:
		for i, v := range n {
			if err := walkSchema(v, fmt.Sprintf("%s[%d]", path, i), false, false, schema, seen); err != nil {
				return err
			}
		}
	case map[string]any:
		if h, ok := n["x-mcp-header"]; ok {
			if err := annotationValid(n, h, path, schema && static && property, seen); err != nil {
				return err
			}
		}
		for _, k := range slices.Sorted(maps.Keys(n)) { // one schema, one reason
			var err error
			switch p := joinPath(path, k); {
			case schema && (dataKeywords[k] || k == "x-mcp-header"):
			case !schema || !schemaMapKeywords[k] && !schemaKeywords[k]:
				err = walkSchema(n[k], p, false, false, false, seen)
			case schemaMapKeywords[k]:
				named, _ := n[k].(map[string]any)
				for _, name := range slices.Sorted(maps.Keys(named)) {
					if err = walkSchema(named[name], joinPath(p, name), static && k == "properties", k == "properties", true, seen); err != nil {
						break
					}
				}
			case schemaKeywords[k]:
				err = walkSchema(n[k], p, false, false, true, seen)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

func joinPath(path, step string) string {
	if path == "" {
		return step
	}
	return path + "/" + step
}

// annotationValid checks one `x-mcp-header` value h on the schema n at
// path; reachable says path is a chain of properties keys.
func annotationValid(n map[string]any, h any, path string, reachable bool, seen map[string]bool) error {
	at := "/" + path
	if !reachable {
		return fmt.Errorf("x-mcp-header at %.128q is not statically reachable (a chain of properties keys from the root)", at)
	}
	name, _ := h.(string)
	if name == "" {
		return fmt.Errorf("x-mcp-header at %.128q is not a non-empty string", at)
	}
	if !httpToken.MatchString(name) {
		return fmt.Errorf("x-mcp-header %.64q at %.128q is not an HTTP token (RFC 9110 section 5.1)", name, at)
	}
	low := strings.ToLower(name)
	if seen[low] {
		return fmt.Errorf("x-mcp-header %.64q at %.128q repeats another (case-insensitively)", name, at)
	}
	seen[low] = true
	switch t, _ := n["type"].(string); t {
	case "integer", "string", "boolean":
		return nil
	default:
		return fmt.Errorf("x-mcp-header %.64q at %.128q is on a property of type %.32q, not integer, string or boolean", name, at, fmt.Sprint(n["type"]))
	}
}

// httpToken matches an HTTP token: one or more tchar (RFC 9110 section
// 5.6.2).
var httpToken = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
