package httpsession

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// streamable-http.mdx, Value Encoding: what is encoded.
func TestNeedsBase64(t *testing.T) {
	for v, want := range map[string]bool{
		"get_weather": false, "file:///a b.txt": false, "café": true, " padded": true, "tab\t": true,
		"line1\nline2": true, "=?base64?literal?=": true, "=?base64?": false, "a\x7f": true,
	} {
		require.Equal(t, want, needsBase64(v), "%q", v)
	}
}
