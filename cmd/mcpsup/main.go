// Command mcpsup serves the servers of an mcpServers file as one supervised
// MCP server (package gateway):
//
//	mcpsup serve -config mcp.json -stdio
//	mcpsup serve -config mcp.json -listen 127.0.0.1:8417
//
// See docs/gateway.md for the flags, the endpoints and the reload rule.
// It exits 0 after SIGINT or SIGTERM (or, with -stdio, the end of stdin),
// having detached every server (their sessions resume on the next start),
// 1 when it cannot start, 2 on a usage error.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/mcpsup/mcpsup/cmd/mcpsup/gateway"
	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/hub"
	"github.com/mcpsup/mcpsup/redisstore"
	"github.com/mcpsup/mcpsup/views/htmltimeline"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"
)

// DefaultListen is the -listen address when none is given: loopback, a
// port of the system's choosing (the log's "listening" record names it).
const DefaultListen = "127.0.0.1:0"

// shutdownGrace bounds the downstream HTTP server's shutdown on a signal;
// the hub's Detach is bounded by its own rule (one stop and one store
// timeout).
const shutdownGrace = 5 * time.Second

// pollEvery is how often the servers file's modification time and size are
// read to notice a change (no watcher dependency; a change is applied at
// most this late).
const pollEvery = 2 * time.Second

