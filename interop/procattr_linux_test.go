package interop

import "syscall"

// serverProcAttr puts the server in its own process group, which Kill and
// the cleanup signal as a whole, and has the kernel kill it should the test
// binary die first (a timeout panic, a SIGKILL), so no server is orphaned.
// Pdeathsig fires when the forking OS thread exits; the Go runtime keeps its
// threads unless a goroutine exits while locked to one, which these tests
// never do.
func serverProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
