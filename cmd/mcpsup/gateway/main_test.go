package gateway_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/mcpsup/mcpsup/cmd/mcpsup/internal/e2etest"
)

// Every goroutine of the gateway, its hub and the fixtures ends with the
// test that started it: Close and Detach wait for theirs.
func TestMain(m *testing.M) {
	// The benchmarks' child processes (process_bench_test.go).
	if os.Getenv(upstreamEnv) == "serve" {
		exitChild(serveUpstream())
	}
	if up := os.Getenv(gatewayEnv); up != "" {
		exitChild(serveGateway(up))
	}
	if up := os.Getenv(proxyEnv); up != "" {
		exitChild(serveProxy(up))
	}
	code := m.Run()
	e2etest.Cleanup()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

func exitChild(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}
