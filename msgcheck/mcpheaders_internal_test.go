package msgcheck

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// The x-mcp-header constraints of streamable-http.mdx, Schema Extension,
// one by one: the reason names what is wrong and where.
func TestHeaderAnnotationsValid(t *testing.T) {
	for _, c := range []struct{ schema, err string }{
		{`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A"},"b":{"type":"object","properties":{"c":{"type":"integer","x-mcp-header":"C"}}}}}`, ""},
		{`{"type":"object","properties":{"a":{"type":"string","default":{"x-mcp-header":"data"}}}}`, ""},
		{`{"type":"object","properties":{"l":{"type":"array","items":{"type":"string","x-mcp-header":"I"}}}}`,
			`x-mcp-header at "/properties/l/items" is not statically reachable (a chain of properties keys from the root)`},
		{`{"type":"object","properties":{"u":{"oneOf":[{"type":"string","x-mcp-header":"U"}]}}}`,
			`x-mcp-header at "/properties/u/oneOf[0]" is not statically reachable (a chain of properties keys from the root)`},
		{`{"$defs":{"d":{"type":"string","x-mcp-header":"D"}}}`,
			`x-mcp-header at "/$defs/d" is not statically reachable (a chain of properties keys from the root)`},
		{`{"type":"object","properties":{"n":{"type":"number","x-mcp-header":"N"}}}`,
			`x-mcp-header "N" at "/properties/n" is on a property of type "number", not integer, string or boolean`},
		{`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"X"},"b":{"type":"string","x-mcp-header":"x"}}}`,
			`x-mcp-header "x" at "/properties/b" repeats another (case-insensitively)`},
		{`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A B"}}}`,
			`x-mcp-header "A B" at "/properties/a" is not an HTTP token (RFC 9110 section 5.1)`},
		{`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":""}}}`,
			`x-mcp-header at "/properties/a" is not a non-empty string`},
	} {
		var schema any
		require.NoError(t, json.Unmarshal([]byte(c.schema), &schema))
		err := headerAnnotationsValid(schema)
		if c.err == "" {
			require.NoError(t, err, c.schema)
		} else {
			require.EqualError(t, err, c.err, c.schema)
		}
	}
}

// streamable-http.mdx, Schema Extension: "An x-mcp-header annotation
// anywhere else makes the annotation — and thus the tool definition —
// invalid". default, const, enum and examples hold data only as a schema
// object's own keywords: as the name of a sub-schema under $defs,
// definitions, patternProperties or dependentSchemas they name a schema,
// whose annotation is not statically reachable. The walk skipped them by
// name wherever they stood, so these tools were kept.
func TestHeaderAnnotationInASubschemaNamedLikeData(t *testing.T) {
	unreachable := func(at string) string {
		return `x-mcp-header at "` + at + `" is not statically reachable (a chain of properties keys from the root)`
	}
	for _, c := range []struct{ schema, err string }{
		{`{"type":"object","$defs":{"default":{"type":"string","x-mcp-header":"H"}}}`, unreachable("/$defs/default")},
		{`{"type":"object","definitions":{"enum":{"type":"string","x-mcp-header":"H"}}}`, unreachable("/definitions/enum")},
		{`{"type":"object","patternProperties":{"const":{"type":"string","x-mcp-header":"H"}}}`, unreachable("/patternProperties/const")},
		{`{"type":"object","dependentSchemas":{"examples":{"type":"string","x-mcp-header":"H"}}}`, unreachable("/dependentSchemas/examples")},
		{`{"type":"object","properties":{"a":{"$defs":{"default":{"type":"string","x-mcp-header":"H"}}}}}`, unreachable("/properties/a/$defs/default")},
		// Not JSON Schema's keyword: nothing in its value is a keyword,
		// so nothing there is data.
		{`{"type":"object","x-vendor":{"default":{"type":"string","x-mcp-header":"H"}}}`, unreachable("/x-vendor/default")},
		// A property named "default" is a property.
		{`{"type":"object","properties":{"default":{"type":"string","x-mcp-header":"D"}}}`, ""},
		// A keyword's own value stays data, and a sub-schema's name is
		// never an annotation.
		{`{"type":"object","properties":{"a":{"type":"string","enum":[{"x-mcp-header":"data"}]}}}`, ""},
		{`{"type":"object","$defs":{"x-mcp-header":{"type":"string"}}}`, ""},
	} {
		var schema any
		require.NoError(t, json.Unmarshal([]byte(c.schema), &schema))
		err := headerAnnotationsValid(schema)
		if c.err == "" {
			require.NoError(t, err, c.schema)
		} else {
			require.EqualError(t, err, c.err, c.schema)
		}
	}
}
