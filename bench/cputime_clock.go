//go:build linux || darwin

package bench

import (
	"time"

	"golang.org/x/sys/unix"
)

// processCPU is the CPU time the process has used so far, user and system,
// all threads (CLOCK_PROCESS_CPUTIME_ID); false where it cannot be read.
func processCPU() (time.Duration, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts); err != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
