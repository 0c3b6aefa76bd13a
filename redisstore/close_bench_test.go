//go:build unix

package redisstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpsup/mcpsup/hub"
	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/redisstore"
	"github.com/mcpsup/mcpsup/supervisor"
)

// BenchmarkCloseWithRedisHung: the wall time of hub.Close with 24 leased
// servers when Redis stops answering (SIGSTOP: its port still takes
// requests, nothing is answered) just before it, StoreTimeout 1s. Every
// last write runs at once, then every release, under one deadline: about
// one StoreTimeout per op (it was one per server). With go-redis's
// ContextTimeoutEnabled false (its default) a call waits for ReadTimeout
// (3s) instead of its context's deadline.
func BenchmarkCloseWithRedisHung(b *testing.B) {
	const servers = 24
	srv, err := mcptest.NewServer(mcptest.Options{Tools: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	for _, ctxTimeout := range []bool{true, false} {
		b.Run(fmt.Sprintf("ContextTimeoutEnabled=%v", ctxTimeout), func(b *testing.B) {
			rs, _ := newRedis(b)
			rdb := redis.NewClient(&redis.Options{Addr: rs.Addr(), MaxRetries: -1, ContextTimeoutEnabled: ctxTimeout})
			defer rdb.Close()
			ctx := context.Background()
			for b.Loop() {
				b.StopTimer()
				_ = rdb.FlushAll(ctx).Err()
				h := hub.New(hub.Config{Supervisor: supervisor.Config{Era: supervisor.Era2025, HTTP: supervisor.HTTPConfig{HTTPClient: srv.HTTPClient()}},
					Store: &redisstore.Store{Client: rdb, Holder: "bench"}, StoreTimeout: time.Second})
				for i := range servers {
					if err := h.Add(ctx, hub.ServerConfig{Name: fmt.Sprintf("s%02d", i), URL: srv.URL()}); err != nil {
						b.Fatal(err)
					}
				}
				if err := h.WaitReady(ctx, hub.All); err != nil {
					b.Fatal(err)
				}
				rs.Pause()
				b.StartTimer()
				_ = h.Close()
				b.StopTimer()
				rs.Resume()
				b.StartTimer()
			}
		})
	}
}
