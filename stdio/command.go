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

// Defaults of a Command's bounds (see its fields).
const (
	DefaultStopGrace    = 5 * time.Second // go-sdk's CommandTransport.TerminateDuration
	DefaultKillGrace    = 5 * time.Second
	DefaultStderrTail   = 4 << 10 // bytes
	DefaultMaxLineBytes = mcp.DefaultMaxLineLength
)

// Command describes a stdio MCP server: a process that speaks
// newline-delimited JSON-RPC on its stdin and stdout, started anew for every
// session (DESIGN.md section 2, "stdio servers"). The zero value of every
// field but Path is a documented default. Unix only: Validate refuses one
// elsewhere (ErrUnsupported).
type Command struct {
	// Path is the program to run (required); a name without a slash is
	// looked up in PATH at every start. One that cannot start is a failed
	// handshake (class unknown).
	Path string
	// Args are the arguments after the program's name; their credentials
	// (events.Redactor.AddCommandLineSecrets) are masked as Env's values are.
	Args []string
	// Env holds "KEY=value" entries added to the inherited environment,
	// overriding a variable of the same key. Its values (of at least
	// events.MinSessionIDLen bytes) are masked in every text handed out.
	Env []string
	// Inherit, when set, says by name which variables of the supervisor's
	// environment the process inherits (Env's are set regardless); it is
	// called at every start, once per variable. Default nil: all.
	Inherit func(name string) bool
	Dir     string // the working directory; default: the supervisor's process's
	// StopGrace is how long the process has to exit after its stdin is
	// closed before its group gets SIGTERM; KillGrace, after SIGTERM before
	// SIGKILL. Defaults DefaultStopGrace, DefaultKillGrace.
	StopGrace, KillGrace time.Duration
	// StderrTail is how many of the last stderr bytes the exit error keeps,
	// from the first whole line among them. Default DefaultStderrTail.
	StderrTail int
	// MaxLineBytes bounds one stdout line; a longer one is dropped and the
	// session lives. Default DefaultMaxLineBytes (16 MiB).
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

// ErrUnsupported: a Command on a system without process groups (not Unix).
var ErrUnsupported = errors.New("mcpsup/stdio: stdio servers need a Unix system")

// CommandError reports a Command that Validate refuses: its Field (e.g.
// "Path" or "Env") and the Reason it is wrong.
type CommandError struct {
	Field, Reason string
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
	StopNone  StopStep = ""             // the process exited by itself
	StopStdin StopStep = "stdin-closed" // its stdin was closed
	StopTerm  StopStep = "sigterm"      // its group was sent SIGTERM
	StopKill  StopStep = "sigkill"      // its group was sent SIGKILL
)

// ProcessExitError is the end of a stdio server's process, carried by the
// session's end (class transport), the session.ProcessExited fact and the
// calls in flight. It wraps mcp.ErrConnectionClosed.
type ProcessExitError struct {
	Path string // the program that ran
	PID  int
	// Code is the exit code, -1 when Signal (else 0) ended the process.
	Code   int
	Signal syscall.Signal
	// Stop is what the supervisor did before it exited.
	Stop StopStep
	// Stderr is the last bytes of its stderr (at most Command.StderrTail),
	// valid UTF-8, masked by Options.Redactor and the events.Redactor
	// patterns where it is made.
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
