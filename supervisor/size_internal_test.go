package supervisor

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
)

// A gateway holds a Supervisor per upstream session, tens of thousands: it
// stays in the allocator's 1792-byte size class (the next is 2048), which
// the idle-connection figure of docs/benchmarks.md counts.
func TestSupervisorStaysInItsSizeClass(t *testing.T) {
	assert.LessOrEqual(t, unsafe.Sizeof(Supervisor{}), uintptr(1792))
}
