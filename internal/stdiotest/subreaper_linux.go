package stdiotest

import "syscall"

// becomeSubreaper makes this process a child subreaper (Linux prctl
// PR_SET_CHILD_SUBREAPER) and reports whether it is one.
func becomeSubreaper() bool {
	const prSetChildSubreaper = 36
	_, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
	return errno == 0
}
