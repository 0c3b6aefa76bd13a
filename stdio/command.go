// Package stdio is the MCP stdio transport as a session.Dialer: every Dial
// starts a server's process and runs the handshake on its stdin and stdout
// (newline-delimited JSON-RPC, MCP 2025-11-25 basic/transports "stdio").
// A session ends when the process exits, when its keepalive finds it dead,
// or on Close; the supervisor starts the process again. There is nothing
// to resume: Attach returns session.ErrNoResume.
package stdio

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Defaults of a Command's bounds (Command.StopGrace, KillGrace, StderrTail,
// MaxLineBytes).
const (
	// DefaultStopGrace is how long a stdio server has to exit after its
	// stdin is closed before it is sent SIGTERM: go-sdk's
	// CommandTransport.TerminateDuration default.
	DefaultStopGrace = 5 * time.Second
	// DefaultKillGrace is how long it has after SIGTERM before SIGKILL.
	DefaultKillGrace = 5 * time.Second
	// DefaultStderrTail is how many bytes of a server's stderr are kept,
	// the last ones, for the error and the event of its exit.
	DefaultStderrTail = 4 << 10
	// DefaultMaxLineBytes bounds one line of a server's stdout: go-sdk's
	// mcp.DefaultMaxLineLength.
	DefaultMaxLineBytes = mcp.DefaultMaxLineLength
)

// Command describes a stdio MCP server: a process the Dialer starts and
// speaks newline-delimited JSON-RPC with on its stdin and stdout (the MCP
// stdio transport); a supervisor starts it again when it dies. Every start
// is a new session (a generation); there is nothing to resume. The zero
// value of every field but Path is a documented default.
//
// The process runs in a process group of its own (Setpgid). It is stopped
// as the MCP specification's stdio shutdown says: its stdin is closed; if it
// has not exited after StopGrace its group is sent SIGTERM, and after
// KillGrace more SIGKILL. Once the process has exited, by itself or so, the
// rest of its group is sent SIGKILL, so no process it started in its group
// outlives it (one that left the group, by setsid say, is not ours to
// end). The session reaps the process; orphans of the group are
// reparented to init, which reaps them. The session's Close and Detach
// return once the process has exited. Once it has, what is left in its
// stdout and stderr is read for at most a second; a process whose stdout
// ended, or whose stdin refused a write, has a second to exit by itself
// before it is stopped. The grace periods run on the real clock, not
// Options.Clock: a process lives in real time.
//
// stderr is logged, line by line (a line longer than 4 KiB in pieces of 4
// KiB), at level Info with the server's name (Options.Logger), at most 100
// lines at once and 20 a second after that (a server flooding its stderr
// does not flood the host's log: the lines past the rate are counted, and
// the count is logged at level Warn before the next line logged and when
// stderr ends), and its last StderrTail bytes are kept for the
// [ProcessExitError] of the process's exit. A stdout line that is not one JSON-RPC message (a log line, a
// batch, a line longer than MaxLineBytes), or that is a response to an id
// no request carried, is dropped and counted: it is a protocol anomaly (a
// session.LineDropped fact), not the death of the session.
//
// Commands are supported on Unix systems; Validate refuses one elsewhere
// (ErrUnsupported).
type Command struct {
	// Path is the program to run (required). A name without a slash is
	// looked up in PATH (exec.LookPath) at every start. Validate does not
	// check that it exists: a program that cannot start (not found, not
	// executable) is a failed handshake whose verdict (class unknown) keeps
	// the start's error, retried on the Backoff schedule, forever unless
	// Backoff.MaxAttempts or MaxElapsed bounds it.
	Path string
	// Args are the arguments after the program's name. The credentials
	// they carry (a value after a flag named as a credential, such as
	// `--api-key VALUE`, a credential header, an upstream URL's query and
	// userinfo: events.Redactor.AddCommandLineSecrets) are masked in events,
	// errors and logs, as Env's values are.
	Args []string
	// Env holds "KEY=value" entries added to the environment the
	// supervisor's own process runs in; an entry overrides a variable of
	// the same key. Default none: the process inherits that environment.
	// The values (of at least events.MinSessionIDLen bytes) are taken for
	// credentials: masked in every text the supervisor hands out.
	Env []string
	// Inherit, when set, says which variables of the supervisor's own
	// process environment the process inherits: those it reports true
	// for, by name; Env's entries are set whatever it says. It is called
	// at every start of the process, once per variable, on the
	// supervisor's goroutine: safe for concurrent use. Default nil: every
	// variable is inherited. A host of several servers keeps one server's
	// credentials out of another's process with it (package hub does, for
	// the variables a server's headers reference).
	Inherit func(name string) bool
	// Dir is the working directory. Default: the supervisor's process's.
	Dir string
	// StopGrace is how long the process has to exit after its stdin is
	// closed before its group is sent SIGTERM. Default DefaultStopGrace.
	StopGrace time.Duration
	// KillGrace is how long it has after SIGTERM before SIGKILL. Default
	// DefaultKillGrace.
	KillGrace time.Duration
	// StderrTail is how many bytes of stderr are kept, the last ones, for
	// the error of the process's exit, from the first whole line among
	// them (after "…" when they hold no line start). Default
	// DefaultStderrTail (4 KiB).
	StderrTail int
	// MaxLineBytes bounds one stdout line; a longer line is dropped, and
	// the session lives. Default DefaultMaxLineBytes (16 MiB).
	MaxLineBytes int
}

