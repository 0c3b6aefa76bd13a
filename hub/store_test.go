package hub_test

import (
	"context"
	"time"

	"github.com/mcpsup/mcpsup/mcptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/httpsession"
	"github.com/mcpsup/mcpsup/hub"
	"github.com/mcpsup/mcpsup/supervisor"
)

func resumeState(endpoint string) *supervisor.ResumeState {
	return &supervisor.ResumeState{Version: supervisor.ResumeStateVersion, Endpoint: endpoint,
		ResumeState: httpsession.ResumeState{SessionID: "session-0123456789abcdef", ProtocolVersion: "2025-11-25"}}
}

func TestFileStoreRoundTripAndBounds(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s := &hub.FileStore{Dir: dir}
	rs := resumeState("http://127.0.0.1:1/mcp")
	require.NoError(t, s.Save(ctx, "a", rs))
	got, err := s.Load(ctx, "a")
	require.NoError(t, err)
	require.Equal(t, rs.SessionID, got.SessionID)

	// A name that is not a file name stays inside the directory.
	require.NoError(t, s.Save(ctx, "../evil/name", rs))
	require.Equal(t, dir, filepath.Dir(s.Path("../evil/name")))
	require.NotEqual(t, s.Path("a/b"), s.Path("a_b"), "names that sanitise alike keep their own files")
	changed := strings.TrimSuffix(filepath.Base(s.Path("a b")), ".json") // a_b_ and a hash
	require.True(t, hub.ValidName(changed))
	require.NotEqual(t, s.Path("a b"), s.Path(changed), "a name written as another's changed one keeps its own file")
	require.Equal(t, filepath.Join(dir, "a_b_not-a-hash.json"), s.Path("a_b_not-a-hash"), "a name that only looks close is kept")

	// A state an earlier FileStore kept under such a name as it is is
	// found and moved to the name's path; another server's file there (the
	// changed name's own) is left alone.
	const dated = "backup_2025061501"
	require.NoError(t, s.Save(ctx, dated, rs))
	earlier := filepath.Join(dir, dated+".json")
	require.NoError(t, os.Rename(s.Path(dated), earlier))
	got, err = s.Load(ctx, dated)
	require.NoError(t, err)
	require.Equal(t, rs.SessionID, got.SessionID)
	require.NoFileExists(t, earlier)
	require.FileExists(t, s.Path(dated))
	require.NoError(t, s.Save(ctx, "a b", rs)) // at a_b_<hash>.json: changed's own path as it was
	_, err = s.Load(ctx, changed)
	require.ErrorIs(t, err, hub.ErrNotFound, "another server's file is not taken")
	_, err = s.Load(ctx, "a b")
	require.NoError(t, err, "and stays where it is")
	require.NoError(t, s.Delete(ctx, dated))
	require.NoError(t, s.Delete(ctx, "a b"))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 2, "no temporary file left behind")

	// Too large to read: corrupt, naming the bound.
	require.NoError(t, os.WriteFile(s.Path("big"), []byte(strings.Repeat(" ", int(hub.DefaultMaxFileBytes)+1)), 0o600))
	_, err = s.Load(ctx, "big")
	require.ErrorIs(t, err, hub.ErrCorrupt)
	require.ErrorContains(t, err, "more than")

	// A malformed state names the field.
	require.NoError(t, os.WriteFile(s.Path("bad"), []byte(`{"version":1,"server":"bad","resume":{"version":2}}`), 0o600))
	_, err = s.Load(ctx, "bad")
	require.ErrorIs(t, err, hub.ErrCorrupt)
	var rse *supervisor.ResumeStateError
	require.ErrorAs(t, err, &rse)
	require.Equal(t, "version", rse.Field)

	small := &hub.FileStore{Dir: dir, MaxBytes: 64}
	var se *hub.StoreError
	require.ErrorAs(t, small.Save(ctx, "a", rs), &se)
	require.Equal(t, "save", se.Op)

	require.NoError(t, s.Delete(ctx, "a"))
	require.NoError(t, s.Delete(ctx, "a"), "deleting nothing is not an error")
	_, err = s.Load(ctx, "a")
	require.ErrorIs(t, err, hub.ErrNotFound)
}

// savingStore reports every Save on a channel.
type savingStore struct {
	hub.FileStore
	saved chan *supervisor.ResumeState
}

func (s *savingStore) Save(ctx context.Context, server string, rs *supervisor.ResumeState) error {
	s.saved <- rs
	return s.FileStore.Save(ctx, server, rs)
}

// A resume state is saved when its session opens and again when the stream
// decision changes, before any Detach.
func TestStatesSavedOnSessionAndStreamDecision(t *testing.T) {
	f := newFixture(t, map[string]mcptest.Options{"hostile": {}})
	f.servers["hostile"].Gateway().Add(mcptest.GETHostile())
	store := &savingStore{FileStore: hub.FileStore{Dir: t.TempDir()}, saved: make(chan *supervisor.ResumeState, 16)}
	cfg := f.config(store)
	cfg.Supervisor.Stream.Keeper = supervisor.StreamKeeper{Span: 200 * time.Millisecond, InitialBackoff: 20 * time.Millisecond, MaxBackoff: 50 * time.Millisecond}
	cfg.Supervisor.Stream.HostileRule = supervisor.HostileRule{Threshold: 3}
	h := f.hub(cfg)

	next := func() *supervisor.ResumeState {
		select {
		case rs := <-store.saved:
			return rs
		case <-f.ctx.Done():
			t.Fatal("no save")
			return nil
		}
	}
	first := next()
	require.Equal(t, f.servers["hostile"].SessionIDs(), []string{first.SessionID}, "saved when the session opened")
	require.False(t, first.StandaloneStream.Off)
	require.True(t, next().StandaloneStream.Off, "saved again when the stream was turned off")
	require.NoError(t, h.Detach())
	rs, err := store.Load(f.ctx, "hostile")
	require.NoError(t, err)
	require.True(t, rs.StandaloneStream.Off)
}

