//go:build !unix

package supervisor

import (
	"io"
	"os"
)

func commandSupported() error { return ErrCommandUnsupported }

// proc is not available without process groups; New refuses a Command.
type proc struct {
	stdin *os.File
	out   *io.PipeReader
}

func startProc(Command, *stdoutFilter, *stderrLog, func(*ProcessExitError)) (*proc, error) {
	return nil, ErrCommandUnsupported
}

func (*proc) stop()                   {}
func (*proc) stopUnlessExiting()      {}
func (*proc) wait() *ProcessExitError { return nil }
