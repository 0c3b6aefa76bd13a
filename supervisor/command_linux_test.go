package supervisor

import "syscall"

// subreaper reports that becomeSubreaper made this process a child
// subreaper (Linux prctl PR_SET_CHILD_SUBREAPER).
var subreaper bool

func becomeSubreaper() {
	const prSetChildSubreaper = 36
	_, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
	subreaper = errno == 0
}
