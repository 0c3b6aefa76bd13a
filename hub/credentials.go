package hub

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
)

// headerVar is a reference to an environment variable in a header value:
// ${NAME}, or VS Code's ${env:NAME}.
var headerVar = regexp.MustCompile(`\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)\}`)

// expandHeaders returns headers with every ${NAME} (or ${env:NAME}) of
// their values replaced by lookup's value of NAME, and the values the
// references took (to be masked as secrets). A variable lookup does not
// know is an error wrapping ErrUnsetVariable naming the header and the
// variable, never a value.
func expandHeaders(headers map[string]string, lookup func(string) (string, bool)) (map[string]string, []string, error) {
	if len(headers) == 0 {
		return nil, nil, nil
	}
	out := make(map[string]string, len(headers))
	var took []string
	for _, k := range slices.Sorted(maps.Keys(headers)) {
		var unset string
		out[k] = headerVar.ReplaceAllStringFunc(headers[k], func(ref string) string {
			name := headerVar.FindStringSubmatch(ref)[1]
			v, ok := lookup(name)
			if !ok && unset == "" {
				unset = name
			}
			took = append(took, v)
			return v
		})
		if unset != "" {
			return nil, nil, fmt.Errorf("%w: header %q names ${%s}", ErrUnsetVariable, cutText(k, 64), unset)
		}
	}
	return out, took, nil
}
