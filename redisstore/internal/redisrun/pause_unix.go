//go:build unix

package redisrun

import "syscall"

// Pause stops the process without ending it (SIGSTOP): its port still
// takes connections and requests, and nothing is answered until Resume, as
// a hung Redis. Pausing a stopped server does nothing.
func (s *Server) Pause() { s.signal(syscall.SIGSTOP) }

// Resume continues a paused process (SIGCONT).
func (s *Server) Resume() { s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		_ = s.cmd.Process.Signal(sig)
	}
}
