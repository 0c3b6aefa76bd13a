package wirebody

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Read reads what a body holds when its Content-Length says less or more
// than it carries, within the bound and past it.
func TestReadBoundedWhateverTheContentLength(t *testing.T) {
	answer := func(body string, claimed int64) *http.Response {
		return &http.Response{Header: http.Header{}, Body: io.NopCloser(strings.NewReader(body)), ContentLength: claimed}
	}
	b := Read(answer("hello", 5), 16)
	assert.Equal(t, "hello", string(b.Data))
	assert.False(t, b.Over)

	assert.Equal(t, "hello, world", string(Read(answer("hello, world", 5), 16).Data), "more than claimed")
	assert.Equal(t, "hi", string(Read(answer("hi", 5), 16).Data), "less than claimed")

	over := Read(answer(strings.Repeat("x", 20), 5), 16)
	assert.True(t, over.Over, "past the bound whatever the length claimed")
	assert.Len(t, over.Data, 16)
}
