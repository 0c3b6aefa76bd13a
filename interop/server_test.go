//go:build unix

package interop

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpsup/mcpsup/internal/lockedbuf"
)

// The server under test and where install.sh puts it.
const (
	everythingPackage = "@modelcontextprotocol/server-everything"
	everythingVersion = "2026.8.31"
	// everythingEnv overrides the path of the server's dist/index.js.
	everythingEnv = "MCPSUP_SERVER_EVERYTHING"
)

// Bounds on waiting for the real node process.
const (
	// startTimeout bounds one start: node loads the server in about 1 s.
	startTimeout = 15 * time.Second
	// exitTimeout bounds the wait for a killed process to be reaped.
	exitTimeout = 5 * time.Second
	// startAttempts bounds the starts tried when the chosen port turns out
	// to be taken.
	startAttempts = 3
)

// listeningMarker is what the server prints from its listen callback, that
// is once its port is bound. Waiting for it (rather than for any HTTP answer)
// makes sure the answers come from this process, not from whoever else might
// hold the port.
var listeningMarker = []byte("listening on port ")

// everythingServer runs server-everything in streamable-HTTP mode on one
// 127.0.0.1 port across restarts. Its methods are for the test goroutine only.
type everythingServer struct {
	t       testing.TB
	node    string
	entry   string
	preload string
	port    int
	starts  int // processes started, for log prefixes
	log     *lockedbuf.Buffer
	proc    *serverProcess
}

// serverProcess is one running node process.
type serverProcess struct {
	cmd    *exec.Cmd
	output *markerWriter
	exited chan struct{} // closed once cmd.Wait has returned
	err    error         // cmd.Wait's result, set before exited closes
}

// startEverything starts the server on a free 127.0.0.1 port and registers
// its cleanup: the process group is killed, and the server's output is
// logged if the test failed. It skips (or fails under CI) when node or the
// server is not installed.
func startEverything(t testing.TB) *everythingServer {
	t.Helper()
	node, entry := findEverything(t)
	preload, err := filepath.Abs(filepath.Join("testdata", "bind-loopback.cjs"))
	if err != nil {
		t.Fatalf("preload path: %v", err)
	}
	s := &everythingServer{t: t, node: node, entry: entry, preload: preload, log: &lockedbuf.Buffer{}}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server-everything output:\n%s", s.log.String())
		}
	})
	t.Cleanup(s.stop) // runs first: the log is complete when it is dumped

	for attempt := 1; ; attempt++ {
		s.port = freePort(t)
		err := s.start()
		if err == nil {
			return s
		}
		if attempt == startAttempts {
			t.Fatalf("server-everything did not start after %d attempts: %v", attempt, err)
		}
		t.Logf("server-everything on port %d: %v; trying another port", s.port, err)
	}
}

// URL is the server's MCP endpoint.
func (s *everythingServer) URL() string {
	return "http://127.0.0.1:" + strconv.Itoa(s.port) + "/mcp"
}

// Kill ends the server with SIGKILL to its process group and waits until it
// has exited, so that the port is free again.
func (s *everythingServer) Kill() {
	s.t.Helper()
	if err := s.kill(); err != nil {
		s.t.Fatal(err)
	}
}

// Restart kills the server if it runs and starts a new process on the same
// port. All sessions of the old process are lost.
func (s *everythingServer) Restart() {
	s.t.Helper()
	s.Kill()
	var err error
	for attempt := 1; attempt <= startAttempts; attempt++ {
		if err = s.start(); err == nil {
			return
		}
		s.t.Logf("restart on port %d, attempt %d: %v", s.port, attempt, err)
	}
	s.t.Fatalf("server-everything did not restart on port %d: %v", s.port, err)
}

func (s *everythingServer) stop() {
	if err := s.kill(); err != nil {
		s.t.Error(err)
	}
}

func (s *everythingServer) kill() error {
	p := s.proc
	if p == nil {
		return nil
	}
	s.proc = nil
	// The negative pid names the process group (Setpgid), so nothing node
	// may have spawned is left behind.
	if err := syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill server-everything process group %d: %w", p.cmd.Process.Pid, err)
	}
	timer := time.NewTimer(exitTimeout)
	defer timer.Stop()
	select {
	case <-p.exited:
		return nil
	case <-timer.C:
		return fmt.Errorf("server-everything (pid %d) did not exit within %v of SIGKILL", p.cmd.Process.Pid, exitTimeout)
	}
}