// A state saved for another endpoint under this server's name is foreign:
// the server starts fresh, with an event.
func TestStateOfAnotherEndpointStartsFresh(t *testing.T) {
	f := newFixture(t, map[string]mcptest.Options{"a": {}})
	store := &hub.FileStore{Dir: t.TempDir()}
	// The endpoint it was saved for carries credentials of its own (a
	// rotated key): the event names it masked.
	const key, code = "NjQ3ODk5MzEtYWJjZC00ZTk2", "c0de-0123456789"
	require.NoError(t, store.Save(f.ctx, "a", resumeState("http://127.0.0.1:1/s/"+key+"/mcp?code="+code)))
	h := f.hub(f.config(store))
	evs := f.eventsOf(hub.KindStoreFailed)
	require.Len(t, evs, 1)
	require.Equal(t, "load", evs[0].Op)
	require.Contains(t, evs[0].Detail, "saved for endpoint")
	require.Contains(t, evs[0].Detail, "/s/[redacted]/mcp?code=[redacted]")
	require.NotContains(t, evs[0].Detail, key)
	require.NotContains(t, evs[0].Detail, code)
	require.Equal(t, 1, f.servers["a"].Log().Count("initialize"))
	require.Equal(t, supervisor.Ready, h.Health()[0].State)
}

// blockingStore holds every Delete until release is closed (or its
// context ends) and tells of each on deleting.
type blockingStore struct {
	hub.FileStore
	deleting chan string
	release  chan struct{}
}

func (s *blockingStore) Delete(ctx context.Context, server string) error {
	s.deleting <- server
	select {
	case <-s.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	return s.FileStore.Delete(ctx, server)
}

// Remove whose context ends before the server's store write is done
// returns a *StoreError naming the server and the write, wrapping the
// context's error, not the bare context error; the write still runs and
// its outcome is nobody's error later.
func TestRemoveWhoseContextEndsNamesTheUnfinishedWrite(t *testing.T) {
	f := newFixture(t, map[string]mcptest.Options{"a": {}, "b": {}})
	store := &blockingStore{FileStore: hub.FileStore{Dir: t.TempDir()}, deleting: make(chan string, 4), release: make(chan struct{})}
	h := f.hub(f.config(store))

	ctx, cancel := context.WithCancel(f.ctx)
	removed := make(chan error, 1)
	go func() { removed <- h.Remove(ctx, "a", hub.EndSession) }()
	select {
	case name := <-store.deleting:
		require.Equal(t, "a", name)
	case <-f.ctx.Done():
		t.Fatal("no delete")
	}
	cancel()
	err := <-removed
	var se *hub.StoreError
	require.ErrorAs(t, err, &se)
	require.Equal(t, "a", se.Server)
	require.Equal(t, "delete", se.Op)
	require.ErrorIs(t, err, context.Canceled)

	close(store.release)
	require.NoError(t, h.Close(), "the finished write left no error behind")
	require.Equal(t, "b", <-store.deleting)
}

// Close whose store writes outlast StoreTimeout names every server whose
// write failed or was not done, each a *StoreError wrapping
// context.DeadlineExceeded.
func TestCloseNamesTheWritesStoreTimeoutCut(t *testing.T) {
	f := newFixture(t, map[string]mcptest.Options{"a": {}, "b": {}})
	store := &blockingStore{FileStore: hub.FileStore{Dir: t.TempDir()}, deleting: make(chan string, 4), release: make(chan struct{})}
	cfg := f.config(store)
	cfg.StoreTimeout = 50 * time.Millisecond
	h := f.hub(cfg)

	err := h.Close()
	require.ErrorIs(t, err, context.DeadlineExceeded)
	named := map[string]bool{}
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var se *hub.StoreError
		require.ErrorAs(t, e, &se)
		require.Equal(t, "delete", se.Op)
		named[se.Server] = true
	}
	require.Equal(t, map[string]bool{"a": true, "b": true}, named)
}

// malformedStore loads, for every server, a state of an unknown version
// saved for the right endpoint: a Store that does not parse with ParseState.
type malformedStore struct {
	hub.FileStore
	endpoint string
}

func (s *malformedStore) Load(context.Context, string) (*supervisor.ResumeState, error) {
	rs := resumeState(s.endpoint)
	rs.Version = 9
	return rs, nil
}

// A state a custom Store loads that the supervisor would refuse is a
// corrupt one: the server starts fresh after a store-failed event.
func TestMalformedStateFromAStoreStartsFresh(t *testing.T) {
	f := newFixture(t, map[string]mcptest.Options{"a": {}})
	store := &malformedStore{FileStore: hub.FileStore{Dir: t.TempDir()}, endpoint: f.servers["a"].URL()}
	h := f.hub(f.config(store))
	evs := f.eventsOf(hub.KindStoreFailed)
	require.Len(t, evs, 1)
	require.Equal(t, "load", evs[0].Op)
	require.Contains(t, evs[0].Detail, "version")
	require.Equal(t, 1, f.servers["a"].Log().Count("initialize"))
	require.Equal(t, supervisor.Ready, h.Health()[0].State)
}
