// Package stdiotest builds the stdio MCP test server of package server
// (internal/stdiotest/server) for tests, the demo and the benchmarks.
package stdiotest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// ServerPackage is the import path of the test server.
const ServerPackage = "github.com/mcpsup/mcpsup/internal/stdiotest/server"

// Build compiles the test server into dir with the go command on PATH and
// returns the binary's path. It must run inside the mcpsup module (a test,
// or `go run` from the module). The build is bounded by ctx.
func Build(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "mcpsup-stdio-testserver")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, ServerPackage)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("stdiotest: go build %s: %w\n%s", ServerPackage, err, out)
	}
	return bin, nil
}

// The test server of a test binary run through WithServer, built once into
// a directory removed when the tests end.
var (
	serverDir   string
	serverOnce  sync.Once
	serverBin   string
	serverBuild error
	subreaper   bool
)

// WithServer wraps a test binary's m (a *testing.M, or what goleak's
// VerifyTestMain is given) so that its tests have a directory for the test
// server, removed after them, and run as a child subreaper where the
// system has one (Linux), so that the children of a stopped server's group
// are reparented to the test binary and a test can reap them and read how
// they ended. Call it once, from TestMain.
func WithServer(m interface{ Run() int }) interface{ Run() int } { return withServer{m} }

type withServer struct{ m interface{ Run() int } }

func (w withServer) Run() int {
	dir, err := os.MkdirTemp("", "mcpsup-stdio-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	serverDir = dir
	subreaper = becomeSubreaper()
	return w.m.Run()
}

// Server returns the test server's path, built on the first call (bounded
// by five minutes) into WithServer's directory; the test fails if it could
// not be built.
func Server(t testing.TB) string {
	t.Helper()
	serverOnce.Do(func() {
		if serverDir == "" {
			serverBuild = fmt.Errorf("stdiotest: Server needs TestMain to run the tests through WithServer")
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		serverBin, serverBuild = Build(ctx, serverDir)
	})
	if serverBuild != nil {
		t.Fatal(serverBuild)
	}
	return serverBin
}

// Subreaper reports whether WithServer made the test binary a child
// subreaper.
func Subreaper() bool { return subreaper }
