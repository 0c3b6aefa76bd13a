package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/hub"
	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/redisstore"
	"github.com/mcpsup/mcpsup/redisstore/internal/redisrun"
	"github.com/mcpsup/mcpsup/supervisor"
)

// A replica process is this program run again with these variables.
const (
	envChild = "MCPSUP_REPLICAS_CHILD" // the replica's name
	envRedis = "MCPSUP_REPLICAS_REDIS"
	envURL   = "MCPSUP_REPLICAS_URL"
	envTTL   = "MCPSUP_REPLICAS_TTL"
)

const serverName = "search"

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("replicas", flag.ContinueOnError)
	fl.SetOutput(stderr)
	redisAddr := fl.String("redis", "", "a Redis to use (default: a private redis-server)")
	url := fl.String("url", "", "the MCP server (default: an mcptest server in this process)")
	ttl := fl.Duration("ttl", 3*time.Second, "the lease TTL")
	timeout := fl.Duration("timeout", 60*time.Second, "how long the whole run may take")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	if *ttl < hub.MinLeaseTTL {
		fmt.Fprintf(stderr, "replicas: -ttl %v: at least %v\n", *ttl, hub.MinLeaseTTL)
		return 2
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	if err := failover(ctx, stdout, *redisAddr, *url, *ttl); err != nil {
		fmt.Fprintln(stderr, "replicas:", err)
		return 1
	}
	return 0
}

func failover(ctx context.Context, out io.Writer, redisAddr, url string, ttl time.Duration) error {
	if redisAddr == "" {
		dir, err := os.MkdirTemp("", "replicas-redis-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		srv, err := redisrun.Start(ctx, dir)
		if err != nil {
			return err
		}
		defer srv.Stop()
		redisAddr = srv.Addr()
	}
	var mcp *mcptest.Server
	if url == "" {
		var err error
		if mcp, err = mcptest.NewServer(mcptest.Options{Tools: 2}); err != nil {
			return err
		}
		defer mcp.Close()
		url = mcp.URL()
	}
	start := time.Now()
	var outMu sync.Mutex // the replicas' readers print too
	say := func(who, format string, a ...any) {
		outMu.Lock()
		defer outMu.Unlock()
		fmt.Fprintf(out, "%7.3fs %-2s %s\n", time.Since(start).Seconds(), who, fmt.Sprintf(format, a...))
	}
	say("", "redis %s, server %s, lease TTL %v", redisAddr, url, ttl)

	a, err := spawn(ctx, "a", redisAddr, url, ttl, say)
	if err != nil {
		return err
	}
	defer a.stop()
	if err := a.wait(ctx, isReady); err != nil {
		return fmt.Errorf("replica a: %w", err)
	}
	// A holder killed before its state is saved loses the session (the
	// next holder starts fresh): kill a once Redis has its state.
	rdb := redis.NewClient(&redis.Options{Addr: redisAddr, ContextTimeoutEnabled: true})
	defer rdb.Close()
	if err := savedBy(ctx, rdb, "a-"); err != nil {
		return fmt.Errorf("replica a's state: %w", err)
	}
	say("", "a's session state is in Redis")
	b, err := spawn(ctx, "b", redisAddr, url, ttl, say)
	if err != nil {
		return err
	}
	defer b.stop()
	if err := b.wait(ctx, func(ev events.Event) bool { return ev.Kind == hub.KindServerAdded }); err != nil {
		return fmt.Errorf("replica b: %w", err)
	}
	inits, sessions := counts(mcp)

	say("", "killing replica a (SIGKILL: no detach, no release; its lease runs out at Redis)")
	killed := time.Now()
	a.kill()
	if err := b.wait(ctx, isReady); err != nil {
		return fmt.Errorf("replica b never took over: %w", err)
	}
	took := time.Since(killed)
	resumed := b.saw(func(ev events.Event) bool {
		return ev.Kind == hub.KindLeaseAcquired && ev.SessionID != ""
	})
	say("", "failover: %v from the kill to b ready (lease TTL %v)", took.Round(time.Millisecond), ttl)
	if mcp != nil {
		inits2, sessions2 := counts(mcp)
		if inits2 != inits || sessions2 != sessions {
			return fmt.Errorf("the session was not resumed: the server counted %d initialize and %d session(s) by the kill, %d and %d after the failover", inits, sessions, inits2, sessions2)
		}
		say("", "server: %d initialize and %d session(s) by the kill, none more after the failover", inits, sessions)
	}
	if !resumed {
		return errors.New("b did not resume a saved session")
	}
	say("", "b resumed a's session; detaching b (its state saved, its lease released)")
	return b.stop()
}

// savedBy waits until the server's state in Redis was saved by a holder
// whose name starts with prefix; Redis keyspace notifications say when the
// key changes.
func savedBy(ctx context.Context, rdb *redis.Client, prefix string) error {
	if err := rdb.ConfigSet(ctx, "notify-keyspace-events", "K$").Err(); err != nil {
		return err
	}
	sub := rdb.Subscribe(ctx, "__keyspace@0__:"+redisstore.DefaultPrefix+"{"+serverName+"}:state")
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		return err
	}
	st := &redisstore.Store{Client: rdb}
	for {
		if by, err := st.SavedBy(ctx, serverName); err == nil && strings.HasPrefix(by, prefix) {
			return nil
		}
		select {
		case <-sub.Channel():
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func counts(m *mcptest.Server) (inits, sessions int) {
	if m == nil {
		return 0, 0
	}
	return m.Log().Count("initialize"), len(m.SessionIDs())
}

func isReady(ev events.Event) bool {
	return ev.Kind == events.KindTransition && ev.To == events.State(supervisor.Ready.String())
}

// proc is one replica process and the events it printed.
type proc struct {
	name  string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	done  chan struct{}

	mu      sync.Mutex
	evs     []events.Event
	changed chan struct{}
	once    sync.Once
	err     error
}

func spawn(ctx context.Context, name, redisAddr, url string, ttl time.Duration, say func(who, format string, a ...any)) (*proc, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), envChild+"="+name, envRedis+"="+redisAddr, envURL+"="+url, envTTL+"="+ttl.String())
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	say(name, "started (pid %d)", cmd.Process.Pid)
	p := &proc{name: name, cmd: cmd, stdin: stdin, done: make(chan struct{}), changed: make(chan struct{})}
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			var ev events.Event
			if json.Unmarshal(sc.Bytes(), &ev) != nil {
				continue
			}
			if line := describe(ev); line != "" {
				say(name, "%s", line)
			}
			p.mu.Lock()
			p.evs = append(p.evs, ev)
			close(p.changed)
			p.changed = make(chan struct{})
			p.mu.Unlock()
		}
	}()
	return p, nil
}

