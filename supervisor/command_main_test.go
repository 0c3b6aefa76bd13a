package supervisor

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/internal/stdiotest"
)

// The test server binary, built once per test binary into a directory
// TestMain removes (testMainRun).
var (
	serverDir   string
	serverOnce  sync.Once
	serverBin   string
	serverBuild error
)

// testMainRun runs the tests with a directory for the test server, as a
// child subreaper where the system has one, so that the children of a
// stopped server's group are reparented to this process and a test can
// reap them and read how they ended.
func testMainRun(m interface{ Run() int }) int {
	dir, err := os.MkdirTemp("", "mcpsup-stdio-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	serverDir = dir
	becomeSubreaper()
	return m.Run()
}

type mainWithServer struct{ m interface{ Run() int } }

func (w mainWithServer) Run() int { return testMainRun(w.m) }

func testServer(t testing.TB) string {
	t.Helper()
	serverOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		serverBin, serverBuild = stdiotest.Build(ctx, serverDir)
	})
	require.NoError(t, serverBuild)
	return serverBin
}
