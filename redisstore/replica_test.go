package redisstore_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/hub"
	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/redisstore"
	"github.com/mcpsup/mcpsup/supervisor"
)

// The replica subprocess: the test binary run again with these variables
// set is one host replica (a hub over Redis with one server) that writes
// its events as JSON lines to stdout and detaches when stdin closes.
const (
	envReplica = "MCPSUP_TEST_REPLICA" // the holder name
	envRedis   = "MCPSUP_TEST_REDIS"
	envURL     = "MCPSUP_TEST_URL"
	envTTL     = "MCPSUP_TEST_TTL"
	envServer  = "MCPSUP_TEST_SERVER"
)

const serverName = "search"

// testTTL is the lease TTL of the replica tests: short, so a failover is
// quick, and long enough that a loaded machine renews in time.
const testTTL = 3 * time.Second

func TestMain(m *testing.M) {
	if name := os.Getenv(envReplica); name != "" {
		os.Exit(runReplica(name))
	}
	goleak.VerifyTestMain(m)
}

// replicaHeader names the replica that sent a request, so the server side
// can tell the replicas apart (they share the session id).
const replicaHeader = "X-Test-Replica"

// replicaServer is the server entry of the replica named replica.
func replicaServer(server, url, replica string) hub.ServerConfig {
	return hub.ServerConfig{Name: server, URL: url, Headers: map[string]string{replicaHeader: "replica-" + replica}}
}

// replicaConfig is the hub configuration every replica of these tests uses.
func replicaConfig(store hub.Store, sink events.Sink) hub.Config {
	return hub.Config{
		Supervisor: supervisor.Config{
			Era:      supervisor.Era2025,
			Recovery: supervisor.RecoveryConfig{Backoff: supervisor.Backoff{InitialInterval: 20 * time.Millisecond, MaxInterval: 200 * time.Millisecond, NoJitter: true}},
		},
		Store:        store,
		StoreTimeout: time.Second,
		Lease:        hub.LeaseConfig{TTL: testTTL},
		Events:       sink,
	}
}

func runReplica(name string) int {
	ttl, _ := time.ParseDuration(os.Getenv(envTTL))
	rdb := redis.NewClient(&redis.Options{Addr: os.Getenv(envRedis), MaxRetries: -1})
	defer rdb.Close()
	out := events.NewJSONLines(os.Stdout)
	cfg := replicaConfig(&redisstore.Store{Client: rdb, Holder: name}, out)
	if ttl > 0 {
		cfg.Lease.TTL = ttl
	}
	h := hub.New(cfg)
	name = serverName
	if s := os.Getenv(envServer); s != "" {
		name = s
	}
	if err := h.Add(context.Background(), replicaServer(name, os.Getenv(envURL), os.Getenv(envReplica))); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM)
	eof := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); close(eof) }()
	select {
	case <-eof:
	case <-stop:
	}
	if err := h.Detach(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// replica is a replica subprocess and the events it wrote.
type replica struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	rec   *events.Recorder
	done  chan struct{}
}

func startReplica(t *testing.T, name, redisAddr, url string) *replica {
	t.Helper()
	return startReplicaServer(t, name, redisAddr, url, testTTL, serverName)
}

// startReplicaServer starts a replica subprocess serving server, with the
// lease TTL ttl.
func startReplicaServer(t testing.TB, name, redisAddr, url string, ttl time.Duration, server string) *replica {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), envReplica+"="+name, envRedis+"="+redisAddr, envURL+"="+url, envTTL+"="+ttl.String(), envServer+"="+server)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	r := &replica{cmd: cmd, stdin: stdin, rec: &events.Recorder{}, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			var ev events.Event
			if json.Unmarshal(sc.Bytes(), &ev) == nil {
				r.rec.Emit(ev)
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		<-r.done
		_ = cmd.Wait()
	})
	return r
}

// kill ends the replica's process at once (SIGKILL): no detach, no release.
func (r *replica) kill(t testing.TB) {
	require.NoError(t, r.cmd.Process.Kill())
	<-r.done
	_ = r.cmd.Wait()
}

func (r *replica) signal(t *testing.T, sig syscall.Signal) {
	require.NoError(t, r.cmd.Process.Signal(sig))
}

// has waits until an event of kind (and, when op is not "", that Op) is
// recorded, and returns it.
func has(ctx context.Context, t *testing.T, rec *events.Recorder, kind events.Kind, match func(events.Event) bool) events.Event {
	t.Helper()
	var found events.Event
	_, err := rec.WaitFor(ctx, func(evs []events.Event) bool {
		for _, ev := range evs {
			if ev.Kind == kind && (match == nil || match(ev)) {
				found = ev
				return true
			}
		}
		return false
	})
	require.NoError(t, err, "waiting for %s", kind)
	return found
}