// describe is the line an event gets, or "" for the events not shown.
func describe(ev events.Event) string {
	switch ev.Kind {
	case hub.KindLeaseAcquired:
		how := "fresh"
		if ev.SessionID != "" {
			how = "resuming " + ev.SessionID
		}
		return fmt.Sprintf("%s: token %d; %s", ev.Kind, ev.Token, how)
	case hub.KindServerAdded, hub.KindLeaseLost, hub.KindStoreFailed:
		s := string(ev.Kind)
		if ev.Op != "" {
			s += " " + ev.Op
		}
		return s + ": " + events.Summary(ev)
	case events.KindTransition:
		if ev.From == ev.To {
			return ""
		}
		return fmt.Sprintf("%s -> %s", ev.From, ev.To)
	}
	return ""
}

func (p *proc) saw(match func(events.Event) bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, ev := range p.evs {
		if match(ev) {
			return true
		}
	}
	return false
}

// wait waits for an event that matches, the process's end, or ctx.
func (p *proc) wait(ctx context.Context, match func(events.Event) bool) error {
	for {
		p.mu.Lock()
		ch := p.changed
		p.mu.Unlock()
		if p.saw(match) {
			return nil
		}
		select {
		case <-ch:
		case <-p.done:
			if p.saw(match) {
				return nil
			}
			return errors.New("the process ended")
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (p *proc) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
	_ = p.cmd.Wait()
}

// stop asks the replica to detach (its stdin closes) and waits for it.
func (p *proc) stop() error {
	p.once.Do(func() {
		_ = p.stdin.Close()
		<-p.done
		p.err = p.cmd.Wait()
	})
	return p.err
}

// replica is a replica process: a hub over Redis with one server that
// prints its events as JSON lines, and detaches when stdin closes.
func replica(stdin io.Reader, stdout io.Writer) int {
	ttl, err := time.ParseDuration(os.Getenv(envTTL))
	if err != nil {
		fmt.Fprintln(os.Stderr, "replica:", err)
		return 2
	}
	rdb := redis.NewClient(&redis.Options{Addr: os.Getenv(envRedis), ContextTimeoutEnabled: true})
	defer rdb.Close()
	h := hub.New(hub.Config{
		Store:  &redisstore.Store{Client: rdb, Holder: fmt.Sprintf("%s-%d", os.Getenv(envChild), os.Getpid())},
		Lease:  hub.LeaseConfig{TTL: ttl},
		Events: events.NewJSONLines(stdout),
	})
	if err := h.Add(context.Background(), hub.ServerConfig{Name: serverName, URL: os.Getenv(envURL)}); err != nil {
		fmt.Fprintln(os.Stderr, "replica:", err)
		return 1
	}
	_, _ = io.Copy(io.Discard, stdin)
	if err := h.Detach(); err != nil {
		fmt.Fprintln(os.Stderr, "replica:", err)
		return 1
	}
	return 0
}
