//go:build unix

package stdio

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

func supported() error { return nil }

// signalName is a signal's name, e.g. "SIGKILL"; "" for none.
func signalName(s syscall.Signal) string {
	if s == 0 {
		return ""
	}
	return cmp.Or(unix.SignalName(s), s.String())
}

// exitDrain bounds the read of what is left in stdout and stderr after the
// exit, and how long a process whose connection failed may take to exit by
// itself before it is stopped.
const exitDrain = time.Second

// proc is one run of a Command: the process, the pumps of its stdout and
// stderr, and its stop. Its methods are safe for concurrent use.
type proc struct {
	cfg   Command
	cmd   *exec.Cmd
	stdin io.WriteCloser // the process's stdin
	err   *stderrLog

	onExit func(*ProcessExitError) // heard before out's Read ends

	mu     sync.Mutex // held while signalling, so no signal reaches a reaped pid
	reaped bool
	step   StopStep

	exited  chan struct{} // closed once the process is reaped; exit is set
	exit    *ProcessExitError
	pumps   sync.WaitGroup
	stopped sync.Once
}

// inherited is os.Environ() without the variables keep refuses.
func inherited(keep func(name string) bool) []string {
	env := os.Environ()
	if keep == nil {
		return env
	}
	return slices.DeleteFunc(env, func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return !keep(name)
	})
}

// startProc starts c in a process group of its own, its stdout filtered by f
// to out.
func startProc(c Command, f *stdoutFilter, out *markingConn, errLog *stderrLog, onExit func(*ProcessExitError)) (*proc, error) {
	cmd := exec.Command(c.Path, c.Args...)
	cmd.Dir = c.Dir
	if len(c.Env) > 0 || c.Inherit != nil {
		cmd.Env = append(inherited(c.Inherit), c.Env...) // later entries win (os/exec dedupEnv)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// *os.File ends for stdout and stderr: Wait waits for the process alone,
	// and closes none of them, so what is left is read after the exit.
	outR, outW, err1 := os.Pipe()
	errR, errW, err2 := os.Pipe()
	err := errors.Join(err1, err2)
	var stdin io.WriteCloser
	if err == nil {
		stdin, err = cmd.StdinPipe() // its read end is the child's: Start closes it
	}
	if err != nil {
		closeFiles(outR, outW, errR, errW)
		return nil, fmt.Errorf("mcpsup: stdio server %q: pipes: %w", c.Path, err)
	}
	cmd.Stdout, cmd.Stderr = outW, errW
	err = cmd.Start()
	closeFiles(outW, errW) // the child holds its ends; ours would keep the pipes open past it
	if err != nil {
		closeFiles(outR, errR)
		return nil, fmt.Errorf("mcpsup: starting stdio server %q: %w", c.Path, err)
	}
	p := &proc{cfg: c, cmd: cmd, stdin: stdin, err: errLog, onExit: onExit, exited: make(chan struct{})}
	stderrDone, stdoutDone := make(chan struct{}), make(chan struct{})
	p.pumps.Go(func() {
		defer close(stderrDone)
		errLog.copy(errR)
	})
	p.pumps.Go(func() { p.reap(f, stdoutDone, stderrDone, outR, errR) })
	p.pumps.Go(func() {
		_ = f.copyLines(outR, out.pass)
		close(stdoutDone)
		// go-sdk hears stdout's end once the exit is known.
		p.stopUnlessExiting()
		out.finish(p.exit)
	})
	return p, nil
}

// reap waits for the exit, kills the rest of the group while the zombie
// still holds the group's id, reaps it, drains both pipes (within one
// exitDrain in all) and closes them, which ends the pumps.
func (p *proc) reap(f *stdoutFilter, stdoutDone, stderrDone <-chan struct{}, outR, errR *os.File) {
	pid := p.cmd.Process.Pid
	zombie := waitExited(pid) // the zombie holds the group's id: no other group can have it yet
	if !zombie {
		_ = p.cmd.Wait() // reaped first: the id could in principle be reused by now
	}
	p.mu.Lock()
	_ = syscall.Kill(-pid, syscall.SIGKILL) // the group: leftovers go with it
	if zombie {
		_ = p.cmd.Wait()
	}
	p.reaped = true
	step := p.step
	p.mu.Unlock()
	// One deadline for the whole drain: a child that left the group (setsid)
	// may hold both pipes open for as long as it lives.
	drain, stop := context.WithTimeout(context.Background(), exitDrain)
	defer stop()
	for _, done := range []<-chan struct{}{stdoutDone, stderrDone} {
		select {
		case <-done:
		case <-drain.Done():
		}
	}
	_, _ = outR.Close(), errR.Close() // unblocks a pump still reading
	e := &ProcessExitError{Path: p.cfg.Path, PID: pid, Code: p.cmd.ProcessState.ExitCode(), Stop: step,
		Stderr: p.err.text(), DroppedLines: int(f.count.Load())} // Code -1 after a signal
	if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		e.Signal = ws.Signal()
	}
	p.exit = e
	p.err.log.Info("mcpsup: stdio server exited", "server", p.err.server, "pid", pid, "code", e.Code, "signal", signalName(e.Signal), "stop", string(e.Stop))
	p.onExit(e)
	close(p.exited)
}

// signal sends sig to the process's group unless the process was reaped.
func (p *proc) signal(sig syscall.Signal, step StopStep) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.reaped {
		p.step = step
		_ = syscall.Kill(-p.cmd.Process.Pid, sig)
	}
}

// stop ends the process (stdin, SIGTERM, SIGKILL) and returns once it is
// reaped. Idempotent.
func (p *proc) stop() {
	p.stopped.Do(func() {
		p.signal(0, StopStdin) // signal 0: the step alone
		_ = p.stdin.Close()
		if p.exitedWithin(p.cfg.StopGrace) {
			return
		}
		p.signal(syscall.SIGTERM, StopTerm)
		if p.exitedWithin(p.cfg.KillGrace) {
			return
		}
		p.signal(syscall.SIGKILL, StopKill)
	})
	<-p.exited
}

// stopUnlessExiting gives the process exitDrain to exit by itself (so its
// exit is told as its own), then stops it.
func (p *proc) stopUnlessExiting() {
	if !p.exitedWithin(exitDrain) {
		p.stop()
	}
}

func (p *proc) exitedWithin(d time.Duration) bool {
	select {
	case <-p.exited:
		return true
	case <-time.After(d):
		return false
	}
}

func closeFiles(files ...io.Closer) {
	for _, f := range files {
		_ = f.Close() // a nil *os.File returns an error
	}
}

// wait returns once the process is reaped and its pumps have ended.
func (p *proc) wait() *ProcessExitError {
	<-p.exited
	p.pumps.Wait()
	return p.exit
}
