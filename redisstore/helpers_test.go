package redisstore_test

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/redisstore/internal/redisrun"
)

// newRedis starts a private redis-server for the test. Without redis-server
// the test is skipped, loudly, unless CI is set: then it fails.
func newRedis(t testing.TB) (*redisrun.Server, *redis.Client) {
	t.Helper()
	srv, err := redisrun.Start(context.Background(), t.TempDir())
	if errors.Is(err, redisrun.ErrNoRedis) {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set and redis-server is missing: %v", err)
		}
		t.Skipf("\n\n*** SKIPPED: %v; these tests need a real Redis ***\n", err)
	}
	require.NoError(t, err)
	t.Cleanup(srv.Stop)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	return srv, rdb
}
