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
		require.ErrorContains(t, err, "not a regular file", name)
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
