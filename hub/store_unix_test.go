//go:build unix

package hub_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/hub"
)

// A state path that is no regular file is refused as corrupt without
// waiting on it: a named pipe with no writer (whose open would wait for
// one), the same behind a symlink, a device that never ends, a directory.
func TestFileStoreRefusesWhatIsNotARegularFile(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s := &hub.FileStore{Dir: dir}
	require.NoError(t, syscall.Mkfifo(s.Path("fifo"), 0o600))
	require.NoError(t, syscall.Mkfifo(filepath.Join(t.TempDir(), "elsewhere"), 0o600))
	require.NoError(t, os.Symlink(filepath.Join(filepath.Dir(s.Path("fifo")), "fifo.json"), s.Path("linked")))
	require.NoError(t, os.Symlink("/dev/zero", s.Path("zero")))
	require.NoError(t, os.Mkdir(s.Path("dir"), 0o700))
	for _, name := range []string{"fifo", "linked", "zero", "dir"} {
		_, err := s.Load(ctx, name)
		require.ErrorIs(t, err, hub.ErrCorrupt, name)
		require.ErrorIs(t, err, hub.ErrNotRegularFile, name)
		var se *hub.StoreError
		require.ErrorAs(t, err, &se, name)
		require.Equal(t, "load", se.Op)
	}
}

// A hub whose stored state for a server is a named pipe starts the server
// fresh, reporting the store's failure, instead of waiting on the pipe for
// good.
func TestAddWithANamedPipeForStateStartsFresh(t *testing.T) {
	store := &hub.FileStore{Dir: t.TempDir()}
	require.NoError(t, syscall.Mkfifo(store.Path("srv"), 0o600))
	seen := make(chan events.Event, 64)
	h := hub.New(hub.Config{Store: store, StoreTimeout: time.Minute, Events: events.SinkFunc(func(e events.Event) {
		if e.Kind == hub.KindStoreFailed {
			seen <- e
		}
	})})
	defer h.Close()
	require.NoError(t, h.Add(t.Context(), hub.ServerConfig{Name: "srv", URL: "http://127.0.0.1:1/mcp"}))
	e := <-seen
	require.Equal(t, "srv", e.Server)
	require.Equal(t, "load", e.Op)
	require.Contains(t, e.Detail, "not a regular file")
}

// LoadServers opened the servers file as it was: a named pipe with no
// writer held it for good (its open waits for one), /dev/zero was read to
// the size bound. What is not a regular file is refused, as FileStore
// refuses a state file, before anything is read: a *ConfigError wrapping
// ErrNotRegularFile.
func TestLoadServersRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.json")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	require.NoError(t, os.Symlink(fifo, filepath.Join(dir, "linked.json")))
	require.NoError(t, os.Symlink("/dev/zero", filepath.Join(dir, "zero.json")))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "dir.json"), 0o700))
	for _, name := range []string{"dir.json", "zero.json", "linked.json", "fifo.json"} {
		_, err := hub.LoadServers(filepath.Join(dir, name))
		require.ErrorIs(t, err, hub.ErrNotRegularFile, name)
		var ce *hub.ConfigError
		require.ErrorAs(t, err, &ce, name)
		require.Contains(t, ce.Reason, name)
	}
	_, err := hub.LoadServers(filepath.Join(dir, "missing.json"))
	require.ErrorIs(t, err, os.ErrNotExist)
}
