package supervisor

import (
	"errors"
	"syscall"
)

// isRefused reports a connection the server never accepted: the request
// cannot have run.
func isRefused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED)
}
