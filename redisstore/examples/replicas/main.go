// Command replicas runs two host replicas, each its own process, over one
// Redis and one MCP server, and shows a failover: replica a acquires the
// server's lease and opens the session; replica b waits standby; a is
// killed (SIGKILL: no detach, no release); b acquires the lease when a's
// ends and resumes the very session a opened, without `initialize`.
//
//	cd redisstore && go run ./examples/replicas
//
// Flags:
//
//	-redis addr   a Redis to use (default: a private redis-server on
//	              127.0.0.1, on a free port, without persistence)
//	-url url      the MCP server (default: an mcptest server in this
//	              process, whose requests are counted)
//	-ttl d        the lease TTL (default 3s)
//	-timeout d    how long the whole run may take (default 60s)
//
// It prints each replica's lease events and states as they happen, then
// the failover time (a killed → b ready), the `initialize` requests and
// the sessions the server saw. Exit status: 0 when b resumed a's session,
// 1 otherwise, 2 on a usage error.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if os.Getenv(envChild) != "" {
		os.Exit(replica(os.Stdin, os.Stdout))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