func readyNow(ev events.Event) bool {
	return ev.Kind == events.KindTransition && ev.To == events.State(supervisor.Ready.String())
}

// streamWatch is a proxy in front of the MCP server that watches the
// standalone GET streams it accepted: per session, how many are open at
// once, and how many GETs the server refused with 409 (a second stream).
type streamWatch struct {
	srv   *httptest.Server
	mu    sync.Mutex
	open  map[string]int
	most  int
	c409  int
	wake  chan struct{}
	proxy *httputil.ReverseProxy
	from  []string // the replica of every request, in arrival order
}

func newStreamWatch(t *testing.T, target string) *streamWatch {
	u, err := url.Parse(target)
	require.NoError(t, err)
	w := &streamWatch{open: map[string]int{}, wake: make(chan struct{})}
	w.proxy = &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(&url.URL{Scheme: u.Scheme, Host: u.Host}) },
		FlushInterval: -1,
		ModifyResponse: func(resp *http.Response) error {
			if resp.Request.Method != http.MethodGet {
				return nil
			}
			sid := resp.Request.Header.Get("Mcp-Session-Id")
			w.mu.Lock()
			defer w.mu.Unlock()
			switch resp.StatusCode {
			case http.StatusOK:
				w.open[sid]++
				w.most = max(w.most, w.open[sid])
				resp.Body = &closeNote{ReadCloser: resp.Body, done: func() { w.closed(sid) }}
			case http.StatusConflict:
				w.c409++
			}
			return nil
		},
	}
	w.srv = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.mu.Lock()
		w.from = append(w.from, r.Header.Get(replicaHeader))
		w.mu.Unlock()
		w.proxy.ServeHTTP(rw, r)
	}))
	t.Cleanup(w.srv.Close)
	return w
}

func (w *streamWatch) URL(path string) string { return w.srv.URL + path }

func (w *streamWatch) closed(sid string) {
	w.mu.Lock()
	w.open[sid]--
	close(w.wake)
	w.wake = make(chan struct{})
	w.mu.Unlock()
}

// handovers returns the replicas in the order their requests arrived, runs
// merged: [replica-a replica-b] when a sent everything before b's first.
func (w *streamWatch) handovers() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var runs []string
	for _, f := range w.from {
		if len(runs) == 0 || runs[len(runs)-1] != f {
			runs = append(runs, f)
		}
	}
	return runs
}

// facts returns the most streams one session had open at once and the
// 409s.
func (w *streamWatch) facts() (most, refused int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.most, w.c409
}

// waitNoneOpen waits until no standalone stream is open.
func (w *streamWatch) waitNoneOpen(ctx context.Context, t *testing.T) {
	t.Helper()
	for {
		w.mu.Lock()
		n, wake := 0, w.wake
		for _, c := range w.open {
			n += c
		}
		w.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-wake:
		case <-ctx.Done():
			t.Fatalf("%d standalone streams still open: %v", n, ctx.Err())
		}
	}
}

type closeNote struct {
	io.ReadCloser
	once sync.Once
	done func()
}

func (c *closeNote) Close() error {
	err := c.ReadCloser.Close()
	c.once.Do(c.done)
	return err
}

// watchedStore is a Store whose leases report their accepted saves.
type watchedStore struct {
	*redisstore.Store
	saved chan string // the "<holder>:<token>" of each accepted fenced save
}

func (s *watchedStore) Acquire(ctx context.Context, server string, ttl time.Duration) (hub.Lease, error) {
	l, err := s.Store.Acquire(ctx, server, ttl)
	if err != nil {
		return nil, err
	}
	return &watchedLease{Lease: l, s: s}, nil
}

type watchedLease struct {
	hub.Lease
	s *watchedStore
}

func (l *watchedLease) Save(ctx context.Context, rs *supervisor.ResumeState) error {
	err := l.Lease.Save(ctx, rs)
	if err == nil {
		select {
		case l.s.saved <- l.s.Holder + ":" + strconv.FormatUint(l.Token(), 10):
		default:
		}
	}
	return err
}

// world is one Redis, one MCP server behind a stream watch, and the
// settings of the replicas over them.
type world struct {
	t     *testing.T
	ctx   context.Context
	redis interface {
		Addr() string
		Stop()
		Restart(context.Context) error
	}
	rdb   *redis.Client
	mcp   *mcptest.Server
	watch *streamWatch
	ttl   time.Duration // the in-process replicas' lease TTL; default testTTL
}

