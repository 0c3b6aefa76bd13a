// Package redisrun starts a private redis-server for tests, benchmarks and
// examples: on 127.0.0.1, on a free port, in its own directory, with no
// persistence (--save "" --appendonly no), never a shared instance.
package redisrun

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ErrNoRedis: no redis-server on PATH.
var ErrNoRedis = errors.New("redisrun: redis-server not found on PATH (Debian: apt-get install redis-server)")

// StartTimeout bounds how long Start waits for "Ready to accept connections".
const StartTimeout = 20 * time.Second

// Server is one redis-server process. Its methods are safe for concurrent
// use.
type Server struct {
	dir  string
	port int

	mu  sync.Mutex
	cmd *exec.Cmd
}

// Start runs redis-server in dir (created if missing) on a free port of
// 127.0.0.1 and returns once it accepts connections.
func Start(ctx context.Context, dir string) (*Server, error) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		return nil, ErrNoRedis
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	s := &Server{dir: dir, port: port}
	if err := s.start(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// Addr is host:port.
func (s *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

func (s *Server) start(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, StartTimeout)
	defer cancel()
	cmd := exec.Command("redis-server", "--bind", "127.0.0.1", "--port", strconv.Itoa(s.port),
		"--dir", s.dir, "--save", "", "--appendonly", "no", "--logfile", "", "--daemonize", "no",
		"--protected-mode", "yes")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return err
	}
	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(out)
		var last string
		for sc.Scan() {
			last = sc.Text()
			if strings.Contains(last, "Ready to accept connections") {
				ready <- nil
				_, _ = io.Copy(io.Discard, out)
				return
			}
		}
		ready <- fmt.Errorf("redisrun: redis-server exited before it was ready: %s", last)
	}()
	select {
	case err = <-ready:
	case <-ctx.Done():
		err = fmt.Errorf("redisrun: redis-server not ready: %w", ctx.Err())
	}
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return err
	}
	s.mu.Lock()
	s.cmd = cmd
	s.mu.Unlock()
	return nil
}

// Stop ends the process (SIGTERM) and waits for it; its data is gone.
// Stopping a stopped server does nothing.
func (s *Server) Stop() {
	s.mu.Lock()
	cmd := s.cmd
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(os.Interrupt)
	_ = cmd.Wait()
}

// Restart starts the server again on the same port, empty.
func (s *Server) Restart(ctx context.Context) error {
	s.Stop()
	return s.start(ctx)
}
