package hub

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpsup/mcpsup/msgcheck"
	"github.com/mcpsup/mcpsup/supervisor"
)

// Store keeps one resume state per server name across runs of the host:
// loaded at Add (with a Leaser, on acquiring the lease), saved when what
// resumes the session changes and on Detach or Remove(KeepSession), deleted
// on Close or Remove(EndSession). Safe for concurrent use; one server's
// writes come in order, one at a time. Each call is bounded by
// Config.StoreTimeout.
type Store interface {
	// Load returns the server's resume state; an error wrapping ErrNotFound
	// when there is none, ErrCorrupt (unreadable, malformed, too large) or
	// ErrForeign (another server's) when it cannot be used.
	Load(ctx context.Context, server string) (*supervisor.ResumeState, error)
	// Save replaces the server's resume state.
	Save(ctx context.Context, server string, rs *supervisor.ResumeState) error
	// Delete removes the server's resume state; none is not an error.
	Delete(ctx context.Context, server string) error
}

// Store errors, wrapped by *StoreError; test with errors.Is.
var (
	// ErrNotFound: no state is stored for the server.
	ErrNotFound = errors.New("hub: no resume state stored")
	// ErrCorrupt: the stored state cannot be read or is malformed (the
	// error also wraps *supervisor.ResumeStateError when a field is bad).
	ErrCorrupt = errors.New("hub: stored resume state is corrupt")
	// ErrForeign: the stored state belongs to another server name or
	// endpoint.
	ErrForeign = errors.New("hub: stored resume state belongs to another server")
)

// StoreError is a failed Store operation: which, for which server, why.
type StoreError struct {
	Op     string // "load", "save" or "delete"
	Server string
	Err    error
}

func (e *StoreError) Error() string {
	return fmt.Sprintf("hub: store %s %q: %v", e.Op, e.Server, e.Err)
}

func (e *StoreError) Unwrap() error { return e.Err }

// FileStoreVersion is the version of the stored JSON form of a resume
// state ([MarshalState]).
const FileStoreVersion = 1

// DefaultMaxFileBytes bounds a stored state: a resume state and the envelope.
const DefaultMaxFileBytes = supervisor.MaxResumeStateBytes + 4<<10

// storedState is the stored JSON form of a resume state.
type storedState struct {
	Version int             `json:"version"`
	Server  string          `json:"server"`
	Holder  string          `json:"holder,omitempty"`
	Resume  json.RawMessage `json:"resume"`
}

// MarshalState is the stored form of server's state rs, saved under the
// lease holder ("<holder>:<token>"; "" unfenced):
//
//	{"version": 1, "server": "<name>", "holder": "…", "resume": {…supervisor.ResumeState…}}
//
// An error when rs is nil or the form is longer than max bytes.
func MarshalState(server, holder string, rs *supervisor.ResumeState, max int64) ([]byte, error) {
	if rs == nil {
		return nil, errors.New("nil resume state")
	}
	resume, err := json.Marshal(rs)
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(storedState{FileStoreVersion, server, holder, resume})
	if err == nil && int64(len(data)) > max {
		err = fmt.Errorf("state of %d bytes, more than %d", len(data), max)
	}
	return data, err
}