func newWorld(t *testing.T) *world {
	srv, rdb := newRedis(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	m, err := mcptest.NewServer(mcptest.Options{Tools: 1})
	require.NoError(t, err)
	t.Cleanup(m.Close)
	w := &world{t: t, ctx: ctx, redis: srv, rdb: rdb, mcp: m, watch: newStreamWatch(t, m.URL())}
	w.dumpOnFailure()
	return w
}

func (w *world) url() string { return w.watch.URL("/mcp") }

// waitSavedBy waits until the server's stored state was saved under a
// lease of holder.
func (w *world) waitSavedBy(holder string) {
	w.t.Helper()
	waitSavedBy(w.ctx, w.t, w.rdb, serverName, holder)
}

// waitSavedBy waits until server's stored state was saved under a lease of
// holder (Redis keyspace notifications say when the key is set).
func waitSavedBy(ctx context.Context, t testing.TB, rdb *redis.Client, server, holder string) {
	t.Helper()
	require.NoError(t, rdb.ConfigSet(ctx, "notify-keyspace-events", "K$").Err())
	sub := rdb.Subscribe(ctx, "__keyspace@0__:mcpsup:{"+server+"}:state")
	defer sub.Close()
	_, err := sub.Receive(ctx) // subscribed: no set is missed from here on
	require.NoError(t, err)
	st := &redisstore.Store{Client: rdb}
	for {
		by, err := st.SavedBy(ctx, server)
		if err == nil && strings.HasPrefix(by, holder+":") {
			return
		}
		select {
		case <-sub.Channel():
		case <-ctx.Done():
			t.Fatalf("no state saved by %s (last %q, %v)", holder, by, err)
		}
	}
}

// hub starts an in-process replica named name.
func (w *world) hub(name string) (*hub.Hub, *watchedStore, *events.Recorder) {
	rec := &events.Recorder{}
	st := &watchedStore{Store: &redisstore.Store{Client: w.rdb, Holder: name}, saved: make(chan string, 64)}
	cfg := replicaConfig(st, rec)
	if w.ttl > 0 {
		cfg.Lease.TTL = w.ttl
	}
	h := hub.New(cfg)
	w.t.Cleanup(func() { _ = h.Detach() })
	require.NoError(w.t, h.Add(w.ctx, replicaServer(serverName, w.url(), name)))
	return h, st, rec
}

func (w *world) initializes() int { return w.mcp.Log().Count("initialize") }

// dumpOnFailure logs the server's requests when the test fails.
func (w *world) dumpOnFailure() {
	w.t.Cleanup(func() {
		if !w.t.Failed() {
			return
		}
		for _, e := range w.mcp.Log().Entries() {
			w.t.Logf("%d %s %s id=%s session=%.8s status=%d by=%s done=%v", e.Seq, e.Verb, e.Method, e.ID, e.SessionID, e.Status, e.By, e.Done)
		}
	})
}

func leaseOf(t *testing.T, h *hub.Hub) hub.LeaseState {
	t.Helper()
	hs := h.Health()
	require.Len(t, hs, 1)
	return hs[0].Lease
}

func TestHolderKilledOtherResumesWithoutInitialize(t *testing.T) {
	w := newWorld(t)
	a := startReplica(t, "a", w.redis.Addr(), w.url())
	has(w.ctx, t, a.rec, hub.KindLeaseAcquired, nil)
	has(w.ctx, t, a.rec, events.KindTransition, readyNow)
	w.waitSavedBy("a") // a killed before its save lands loses the session: the next holder starts fresh
	b, _, brec := w.hub("b")
	require.Equal(t, hub.LeaseStandby, leaseOf(t, b))
	require.Equal(t, 1, w.initializes())
	sessions := w.mcp.SessionIDs()
	require.Len(t, sessions, 1)

	a.kill(t)
	acq := has(w.ctx, t, brec, hub.KindLeaseAcquired, nil)
	require.Equal(t, events.HashSessionID(sessions[0]), acq.SessionID, "resuming a's session")
	require.NoError(t, b.WaitReady(w.ctx, hub.All))
	require.Equal(t, hub.LeaseHeld, leaseOf(t, b))

	res, err := b.CallTool(w.ctx, &mcp.CallToolParams{Name: serverName + "__" + mcptest.RecordTool, Arguments: map[string]any{"id": "after-failover"}})
	require.NoError(t, err)
	require.False(t, res.IsError)
	require.Equal(t, 1, w.mcp.Invocations(mcptest.RecordTool, "after-failover"))
	require.Equal(t, 1, w.initializes(), "the new holder resumed the session: no initialize")
	require.Equal(t, sessions, w.mcp.SessionIDs(), "the server-side session is the same one")
	most, refused := w.watch.facts()
	require.Equal(t, 1, most, "never two standalone streams of one session at once")
	require.Zero(t, refused)
	require.Equal(t, []string{"replica-a", "replica-b"}, w.watch.handovers(), "b sent nothing before a's last request")
}

func TestPausedHolderCannotSaveOverTheNewHolder(t *testing.T) {
	w := newWorld(t)
	a := startReplica(t, "a", w.redis.Addr(), w.url())
	has(w.ctx, t, a.rec, hub.KindLeaseAcquired, nil)
	has(w.ctx, t, a.rec, events.KindTransition, readyNow)
	w.waitSavedBy("a")
	b, bstore, brec := w.hub("b")
	sessions := w.mcp.SessionIDs()

	// a stops (as a process stalled by the OS or a long GC would), still
	// holding its connections; its lease ends at Redis and b takes over.
	a.signal(t, syscall.SIGSTOP)
	has(w.ctx, t, brec, hub.KindLeaseAcquired, nil)
	require.NoError(t, b.WaitReady(w.ctx, hub.All))
	var bHolder string
	select {
	case bHolder = <-bstore.saved:
	case <-w.ctx.Done():
		t.Fatal("b never saved its state")
	}

	// a wakes: its hold has ended by its own clock; it detaches and its
	// last save is refused by the fence.
	a.signal(t, syscall.SIGCONT)
	lost := has(w.ctx, t, a.rec, hub.KindLeaseLost, nil)
	require.Equal(t, hub.ReasonHoldEnded, lost.Reason)
	refused := has(w.ctx, t, a.rec, hub.KindStoreFailed, func(ev events.Event) bool { return ev.Op == "save" })
	require.Contains(t, refused.Detail, "fenced")
	require.Contains(t, refused.Detail, "the current one is "+bHolder)

	by, err := bstore.SavedBy(w.ctx, serverName)
	require.NoError(t, err)
	require.Equal(t, bHolder, by, "the stored state is still the new holder's")
	require.Equal(t, hub.LeaseHeld, leaseOf(t, b))
	res, err := b.CallTool(w.ctx, &mcp.CallToolParams{Name: serverName + "__" + mcptest.RecordTool, Arguments: map[string]any{"id": "b-serves"}})
	require.NoError(t, err)
	require.False(t, res.IsError)
	require.Equal(t, 1, w.initializes())
	require.Equal(t, sessions, w.mcp.SessionIDs())
	most, conflicts := w.watch.facts()
	require.Equal(t, 1, most, "never two standalone streams of one session at once")
	// While a was stopped its stream stayed open: the server refused b's
	// GETs (409) until a woke and detached.
	t.Logf("GETs refused 409 while the paused holder's stream was open: %d", conflicts)
	// Woken past its hold, a sent nothing more: its hold gate refused it.
	require.Equal(t, []string{"replica-a", "replica-b"}, w.watch.handovers(), "a sent nothing after b's first request")
}

// waitSaved waits for the store's next accepted fenced save.
func waitSaved(ctx context.Context, t *testing.T, st *watchedStore) string {
	t.Helper()
	select {
	case by := <-st.saved:
		return by
	case <-ctx.Done():
		t.Fatal("no save accepted")
		return ""
	}
}

func drain(ch chan string) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}

