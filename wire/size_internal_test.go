package wire

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
)

// Every session holds one Transport, and a gateway holds tens of thousands
// of sessions: it stays in the allocator's 512-byte size class (the next
// is 576), which the idle-connection figure of docs/benchmarks.md counts.
func TestTransportStaysInItsSizeClass(t *testing.T) {
	assert.LessOrEqual(t, unsafe.Sizeof(Transport{}), uintptr(512))
}