// ParseState reads server's state from its stored form data (see
// MarshalState) and the holder it was saved under. Errors: ErrCorrupt when
// data is longer than max bytes, not the form, of another version or its
// resume state malformed (then also wrapping *supervisor.ResumeStateError);
// ErrForeign when it was saved for another server.
func ParseState(server string, data []byte, max int64) (*supervisor.ResumeState, string, error) {
	var st storedState
	if int64(len(data)) > max {
		return nil, "", fmt.Errorf("%w: more than %d bytes", ErrCorrupt, max)
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, "", fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	switch {
	case st.Version != FileStoreVersion:
		return nil, st.Holder, fmt.Errorf("%w: version %d, want %d", ErrCorrupt, st.Version, FileStoreVersion)
	case st.Server != server:
		return nil, st.Holder, fmt.Errorf("%w: saved for server %q", ErrForeign, msgcheck.CutText(st.Server, 64))
	}
	rs, err := supervisor.ParseResumeState(st.Resume)
	if err != nil {
		return nil, st.Holder, errors.Join(ErrCorrupt, err)
	}
	return rs, st.Holder, nil
}

// FileStore is a Store of one file per server in Dir (made 0700): the
// stored form (MarshalState) at [FileStore.Path], mode 0600 (a session id
// is a credential), renamed over the old one (a crash leaves the old state
// or the new). A path that is not a regular file is ErrCorrupt (and
// ErrNotRegularFile), refused unread. Safe for concurrent use.
type FileStore struct {
	// Dir is the directory; required.
	Dir string
	// MaxBytes bounds a file read or written. Default DefaultMaxFileBytes.
	MaxBytes int64
}

func (s *FileStore) max() int64 { return cmp.Or(max(s.MaxBytes, 0), DefaultMaxFileBytes) }

// Path returns the file of the server's state: named as the server when
// that is a ValidName of at most 40 bytes not ending as a changed name does
// ('_' and hashLen hex digits); otherwise changed as a qualified name is.
func (s *FileStore) Path(server string) string {
	name := server
	if !nameFits(server) || endsAsHashed(server) {
		name = hashed(server, server, "")
	}
	return filepath.Join(s.Dir, name+".json")
}

func nameFits(name string) bool { return ValidName(name) && len(name) <= 40 }

// endsAsHashed reports whether name ends as [hashed] ends its names.
func endsAsHashed(name string) bool {
	return len(name) > hashLen && name[len(name)-hashLen-1] == '_' &&
		strings.Trim(name[len(name)-hashLen:], "0123456789abcdef") == ""
}

// Load reads the server's file; see Store.
func (s *FileStore) Load(ctx context.Context, server string) (*supervisor.ResumeState, error) {
	err := ctx.Err()
	var data []byte
	if err == nil {
		data, err = readRegular(s.Path(server), s.max())
	}
	if errors.Is(err, fs.ErrNotExist) {
		data, err = s.adoptEarlierFile(server)
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		err = ErrNotFound
	case errors.Is(err, ErrNotRegularFile):
		err = fmt.Errorf("%w: %w", ErrCorrupt, err)
	case err == nil:
		var rs *supervisor.ResumeState
		if rs, _, err = ParseState(server, data, s.max()); err == nil {
			return rs, nil
		}
	}
	return nil, &StoreError{Op: "load", Server: server, Err: err}
}

// adoptEarlierFile moves the server's state kept under its plain name,
// which ends as changed names do, to its Path; fs.ErrNotExist when none.
func (s *FileStore) adoptEarlierFile(server string) ([]byte, error) {
	if !nameFits(server) || !endsAsHashed(server) {
		return nil, fs.ErrNotExist
	}
	earlier := filepath.Join(s.Dir, server+".json")
	data, err := readRegular(earlier, s.max())
	var st storedState
	if err != nil || json.Unmarshal(data, &st) != nil || st.Server != server {
		return nil, fs.ErrNotExist
	}
	_ = os.Rename(earlier, s.Path(server)) // read already
	return data, nil
}

// ErrNotRegularFile: a file the hub reads (a FileStore state, a servers
// file) is a named pipe, a device or a directory, also behind a symlink.
var ErrNotRegularFile = errors.New("hub: not a regular file")

// readRegular reads at most max+1 bytes of the file at path, refused
// unread when it is not a regular file (ErrNotRegularFile).
func readRegular(path string, max int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%w: %s (%s)", ErrNotRegularFile, path, fi.Mode().Type())
	}
	if err != nil {
		return nil, err
	}
	return io.ReadAll(io.LimitReader(f, max+1))
}

// Save writes the server's file atomically; see FileStore.
func (s *FileStore) Save(ctx context.Context, server string, rs *supervisor.ResumeState) error {
	err := ctx.Err()
	var data []byte
	if err == nil {
		data, err = MarshalState(server, "", rs, s.max())
	}
	var tmp *os.File
	if err == nil {
		err = os.MkdirAll(s.Dir, 0o700)
	}
	if err == nil {
		tmp, err = os.CreateTemp(s.Dir, filepath.Base(s.Path(server))+".*.tmp") // mode 0600
	}
	if err == nil {
		defer os.Remove(tmp.Name()) // nothing left to remove after the rename
		_, err = tmp.Write(data)
		if err = errors.Join(err, tmp.Sync(), tmp.Close()); err == nil {
			err = os.Rename(tmp.Name(), s.Path(server))
		}
	}
	if err != nil {
		return &StoreError{Op: "save", Server: server, Err: err}
	}
	return nil
}

