package supervisor

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
)

// mallocHeader is what the Go allocator adds to an object of more than
// 512 bytes that holds pointers (runtime minSizeForMallocHeader): its type,
// in the object's size class.
const mallocHeader = 8

// A gateway holds a Supervisor per upstream session, tens of thousands: it
// stays in the allocator's 1792-byte size class with its malloc header
// (the next class is 2048), which the idle-connection figure of
// docs/benchmarks.md counts. Config's one-byte fields sit together for it.
func TestSupervisorStaysInItsSizeClass(t *testing.T) {
	assert.LessOrEqual(t, unsafe.Sizeof(Supervisor{})+mallocHeader, uintptr(1792))
}

// Every session holds a serverRequests: it stays in the 80-byte size class.
func TestServerRequestsStayInTheirSizeClass(t *testing.T) {
	assert.LessOrEqual(t, unsafe.Sizeof(serverRequests{}), uintptr(80))
}

// Every session holds one sessionHooks, whose methods are its hooks: it
// stays in the 24-byte size class.
func TestSessionHooksStayInTheirSizeClass(t *testing.T) {
	assert.LessOrEqual(t, unsafe.Sizeof(sessionHooks{}), uintptr(24))
}
