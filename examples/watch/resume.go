package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/mcpsup/mcpsup/supervisor"
)

// loadResume reads the resume state at path; it returns nil when path is ""
// or the file does not exist. A malformed file is refused with the
// *supervisor.ResumeStateError naming the field; a state saved for another
// endpoint is refused too, naming "endpoint".
func loadResume(path, endpoint string) (*supervisor.ResumeState, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("resume file: %w", err)
	}
	rs, err := supervisor.ParseResumeState(data)
	if err != nil {
		return nil, fmt.Errorf("resume file %s refused: %w", path, err)
	}
	if rs.Endpoint != "" && rs.Endpoint != endpoint {
		err := &supervisor.ResumeStateError{Field: "endpoint", Reason: fmt.Sprintf("saved for %q, not %q", rs.Endpoint, endpoint)}
		return nil, fmt.Errorf("resume file %s refused: %w", path, err)
	}
	return rs, nil
}

// saveResume writes rs to path (mode 0600: it holds the session id) through
// a temporary file, so a crash never leaves half a state. With no state (no
// session, or one the server rejected), a previous file is removed: it could
// only cost a stale recovery.
func saveResume(path string, rs *supervisor.ResumeState, out io.Writer) error {
	if path == "" {
		return nil
	}
	if rs == nil {
		fmt.Fprintln(out, "no session to resume")
		return removeResume(path, out)
	}
	data, err := json.MarshalIndent(rs, "", "  ")
	if err != nil {
		return fmt.Errorf("resume state: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("resume file: %w", err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing to remove
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("resume file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("resume file: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("resume file: %w", err)
	}
	fmt.Fprintf(out, "session %s detached (no DELETE); resume state saved to %s\n", sessionLabel(rs.SessionID), path)
	return nil
}

// removeResume removes the resume file, if any.
func removeResume(path string, out io.Writer) error {
	if path == "" {
		return nil
	}
	err := os.Remove(path)
	switch {
	case err == nil:
		fmt.Fprintf(out, "removed %s\n", path)
		return nil
	case errors.Is(err, fs.ErrNotExist):
		return nil
	}
	return fmt.Errorf("resume file: %w", err)
}
