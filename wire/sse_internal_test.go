package wire

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSSEFramerDeliversWholeEventsOnly(t *testing.T) {
	var f sseFramer
	n, ready := f.push([]byte(": keepalive\n\nid: 7\ndata: {\"a\""))
	assert.Equal(t, 0, n, "a comment is not an event")
	assert.Equal(t, ": keepalive\n\n", string(ready))
	n, ready = f.push([]byte(":1}\r\n\r\ndata: partial"))
	assert.Equal(t, 1, n)
	assert.Equal(t, "id: 7\ndata: {\"a\":1}\r\n\r\n", string(ready))
	assert.Equal(t, "7", f.lastID)
	f.reset()
	n, ready = f.push([]byte("data: x\n\n"))
	assert.Equal(t, 1, n)
	assert.Equal(t, "data: x\n\n", string(ready), "the cut partial event was dropped")
}
