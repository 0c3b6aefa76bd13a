package redisstore_test

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/hub"
	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/redisstore"
)

// commands counts the commands a go-redis client sends: each is one round
// trip (no pipelines are used).
type commands struct{ n atomic.Int64 }

func (c *commands) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) { return next(ctx, network, addr) }
}

func (c *commands) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmd)
	}
}

func (c *commands) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.n.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}

// BenchmarkLeaseRoundTrips measures each lease operation against a local
// redis-server: its time and its Redis commands (round trips) per
// operation, the first use of each script (EVALSHA refused, then EVAL)
// excluded.
func BenchmarkLeaseRoundTrips(b *testing.B) {
	_, rdb := newRedis(b)
	cnt := &commands{}
	rdb.AddHook(cnt)
	ctx := context.Background()
	s := &redisstore.Store{Client: rdb, Holder: "bench"}
	rs := state("session-0123456789abcdef")
	warm, err := s.Acquire(ctx, "warm", time.Minute)
	if err != nil {
		b.Fatal(err)
	}
	_, _ = warm.Renew(ctx)
	_ = warm.Save(ctx, rs)
	_ = warm.Release(ctx)

	run := func(b *testing.B, op func(l hub.Lease) error) {
		l, err := s.Acquire(ctx, "search", time.Minute)
		if err != nil {
			b.Fatal(err)
		}
		defer func() { _ = l.Release(ctx) }()
		cnt.n.Store(0)
		b.ResetTimer()
		for b.Loop() {
			if err := op(l); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(cnt.n.Load())/float64(b.N), "round-trips/op")
	}
	b.Run("renew", func(b *testing.B) { run(b, func(l hub.Lease) error { _, err := l.Renew(ctx); return err }) })
	b.Run("save", func(b *testing.B) { run(b, func(l hub.Lease) error { return l.Save(ctx, rs) }) })
	b.Run("load", func(b *testing.B) {
		run(b, func(hub.Lease) error { _, err := s.Load(ctx, "search"); return err })
	})
	b.Run("acquire+release", func(b *testing.B) {
		cnt.n.Store(0)
		for b.Loop() {
			l, err := s.Acquire(ctx, "other", time.Minute)
			if err != nil {
				b.Fatal(err)
			}
			if err := l.Release(ctx); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(cnt.n.Load())/float64(b.N), "round-trips/op")
	})
}

// BenchmarkFailover measures a failover between two replicas: the holder
// (a subprocess) is killed with SIGKILL right after it acquired, so its
// lease has its whole TTL left (the worst case: a kill at a random moment
// leaves between 2/3 and all of the TTL, renewals being TTL/3 apart); the
// other replica's server is ready again after failover-ms, of which
// resume-ms after it acquired the lease.
func BenchmarkFailover(b *testing.B) {
	for _, ttl := range []time.Duration{time.Second, testTTL} {
		b.Run(ttl.String(), func(b *testing.B) {
			srv, rdb := newRedis(b)
			m, err := mcptest.NewServer(mcptest.Options{Tools: 1})
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close()
			var failover, resume time.Duration
			for i := 0; b.Loop(); i++ {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				server := "s" + time.Now().Format("150405.000000")
				a := startReplicaServer(b, "a", srv.Addr(), m.URL(), ttl, server)
				waitRec(ctx, b, a.rec, hub.KindLeaseAcquired)
				waitRec(ctx, b, a.rec, events.KindTransition)
				waitSavedBy(ctx, b, rdb, server, "a")
				rec := &events.Recorder{}
				cfg := replicaConfig(&redisstore.Store{Client: rdb, Holder: "b"}, rec)
				cfg.Lease.TTL = ttl
				h := hub.New(cfg)
				if err := h.Add(ctx, hub.ServerConfig{Name: server, URL: m.URL()}); err != nil {
					b.Fatal(err)
				}
				killed := time.Now()
				a.kill(b)
				acq := waitRec(ctx, b, rec, hub.KindLeaseAcquired)
				if acq.SessionID == "" {
					b.Fatalf("b did not resume: %+v", acq)
				}
				if err := h.WaitReady(ctx, hub.All); err != nil {
					b.Fatal(err)
				}
				ready := time.Now()
				failover += ready.Sub(killed)
				resume += ready.Sub(acq.Time)
				_ = h.Detach()
				cancel()
			}
			b.ReportMetric(float64(failover.Milliseconds())/float64(b.N), "failover-ms")
			b.ReportMetric(float64(resume.Microseconds())/1000/float64(b.N), "resume-ms")
			b.ReportMetric(0, "ns/op")
		})
	}
}

func waitRec(ctx context.Context, b *testing.B, rec *events.Recorder, kind events.Kind) events.Event {
	b.Helper()
	var found events.Event
	_, err := rec.WaitFor(ctx, func(evs []events.Event) bool {
		for _, ev := range evs {
			if ev.Kind == kind && (kind != events.KindTransition || readyNow(ev)) {
				found = ev
				return true
			}
		}
		return false
	})
	if err != nil {
		b.Fatalf("waiting for %s: %v", kind, err)
	}
	return found
}