func TestRedisRestartedWhileTheLeaseLivesKeepsTheSession(t *testing.T) {
	w := newWorld(t)
	w.ttl = 2 * testTTL // the restart must come before the hold ends, on a loaded machine too
	a, astore, arec := w.hub("a")
	require.NoError(t, a.WaitReady(w.ctx, hub.All))
	waitSaved(w.ctx, t, astore)
	b, _, _ := w.hub("b")
	gen := a.Health()[0].Generation

	w.redis.Stop()
	has(w.ctx, t, arec, hub.KindStoreFailed, func(ev events.Event) bool { return ev.Op == "renew" })
	// Redis is down: a keeps serving its live session.
	res, err := a.CallTool(w.ctx, &mcp.CallToolParams{Name: serverName + "__" + mcptest.RecordTool, Arguments: map[string]any{"id": "redis-down"}})
	require.NoError(t, err)
	require.False(t, res.IsError)

	drain(astore.saved)
	require.NoError(t, w.redis.Restart(w.ctx)) // empty: no persistence
	// a's next renewal takes the lease again (no one acquired meanwhile)
	// and saves its state again.
	require.Equal(t, astore.Holder+":1", waitSaved(w.ctx, t, astore))
	rs, err := astore.Load(w.ctx, serverName)
	require.NoError(t, err)
	require.Equal(t, w.mcp.SessionIDs(), []string{rs.SessionID})

	require.Empty(t, eventsOf(arec, hub.KindLeaseLost))
	require.Equal(t, hub.LeaseHeld, leaseOf(t, a))
	require.Equal(t, hub.LeaseStandby, leaseOf(t, b))
	require.Equal(t, gen, a.Health()[0].Generation, "the same session all along")
	require.Equal(t, 1, w.initializes())
}

