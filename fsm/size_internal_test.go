package fsm

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
)

// Every connection holds a Machine, a gateway tens of thousands: it stays
// in the allocator's 176-byte size class, which the idle-connection figure
// of docs/benchmarks.md counts. The verdict of a failure, 104 bytes, is
// held by pointer for it: only a failed machine has one.
func TestMachineStaysInItsSizeClass(t *testing.T) {
	assert.LessOrEqual(t, unsafe.Sizeof(Machine{}), uintptr(176))
}
