// Package stdiotest builds the stdio MCP test server of package server
// (internal/stdiotest/server) for tests, the demo and the benchmarks.
package stdiotest

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
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
