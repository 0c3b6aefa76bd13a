//go:build unix

package hub

import (
	"os"
	"syscall"
)

// openStateFile opens a state file for reading without blocking: O_NONBLOCK
// makes opening a named pipe (which waits for a writer) return at once, and
// reading a regular file never waits, so the caller's [openRegular] check
// refuses anything else before a read could block.
func openStateFile(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