// Delete removes the server's file; see Store.
func (s *FileStore) Delete(ctx context.Context, server string) error {
	err := ctx.Err()
	if err == nil {
		err = os.Remove(s.Path(server))
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return &StoreError{Op: "delete", Server: server, Err: err}
	}
	return nil
}

// saver is the one writer of resume states (DESIGN.md section 8): a
// goroutine per server while its writes wait, a new write replacing the
// one waiting.
type saver struct {
	store   Store
	timeout time.Duration
	failed  func(op, server string, err error)

	mu     sync.Mutex
	queues map[string]*queue // servers whose writes wait or run
	errs   []*StoreError     // not yet returned by a flush
}

// queue is one server's writes: the one running, then the one waiting.
type queue struct {
	writes []*write
	done   chan struct{} // closed once none is left
}

// write is a save of rs (nil: a delete), fenced by lease when not nil,
// bounded by ctx and the store timeout.
type write struct {
	rs    *supervisor.ResumeState
	lease Lease
	ctx   context.Context
}

func (w *write) op() string {
	if w.rs == nil {
		return "delete"
	}
	return "save"
}

// do makes the write; its error is a *StoreError of server.
func (w *write) do(s *saver, server string) *StoreError {
	ctx, cancel := context.WithTimeout(w.ctx, s.timeout)
	defer cancel()
	var err error
	switch {
	case w.lease != nil && w.rs == nil:
		err = w.lease.Delete(ctx)
	case w.lease != nil:
		err = w.lease.Save(ctx, w.rs)
	case w.rs == nil:
		err = s.store.Delete(ctx, server)
	default:
		err = s.store.Save(ctx, server, w.rs)
	}
	if se, ok := errors.AsType[*StoreError](err); err == nil || ok && se.Server == server {
		return se
	}
	return &StoreError{Op: w.op(), Server: server, Err: err}
}

func (s *saver) put(ctx context.Context, server string, rs *supervisor.ResumeState, lease Lease) {
	if s.store == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	w := &write{rs: rs, lease: lease, ctx: ctx}
	q := s.queues[server]
	switch {
	case q == nil:
		q = &queue{writes: []*write{w}, done: make(chan struct{})}
		s.queues[server] = q
		go s.run(server, q)
	case len(q.writes) == 2:
		q.writes[1] = w
	default:
		q.writes = append(q.writes, w)
	}
}

func (s *saver) run(server string, q *queue) {
	s.mu.Lock()
	for len(q.writes) > 0 {
		w := q.writes[0]
		s.mu.Unlock()
		se := w.do(s, server)
		if se != nil {
			s.failed(w.op(), server, se) // w still first: a put meanwhile replaces the one waiting
		}
		s.mu.Lock()
		q.writes = q.writes[1:] // with its error: a flush finds one or the other
		if se != nil {
			s.errs = append(s.errs, se)
		}
	}
	delete(s.queues, server)
	close(q.done)
	s.mu.Unlock()
}

// flush waits until no write of server ("": any) is left, or ctx ends,
// and returns its write errors not returned before, joined, each a
// *StoreError; when ctx ends first, one more per write not done, wrapping
// ctx's error (the write goes on, bounded by its own context).
func (s *saver) flush(ctx context.Context, server string) error {
	for q := s.queue(server); q != nil && ctx.Err() == nil; q = s.queue(server) {
		select {
		case <-q.done:
		case <-ctx.Done():
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	cause := fmt.Errorf("not done when the wait ended: %w", ctx.Err())
	for _, name := range slices.Sorted(maps.Keys(s.queues)) {
		for _, w := range s.queues[name].writes {
			if server == "" || name == server {
				errs = append(errs, &StoreError{Op: w.op(), Server: name, Err: cause})
			}
		}
	}
	s.errs = slices.DeleteFunc(s.errs, func(se *StoreError) bool {
		mine := server == "" || se.Server == server
		if mine {
			errs = append(errs, se)
		}
		return mine
	})
	return errors.Join(errs...)
}

// queue is the writes of server ("": any server's) left; nil when none.
func (s *saver) queue(server string) *queue {
	s.mu.Lock()
	defer s.mu.Unlock()
	if server != "" {
		return s.queues[server]
	}
	for _, q := range s.queues {
		return q
	}
	return nil
}