func TestRedisDownPastTheLeaseNobodyServes(t *testing.T) {
	w := newWorld(t)
	a, astore, arec := w.hub("a")
	require.NoError(t, a.WaitReady(w.ctx, hub.All))
	waitSaved(w.ctx, t, astore)
	b, _, brec := w.hub("b")
	sessions := w.mcp.SessionIDs()

	w.redis.Stop()
	lost := has(w.ctx, t, arec, hub.KindLeaseLost, nil)
	require.Equal(t, hub.ReasonHoldEnded, lost.Reason)
	// a stopped serving: its stream is closed, its names are gone, and b,
	// which cannot reach Redis either, does not serve.
	w.watch.waitNoneOpen(w.ctx, t)
	require.Empty(t, a.MCPTools())
	require.Equal(t, hub.LeaseStandby, leaseOf(t, a))
	require.Equal(t, hub.LeaseStandby, leaseOf(t, b))
	require.Empty(t, eventsOf(brec, hub.KindLeaseAcquired))
	_, err := a.CallTool(w.ctx, &mcp.CallToolParams{Name: serverName + "__" + mcptest.RecordTool, Arguments: map[string]any{"id": "x"}})
	require.ErrorIs(t, err, hub.ErrUnknownName)
	require.Zero(t, w.mcp.Log().CountVerb("DELETE"), "detached, never ended")

	// Redis comes back empty. b leaves first, so a acquires again: the
	// state is gone from Redis, a resumes the one it kept.
	require.NoError(t, b.Detach())
	require.NoError(t, w.redis.Restart(w.ctx))
	_, err = arec.WaitFor(w.ctx, func(evs []events.Event) bool { return countKind(evs, hub.KindLeaseAcquired) == 2 })
	require.NoError(t, err, "a acquires again")
	require.NoError(t, a.WaitReady(w.ctx, hub.All))
	require.Equal(t, 1, w.initializes())
	require.Equal(t, sessions, w.mcp.SessionIDs())
	most, _ := w.watch.facts()
	require.Equal(t, 1, most)
}

func eventsOf(rec *events.Recorder, kind events.Kind) []events.Event {
	var out []events.Event
	for _, ev := range rec.Events() {
		if ev.Kind == kind {
			out = append(out, ev)
		}
	}
	return out
}

func countKind(evs []events.Event, kind events.Kind) int {
	n := 0
	for _, ev := range evs {
		if ev.Kind == kind {
			n++
		}
	}
	return n
}

func TestCloseEndsTheSessionDeletesTheStateAndReleases(t *testing.T) {
	w := newWorld(t)
	a, astore, _ := w.hub("a")
	require.NoError(t, a.WaitReady(w.ctx, hub.All))
	waitSaved(w.ctx, t, astore)

	require.NoError(t, a.Close())
	require.Equal(t, 1, w.mcp.Log().CountVerb("DELETE"), "Close ends the server-side session")
	_, err := astore.Load(w.ctx, serverName)
	require.ErrorIs(t, err, hub.ErrNotFound, "the fenced delete went through")
	l, err := (&redisstore.Store{Client: w.rdb, Holder: "c"}).Acquire(w.ctx, serverName, time.Minute)
	require.NoError(t, err, "the lease was released")
	require.Equal(t, uint64(2), l.Token())
}

func TestDetachSavesAndReleases(t *testing.T) {
	w := newWorld(t)
	a, astore, _ := w.hub("a")
	require.NoError(t, a.WaitReady(w.ctx, hub.All))
	held := waitSaved(w.ctx, t, astore)

	require.NoError(t, a.Detach())
	require.Zero(t, w.mcp.Log().CountVerb("DELETE"))
	by, err := astore.SavedBy(w.ctx, serverName)
	require.NoError(t, err)
	require.Equal(t, held, by)
	rs, err := astore.Load(w.ctx, serverName)
	require.NoError(t, err)
	require.Equal(t, w.mcp.SessionIDs(), []string{rs.SessionID})
	_, err = (&redisstore.Store{Client: w.rdb, Holder: "c"}).Acquire(w.ctx, serverName, time.Minute)
	require.NoError(t, err, "the lease was released")
}