func main() {
	gateway.SetGCDefault()
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

type options struct {
	config    string
	stdio     bool
	listen    string
	tokenFile string
	state     string
	noState   bool
	redisURL  string
	plain     bool
	logLevel  slog.Level
}

func usage(stderr io.Writer, fs *flag.FlagSet) {
	fmt.Fprintln(stderr, "usage: mcpsup serve -config mcp.json (-stdio | -listen ADDR) [flags]")
	fs.PrintDefaults()
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mcpsup serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.StringVar(&o.config, "config", "", "the mcpServers file (required)")
	fs.BoolVar(&o.stdio, "stdio", false, "serve MCP on stdin/stdout (for a desktop client's mcpServers entry)")
	fs.StringVar(&o.listen, "listen", "", "serve streamable HTTP at /mcp and the operations endpoints on this address (default "+DefaultListen+" when -stdio is not given)")
	fs.StringVar(&o.tokenFile, "token-file", "", "a file holding the bearer token HTTP clients must send (or MCPSUP_TOKEN); required when -listen is not loopback")
	fs.StringVar(&o.state, "state", "", "the directory of the servers' resume states (default <user cache dir>/mcpsup/state)")
	fs.BoolVar(&o.noState, "no-state", false, "keep no resume state")
	fs.StringVar(&o.redisURL, "redis", "", "keep resume states in Redis with leases (redis:// or unix:// URL; replaces -state), so replicas share the servers' sessions")
	fs.BoolVar(&o.plain, "plain-names", false, "with a single server, list its items under their own names (no server__ prefix)")
	fs.TextVar(&o.logLevel, "log-level", slog.LevelInfo, "the lowest level logged (debug, info, warn, error)")
	if len(args) == 0 || args[0] != "serve" {
		usage(stderr, fs)
		return 2
	}
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if o.config == "" || fs.NArg() > 0 {
		usage(stderr, fs)
		return 2
	}
	if !o.stdio && o.listen == "" {
		o.listen = DefaultListen
	}
	log := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: o.logLevel}))
	token, err := readToken(o)
	if err != nil {
		log.Error("token", "error", err)
		return 2
	}
	if o.listen != "" && token == "" && !loopback(o.listen) {
		log.Error("-listen on an address that is not loopback needs a bearer token (-token-file or MCPSUP_TOKEN)", "listen", o.listen)
		return 2
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	live := htmltimeline.NewLive(0)
	defer live.Close()
	m, err := newMetrics()
	if err != nil {
		log.Error("metrics", "error", err)
		return 1
	}
	defer m.close()
	hc := hub.Config{
		Events:           events.Multi(events.Slog(log), live, m.observer.Sink()),
		ServerMiddleware: m.observer.Middleware,
	}
	switch {
	case o.redisURL != "":
		ropts, err := redis.ParseURL(o.redisURL)
		if err != nil {
			log.Error("-redis", "error", err)
			return 2
		}
		// Each call ends at the hub's StoreTimeout (redisstore.Store).
		ropts.ContextTimeoutEnabled = true
		rdb := redis.NewClient(ropts)
		defer rdb.Close()
		hc.Store = &redisstore.Store{Client: rdb}
	case !o.noState:
		dir := o.state
		if dir == "" {
			cache, err := os.UserCacheDir()
			if err != nil {
				log.Error("no -state directory and no user cache directory", "error", err)
				return 1
			}
			dir = filepath.Join(cache, "mcpsup", "state")
		}
		hc.Store = &hub.FileStore{Dir: dir}
	}
	g := gateway.New(gateway.Config{ServersFile: o.config, Hub: hc, Logger: log, PlainNames: o.plain})
	if err := g.Start(ctx); err != nil {
		var ce *hub.ConfigError
		if errors.As(err, &ce) || errors.Is(err, os.ErrNotExist) {
			log.Error("servers file", "error", err)
			_ = g.Detach()
			return 1
		}
		log.Warn("some servers were not added", "error", err)
	}

	reload := make(chan os.Signal, 1)
	signal.Notify(reload, syscall.SIGHUP)
	defer signal.Stop(reload)
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		watch(ctx, g, o.config, reload, log)
	}()

	serveErr := make(chan error, 2)
	var httpSrv *http.Server
	if o.listen != "" {
		ln, err := net.Listen("tcp", o.listen)
		if err != nil {
			log.Error("listen", "error", err)
			stop()
			<-watchDone
			_ = g.Detach()
			return 1
		}
		h := g.Handler(gateway.HTTPOptions{Token: token, Extra: map[string]http.Handler{
			"/timeline/": http.StripPrefix("/timeline", live),
			"/metrics":   m.handler,
		}})
		httpSrv = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
		log.Info("listening", "addr", ln.Addr().String(), "mcp", "http://"+ln.Addr().String()+"/mcp")
		go func() { serveErr <- httpSrv.Serve(ln) }()
	}
	if o.stdio {
		go func() {
			err := g.Server().Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(stdin), Writer: nopWriteCloser{stdout}})
			if err == nil {
				err = io.EOF
			}
			serveErr <- err
		}()
	}

	code := 0
	select {
	case <-ctx.Done():
		log.Info("stopping", "cause", "signal")
	case err := <-serveErr:
		if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
			log.Info("stopping", "cause", "stdin ended")
		} else {
			log.Error("serve", "error", err)
			code = 1
		}
	}
	stop()
	if httpSrv != nil {
		// The long-lived streams (a client's standalone SSE GET, the
		// timeline's) end first, so Shutdown is not held by them.
		live.Close()
		for ss := range g.Server().Sessions() {
			_ = ss.Close()
		}
		sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		if err := httpSrv.Shutdown(sctx); err != nil {
			_ = httpSrv.Close()
		}
		cancel()
	}
	<-watchDone
	if err := g.Detach(); err != nil {
		log.Warn("detach", "error", err)
	}
	log.Info("stopped")
	return code
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// readToken reads the bearer token: -token-file's first line, else
// MCPSUP_TOKEN.
func readToken(o options) (string, error) {
	if o.tokenFile != "" {
		b, err := os.ReadFile(o.tokenFile)
		if err != nil {
			return "", err
		}
		tok, _, _ := strings.Cut(string(b), "\n")
		tok = strings.TrimSpace(tok)
		if tok == "" {
			return "", fmt.Errorf("%s: empty token", o.tokenFile)
		}
		return tok, nil
	}
	return strings.TrimSpace(os.Getenv("MCPSUP_TOKEN")), nil
}

// loopback reports whether addr's host is a loopback address ("localhost",
// 127.0.0.0/8, ::1); an empty host (every interface) is not.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// watch applies the servers file again on SIGHUP and when its modification
// time or size changes (read every pollEvery), until ctx ends.
func watch(ctx context.Context, g *gateway.Gateway, path string, hup <-chan os.Signal, log *slog.Logger) {
	stamp := func() (time.Time, int64) {
		fi, err := os.Stat(path)
		if err != nil {
			return time.Time{}, -1
		}
		return fi.ModTime(), fi.Size()
	}
	mt, size := stamp()
	t := time.NewTicker(pollEvery)
	defer t.Stop()
	for {
		cause := ""
		select {
		case <-ctx.Done():
			return
		case <-hup:
			cause = "SIGHUP"
		case <-t.C:
			m, s := stamp()
			if m.Equal(mt) && s == size {
				continue
			}
			mt, size = m, s
			cause = "file changed"
		}
		rctx, cancel := context.WithTimeout(ctx, time.Minute)
		err := g.Reload(rctx)
		cancel()
		if err != nil {
			log.Warn("reload", "cause", cause, "error", err)
		} else {
			log.Info("reloaded", "cause", cause)
		}
	}
}
