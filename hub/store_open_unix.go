//go:build unix

package hub

import "syscall"

// openNonblock makes opening a named pipe, which waits for a writer, return
// at once; reading a regular file never waits.
const openNonblock = syscall.O_NONBLOCK
