package stdio

import (
	"syscall"
	"unsafe"
)

// waitExited blocks until the process pid has exited, without reaping it
// (waitid with WNOWAIT, as os.Process does on Linux), and reports true.
func waitExited(pid int) bool {
	const pPID = 1     // P_PID
	var info [128]byte // siginfo_t
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid), uintptr(unsafe.Pointer(&info[0])), syscall.WEXITED|syscall.WNOWAIT, 0, 0)
		if errno != syscall.EINTR {
			return errno == 0
		}
	}
}
