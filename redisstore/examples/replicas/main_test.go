package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
)

func TestMain(m *testing.M) {
	if os.Getenv(envChild) != "" {
		os.Exit(replica(os.Stdin, os.Stdout))
	}
	os.Exit(m.Run())
}

func TestFailover(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set and redis-server is missing: %v", err)
		}
		t.Skipf("\n\n*** SKIPPED: %v; the example needs a real Redis ***\n", err)
	}
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"-ttl", "1s", "-timeout", "60s"}, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errOut.String())
	}
	for _, want := range []string{
		"a  lease-acquired: token 1; fresh",
		"b  lease-acquired: token 2; resuming",
		"server: 1 initialize and 1 session(s) by the kill, none more after the failover",
		"b resumed a's session",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
