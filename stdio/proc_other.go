//go:build !unix

package stdio

import (
	"io"
	"syscall"
)

func supported() error { return ErrUnsupported }

func signalName(s syscall.Signal) string { return s.String() }

// proc is not available without process groups; Command.Validate refuses one.
type proc struct {
	stdin io.WriteCloser
}

func startProc(Command, *stdoutFilter, *markingConn, *stderrLog, func(*ProcessExitError)) (*proc, error) {
	return nil, ErrUnsupported
}

func (*proc) stop()                   {}
func (*proc) stopUnlessExiting()      {}
func (*proc) wait() *ProcessExitError { return nil }