// start runs one node process on s.port and waits until it listens and
// answers HTTP. On failure the process is gone when start returns.
func (s *everythingServer) start() error {
	s.starts++
	out := &markerWriter{prefix: fmt.Sprintf("[start %d] ", s.starts), log: s.log, marker: listeningMarker, seen: make(chan struct{})}
	cmd := exec.Command(s.node, "-r", s.preload, s.entry, "streamableHttp")
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(s.port))
	cmd.Stdout = out
	cmd.Stderr = out
	cmd.SysProcAttr = serverProcAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", s.node, err)
	}
	p := &serverProcess{cmd: cmd, output: out, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	s.proc = p

	timer := time.NewTimer(startTimeout)
	defer timer.Stop()
	select {
	case <-out.seen:
	case <-p.exited:
		s.proc = nil
		return fmt.Errorf("server-everything exited before listening (%v); see its output", p.err)
	case <-timer.C:
		err := s.kill()
		return errors.Join(fmt.Errorf("server-everything did not listen within %v", startTimeout), err)
	}
	if err := s.answers(); err != nil {
		return errors.Join(err, s.kill())
	}
	return nil
}

// answers checks that the endpoint answers HTTP: a GET without a session
// gets a status (which one is the tests' business).
func (s *everythingServer) answers() error {
	client := &http.Client{Timeout: startTimeout, Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	resp, err := client.Get(s.URL())
	if err != nil {
		return fmt.Errorf("server-everything listens but does not answer: %w", err)
	}
	return resp.Body.Close()
}

// findEverything returns node and the server's entry point, or skips the
// test with a loud message (fails it when CI is set) when either is missing.
func findEverything(t testing.TB) (node, entry string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		missing(t, "node is not on PATH")
	}
	entry = os.Getenv(everythingEnv)
	if entry == "" {
		root, err := moduleRoot()
		if err != nil {
			t.Fatal(err)
		}
		pkgDir := filepath.Join(root, ".interop", "node_modules", everythingPackage)
		if v, err := installedVersion(pkgDir); err != nil || v != everythingVersion {
			missing(t, fmt.Sprintf("%s@%s is not installed (found %q, %v)", everythingPackage, everythingVersion, v, err))
		}
		entry = filepath.Join(pkgDir, "dist", "index.js")
	}
	if _, err := os.Stat(entry); err != nil {
		missing(t, fmt.Sprintf("%s@%s is not installed (%v)", everythingPackage, everythingVersion, err))
	}
	return node, entry
}

// installedVersion reads the version of the npm package in dir.
func installedVersion(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return "", err
	}
	var manifest struct {
		Version string `json:"version"`
	}
	err = json.Unmarshal(b, &manifest)
	return manifest.Version, err
}

func missing(t testing.TB, why string) {
	t.Helper()
	msg := fmt.Sprintf("\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n"+
		"!!! INTEROP TESTS NOT RUN: %s.\n"+
		"!!! Install Node.js 20+ and npm, then run: bash interop/install.sh\n"+
		"!!! (or set %s to the server's dist/index.js).\n"+
		"!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!", why, everythingEnv)
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// moduleRoot is the nearest directory at or above the working directory
// that holds go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found above the working directory")
		}
		dir = parent
	}
}

// freePort returns a 127.0.0.1 port that was free a moment ago: the kernel
// picks it for a listener that is closed at once.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("pick a free port: %v", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		t.Fatalf("pick a free port: %v", err)
	}
	return port
}

// markerWriter copies one process's stdout and stderr into the shared log,
// each line prefixed, and closes seen once marker has appeared in its output.
// exec's two copying goroutines call Write concurrently.
type markerWriter struct {
	prefix string
	log    *lockedbuf.Buffer
	marker []byte

	mu         sync.Mutex
	midLine    bool         // the last write ended inside a line
	all        bytes.Buffer // output until the marker, to find it across writes
	seen       chan struct{}
	markerSeen bool
}

func (w *markerWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []byte
	for rest := p; len(rest) > 0; {
		if !w.midLine {
			out = append(out, w.prefix...)
		}
		line, after, found := bytes.Cut(rest, []byte("\n"))
		out = append(out, line...)
		if found {
			out = append(out, '\n')
		}
		w.midLine = !found
		rest = after
	}
	if _, err := w.log.Write(out); err != nil {
		return 0, err
	}
	if !w.markerSeen {
		w.all.Write(p)
		if bytes.Contains(w.all.Bytes(), w.marker) {
			w.markerSeen = true
			w.all = bytes.Buffer{}
			close(w.seen)
		}
	}
	return len(p), nil
}
