//go:build unix && !linux

package interop

import "syscall"

// serverProcAttr puts the server in its own process group, which Kill and
// the cleanup signal as a whole.
func serverProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
