package msgcheck

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// maxArrayItems counts the elements of the array under the key, at the
// top level only, as a decoder reads the key (escapes undone; every
// duplicate), strings holding brackets and commas included, and stops
// past the limit.
func TestMaxArrayItemsCountsWhatGoSDKDecodes(t *testing.T) {
	items := func(n int) string { return "[" + strings.TrimSuffix(strings.Repeat(`{"a":[1,2]},`, n), ",") + "]" }
	for _, c := range []struct {
		obj  string
		want int
	}{
		{`{}`, 0},
		{`{"tools":[]}`, 0},
		{`{"tools":[ ]}`, 0},
		{`{"tools":` + items(1) + `}`, 1},
		{`{"tools":` + items(3) + `}`, 3},
		{`{"tools" : [1, "a,b]", null, [3,4], {"x":","}]}`, 5},
		{`{"nextCursor":"x","tools":` + items(4) + `,"ttlMs":5}`, 4},
		{`{"\u0074ools":` + items(4) + `}`, 4},
		{`{"tools":` + items(2) + `,"tools":` + items(5) + `,"tools":[]}`, 5},
		{`{"x":{"tools":` + items(7) + `},"tools":` + items(1) + `}`, 1},
		{`{"x":"tools","y":` + items(7) + `}`, 0},
		{`{"Tools":` + items(7) + `}`, 0}, // go-sdk matches keys case-sensitively
		{`{"tools":"[1,2,3]"}`, 0},
		{`{"tools":` + items(50) + `}`, 11}, // stops past the limit
	} {
		require.Equal(t, c.want, maxArrayItems([]byte(c.obj), "tools", 10), "%s", c.obj)
	}
	l := Limits{ListItems: 10}
	page := []byte(`{"prompts":` + items(11) + `}`)
	require.Equal(t, "prompts/list result with more than 10 prompts", l.Problem("prompts/list", page, page))
	require.Empty(t, l.Problem("tools/call", page, page), "not a list method")
	page = []byte(`{"prompts":` + items(10) + `}`)
	require.Empty(t, l.Problem("prompts/list", page, page), "at the bound")
}

// moreValues counts every object and array and every element or member
// after a container's first, outside strings, and stops past the limit.
func TestMoreValuesCountsOutsideStrings(t *testing.T) {
	for _, c := range []struct {
		data  string
		limit int
		more  bool
	}{
		{`{}`, 1, false},
		{`{"a":1,"b":2}`, 2, false},
		{`{"a":1,"b":2,"c":3}`, 2, true},
		{`[{},{},[]]`, 5, true},
		{`[{},{},[]]`, 6, false},
		{`{"s":"{[,,,]}","t":"\"{{{"}`, 2, false},
		{`{"s":"\\","t":[1,2]}`, 4, false},
		{`{"s":"\\","t":[1,2,3]}`, 4, true},
	} {
		require.Equal(t, c.more, moreValues([]byte(c.data), c.limit), "%s within %d", c.data, c.limit)
	}
	require.Equal(t, "JSON-RPC message with more than 2 JSON values", Limits{JSONValues: 2}.Problem("x", []byte(`[1,2,3]`), nil))
}
