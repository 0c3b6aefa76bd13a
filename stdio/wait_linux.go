package stdio

import "golang.org/x/sys/unix"

// waitExited blocks until the process pid has exited, without reaping it
// (waitid with WNOWAIT, as os.Process does on Linux), and reports true.
func waitExited(pid int) bool {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return err == nil
		}
	}
}
