package wire

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
)

// Every session holds one Transport, and a gateway holds tens of thousands
// of sessions: it stays in the allocator's 512-byte size class (the next
// is 576; an object of at most 512 bytes carries no malloc header), which
// the idle-connection figure of docs/benchmarks.md counts.
// So does the body of its standalone stream, held as long as the session.
func TestTransportStaysInItsSizeClass(t *testing.T) {
	assert.LessOrEqual(t, unsafe.Sizeof(Transport{}), uintptr(512))
	assert.LessOrEqual(t, unsafe.Sizeof(streamBody{}), uintptr(512), "the standalone stream's body")
}
