package msgcheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// dropInvalidHeaderTools removes from a tools/list result r every tool
// whose inputSchema breaks a constraint on `x-mcp-header` and logs a
// warning naming the tool and the reason (log nil: none); it reports
// whether r.Result changed. streamable-http.mdx, Schema Extension: clients "MUST reject tool
// definitions where any x-mcp-header value violates these constraints.
// Rejection means the client MUST exclude the invalid tool from the result
// of tools/list. Clients SHOULD log a warning when rejecting a tool
// definition, including the tool name and the reason for rejection."
// go-sdk v1.8.0 checks only the annotations reachable through `properties`
// (mcp/streamable_headers.go filterValidTools), so one under `items` or
// `anyOf` kept its tool. A result it cannot read is left to go-sdk.
func dropInvalidHeaderTools(req Request, r *jsonrpc.Response, log *slog.Logger) bool {
	if req.Method != "tools/list" || r.Error != nil || !ModernVersion(req.ProtocolVersion) || !MayHoldHeaderAnnotation(r.Result) {
		return false
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(r.Result, &fields) != nil {
		return false
	}
	var tools []json.RawMessage
	if json.Unmarshal(fields["tools"], &tools) != nil {
		return false
	}
	kept := tools[:0]
	for _, raw := range tools {
		var tool struct {
			Name        string `json:"name"`
			InputSchema any    `json:"inputSchema"`
		}
		if json.Unmarshal(raw, &tool) == nil {
			if err := headerAnnotationsValid(tool.InputSchema); err != nil {
				if log != nil {
					log.Warn("mcpsup/msgcheck: tool excluded from tools/list: invalid x-mcp-header", "tool", tool.Name, "reason", err.Error())
				}
				continue
			}
		}
		kept = append(kept, raw)
	}
	if len(kept) == len(tools) {
		return false
	}
	b, err := json.Marshal(kept)
	if err != nil {
		return false
	}
	fields["tools"] = b
	if b, err = json.Marshal(fields); err != nil {
		return false
	}
	r.Result = b
	return true
}

// MayHoldHeaderAnnotation reports whether result may carry an
// `x-mcp-header` key: written as it is, or with an escape.
func MayHoldHeaderAnnotation(result []byte) bool {
	return bytes.Contains(result, []byte("x-mcp-header")) || bytes.IndexByte(result, '\\') >= 0
}

// headerAnnotationsValid checks every `x-mcp-header` of a tool's
// inputSchema against streamable-http.mdx, Schema Extension: it sits on a
// property statically reachable from the root ("a chain consisting solely
// of properties keys", never through items, oneOf, anyOf, allOf, not,
// if/then/else or $ref); its value is a non-empty HTTP token (RFC 9110
// section 5.1, 1*tchar), case-insensitively unique in the schema; and the
// property's type is integer, string or boolean. "An x-mcp-header
// annotation anywhere else makes the annotation — and thus the tool
// definition — invalid": one in a sub-schema of $defs, patternProperties
// or any other applicator, or in the value of a keyword that is not JSON
// Schema's, is one.
func headerAnnotationsValid(schema any) error {
	seen := map[string]bool{}
	return walkSchema(schema, "", true, false, seen)
}

// The keywords of a schema object (JSON Schema 2020-12, and draft-07's
// definitions, dependencies and additionalItems) by what their value holds.
var (
	// dataKeywords hold instances, not schemas: an `x-mcp-header` key in
	// them is data.
	dataKeywords = map[string]bool{"default": true, "const": true, "enum": true, "examples": true}
	// schemaMapKeywords map names the server chose to schemas: a name is
	// never a keyword, so a sub-schema named "default" is a schema.
	schemaMapKeywords = map[string]bool{"properties": true, "patternProperties": true, "$defs": true,
		"definitions": true, "dependentSchemas": true, "dependencies": true}
	// schemaKeywords hold a schema or an array of schemas.
	schemaKeywords = map[string]bool{"items": true, "prefixItems": true, "additionalItems": true,
		"additionalProperties": true, "unevaluatedItems": true, "unevaluatedProperties": true,
		"propertyNames": true, "contains": true, "not": true, "if": true, "then": true, "else": true,
		"allOf": true, "anyOf": true, "oneOf": true, "contentSchema": true}
)

// walkSchema checks the schema (or array of schemas) node at path: static
// says every step to it was a `properties` key, property that node is a
// property's schema. Only a schema object's own keys are keywords.
func walkSchema(node any, path string, static, property bool, seen map[string]bool) error {
	switch n := node.(type) {
	case []any:
		for i, v := range n {
			if err := walkSchema(v, fmt.Sprintf("%s[%d]", path, i), false, false, seen); err != nil {
				return err
			}
		}
	case map[string]any:
		if h, ok := n["x-mcp-header"]; ok {
			if err := annotationValid(n, h, path, static && property, seen); err != nil {
				return err
			}
		}
		for _, k := range slices.Sorted(maps.Keys(n)) { // one schema, one reason
			var err error
			switch {
			case dataKeywords[k] || k == "x-mcp-header":
			case schemaMapKeywords[k]:
				err = walkNamedSchemas(n[k], joinPath(path, k), static && k == "properties", k == "properties", seen)
			case schemaKeywords[k]:
				err = walkSchema(n[k], joinPath(path, k), false, false, seen)
			default:
				err = walkOther(n[k], joinPath(path, k), seen)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// walkNamedSchemas checks each schema of a map of named schemas at path,
// the value of a schemaMapKeywords keyword; static and property as for
// walkSchema, of its members.
func walkNamedSchemas(node any, path string, static, property bool, seen map[string]bool) error {
	named, _ := node.(map[string]any)
	for _, name := range slices.Sorted(maps.Keys(named)) {
		if err := walkSchema(named[name], joinPath(path, name), static, property, seen); err != nil {
			return err
		}
	}
	return nil
}

// walkOther checks the value of a keyword that holds no schema, or one
// that is not JSON Schema's: no step in it is a properties key, so an
// `x-mcp-header` key at any depth is an annotation not statically
// reachable.
func walkOther(node any, path string, seen map[string]bool) error {
	switch n := node.(type) {
	case []any:
		for i, v := range n {
			if err := walkOther(v, fmt.Sprintf("%s[%d]", path, i), seen); err != nil {
				return err
			}
		}
	case map[string]any:
		if h, ok := n["x-mcp-header"]; ok {
			return annotationValid(n, h, path, false, seen)
		}
		for _, k := range slices.Sorted(maps.Keys(n)) {
			if err := walkOther(n[k], joinPath(path, k), seen); err != nil {
				return err
			}
		}
	}
	return nil
}

func joinPath(path string, steps ...string) string {
	for _, s := range steps {
		if path != "" {
			path += "/"
		}
		path += s
	}
	return path
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
	for i := 0; i < len(name); i++ {
		if !tchar(name[i]) {
			return fmt.Errorf("x-mcp-header %.64q at %.128q is not an HTTP token (RFC 9110 section 5.1)", name, at)
		}
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

// tchar reports an HTTP token character (RFC 9110 section 5.6.2).
func tchar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}