// WithDefaults returns a copy of c with its zero bounds set, and Args and
// Env copied.
func (c Command) WithDefaults() Command {
	if c.StopGrace <= 0 {
		c.StopGrace = DefaultStopGrace
	}
	if c.KillGrace <= 0 {
		c.KillGrace = DefaultKillGrace
	}
	if c.StderrTail <= 0 {
		c.StderrTail = DefaultStderrTail
	}
	if c.MaxLineBytes <= 0 {
		c.MaxLineBytes = DefaultMaxLineBytes
	}
	c.Args = append([]string(nil), c.Args...)
	c.Env = append([]string(nil), c.Env...)
	return c
}

// ErrUnsupported: a Command on a system without process groups (not
// Unix).
var ErrUnsupported = errors.New("mcpsup/stdio: stdio servers need a Unix system")

// CommandError reports a Command that Validate refuses: which field, and
// why.
type CommandError struct {
	// Field names the field, e.g. "Path" or "Env".
	Field string
	// Reason says what is wrong.
	Reason string
}

func (e *CommandError) Error() string {
	return fmt.Sprintf("mcpsup: Config.Command.%s: %s", e.Field, e.Reason)
}

// Validate checks c: a *CommandError naming the field (Path required,
// without NUL bytes; Env entries KEY=value without NUL bytes), or
// ErrUnsupported off Unix.
func (c Command) Validate() error {
	switch {
	case c.Path == "":
		return &CommandError{Field: "Path", Reason: "required"}
	case strings.ContainsRune(c.Path, 0):
		return &CommandError{Field: "Path", Reason: "contains a NUL byte"}
	}
	for i, kv := range c.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" || strings.ContainsRune(kv, 0) {
			return &CommandError{Field: "Env", Reason: fmt.Sprintf("entry %d: want KEY=value without NUL bytes", i)}
		}
	}
	return supported()
}

// StopStep is how the process was stopped, if it was.
type StopStep string

// The steps of a stop, in order (Command).
const (
	// StopNone: the process exited by itself.
	StopNone StopStep = ""
	// StopStdin: it exited after its stdin was closed.
	StopStdin StopStep = "stdin-closed"
	// StopTerm: its group was sent SIGTERM.
	StopTerm StopStep = "sigterm"
	// StopKill: its group was sent SIGKILL.
	StopKill StopStep = "sigkill"
)

// ProcessExitError is the end of a stdio server's process: its exit code or
// the signal that ended it, the step of the stop that preceded it (StopNone
// when it exited by itself), the last bytes of its stderr, and how many
// stdout lines were dropped. It is what the session's end (Session.Err:
// the "session died" verdict, of class transport), the session.ProcessExited
// fact and the calls in flight carry; find it with errors.As. It wraps
// mcp.ErrConnectionClosed: the session's connection is gone with the
// process.
type ProcessExitError struct {
	// Path is the program that ran.
	Path string
	// PID is the process's id.
	PID int
	// Code is the exit code, -1 when a signal ended the process.
	Code int
	// Signal is the signal that ended it, 0 when it exited.
	Signal syscall.Signal
	// Stop is what the supervisor did before it exited.
	Stop StopStep
	// Stderr is the last bytes of its stderr (at most Command.StderrTail),
	// valid UTF-8, starting at a line when it was cut, masked by
	// Options.Redactor (a supervisor's knows Command.Env's values and the
	// credentials of Command.Args) and the events.Redactor patterns:
	// masked where it is made, so every copy is.
	Stderr string
	// DroppedLines counts the stdout lines dropped: not one JSON-RPC
	// message, or a response to an id never sent.
	DroppedLines int
}

// Error names the program (its base name), the exit code or signal and the
// stop step, e.g. `mcpsup: stdio server "srv" (pid 42) exited with code 3`;
// the stderr tail is not in the text (see Stderr).
func (e *ProcessExitError) Error() string {
	s := fmt.Sprintf("mcpsup: stdio server %q (pid %d) ", filepath.Base(e.Path), e.PID)
	if e.Signal != 0 {
		s += fmt.Sprintf("was ended by signal %d (%s)", int(e.Signal), signalName(e.Signal))
	} else {
		s += fmt.Sprintf("exited with code %d", e.Code)
	}
	if e.Stop != StopNone {
		s += " after " + string(e.Stop)
	}
	return s
}

// Unwrap returns mcp.ErrConnectionClosed.
func (e *ProcessExitError) Unwrap() error { return mcp.ErrConnectionClosed }

// exitErrorOf builds the error of a process that exited with state.
func exitErrorOf(path string, pid int, state interface{ Sys() any }, stop StopStep) *ProcessExitError {
	e := &ProcessExitError{Path: path, PID: pid, Code: -1, Stop: stop}
	if ws, ok := state.Sys().(syscall.WaitStatus); ok {
		switch {
		case ws.Exited():
			e.Code = ws.ExitStatus()
		case ws.Signaled():
			e.Signal = ws.Signal()
		}
	}
	return e
}

// signalName is the conventional name of a signal, e.g. "SIGKILL".
func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGSEGV:
		return "SIGSEGV"
	case syscall.SIGABRT:
		return "SIGABRT"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGPIPE:
		return "SIGPIPE"
	}
	return s.String()
}

// signalText names a signal for logs, "" for none.
func signalText(s syscall.Signal) string {
	if s == 0 {
		return ""
	}
	return signalName(s)
}
