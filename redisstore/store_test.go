package redisstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/httpsession"
	"github.com/mcpsup/mcpsup/hub"
	"github.com/mcpsup/mcpsup/redisstore"
	"github.com/mcpsup/mcpsup/supervisor"
)

func state(session string) *supervisor.ResumeState {
	return &supervisor.ResumeState{Version: supervisor.ResumeStateVersion, Endpoint: "http://127.0.0.1:1/mcp",
		ResumeState: httpsession.ResumeState{SessionID: session, ProtocolVersion: "2025-11-25"}}
}

const ttl = time.Minute // long: these tests end leases by hand

func TestLeaseIsExclusiveAndTokensGrow(t *testing.T) {
	_, rdb := newRedis(t)
	ctx := context.Background()
	a := &redisstore.Store{Client: rdb, Holder: "a"}
	b := &redisstore.Store{Client: rdb, Holder: "b"}

	la, err := a.Acquire(ctx, "search", ttl)
	require.NoError(t, err)
	_, err = b.Acquire(ctx, "search", ttl)
	require.ErrorIs(t, err, hub.ErrLeaseHeld)
	held, ok := errors.AsType[*hub.LeaseHeldError](err)
	require.True(t, ok)
	require.Positive(t, held.Remaining)
	require.LessOrEqual(t, held.Remaining, ttl)

	restored, err := la.Renew(ctx)
	require.NoError(t, err)
	require.False(t, restored)
	require.NoError(t, la.Release(ctx))

	lb, err := b.Acquire(ctx, "search", ttl)
	require.NoError(t, err, "a released lease is free at once")
	require.Greater(t, lb.Token(), la.Token())

	// Another server's lease is independent.
	_, err = a.Acquire(ctx, "files", ttl)
	require.NoError(t, err)
}

func TestStaleHolderCannotSaveOverTheNewOne(t *testing.T) {
	_, rdb := newRedis(t)
	ctx := context.Background()
	a := &redisstore.Store{Client: rdb, Holder: "a"}
	b := &redisstore.Store{Client: rdb, Holder: "b"}

	la, err := a.Acquire(ctx, "search", ttl)
	require.NoError(t, err)
	require.NoError(t, la.Save(ctx, state("session-of-a-000001")))
	// a's lease ends at Redis (as if a were paused past its TTL) and b
	// acquires.
	require.NoError(t, rdb.Del(ctx, "mcpsup:{search}:lease").Err())
	lb, err := b.Acquire(ctx, "search", ttl)
	require.NoError(t, err)
	require.NoError(t, lb.Save(ctx, state("session-of-b-000002")))

	err = la.Save(ctx, state("session-of-a-000003"))
	require.ErrorIs(t, err, hub.ErrLeaseLost)
	fe, ok := errors.AsType[*redisstore.FencedError](err)
	require.True(t, ok, "%v", err)
	require.Equal(t, "save", fe.Op)
	require.Equal(t, "b:2", fe.Current)
	require.ErrorIs(t, la.Delete(ctx), hub.ErrLeaseLost)
	_, err = la.Renew(ctx)
	require.ErrorIs(t, err, hub.ErrLeaseLost)
	require.NoError(t, la.Release(ctx), "releasing a lease no longer held is not an error")

	rs, err := b.Load(ctx, "search")
	require.NoError(t, err)
	require.Equal(t, "session-of-b-000002", rs.SessionID)
	by, err := b.SavedBy(ctx, "search")
	require.NoError(t, err)
	require.Equal(t, "b:2", by)
	_, err = lb.Renew(ctx)
	require.NoError(t, err, "the stale holder's release left b's lease")
}

func TestExpiredLeaseNobodyTookIsRenewed(t *testing.T) {
	_, rdb := newRedis(t)
	ctx := context.Background()
	a := &redisstore.Store{Client: rdb, Holder: "a"}
	la, err := a.Acquire(ctx, "search", ttl)
	require.NoError(t, err)
	require.NoError(t, rdb.Del(ctx, "mcpsup:{search}:lease").Err())
	restored, err := la.Renew(ctx)
	require.NoError(t, err)
	require.False(t, restored, "the fence is still a's: nothing was lost")
	_, err = (&redisstore.Store{Client: rdb, Holder: "b"}).Acquire(ctx, "search", ttl)
	require.ErrorIs(t, err, hub.ErrLeaseHeld)
}

func TestEmptyRestartRestoresTheLiveLease(t *testing.T) {
	srv, rdb := newRedis(t)
	ctx := context.Background()
	a := &redisstore.Store{Client: rdb, Holder: "a"}
	b := &redisstore.Store{Client: rdb, Holder: "b"}
	la, err := a.Acquire(ctx, "search", ttl)
	require.NoError(t, err)
	_, err = la.Renew(ctx)
	require.NoError(t, err)

	require.NoError(t, srv.Restart(ctx)) // no persistence: every key is gone
	restored, err := la.Renew(ctx)
	require.NoError(t, err)
	require.True(t, restored)
	require.NoError(t, la.Save(ctx, state("session-of-a-000001")), "the fence is a's again")

	_, err = b.Acquire(ctx, "search", ttl)
	require.ErrorIs(t, err, hub.ErrLeaseHeld)
	require.NoError(t, la.Release(ctx))
	lb, err := b.Acquire(ctx, "search", ttl)
	require.NoError(t, err)
	require.Greater(t, lb.Token(), la.Token(), "the counter was restored with the lease")
}

func TestRedisDownIsNotALostLease(t *testing.T) {
	srv, rdb := newRedis(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	a := &redisstore.Store{Client: rdb, Holder: "a"}
	la, err := a.Acquire(ctx, "search", ttl)
	require.NoError(t, err)
	srv.Stop()
	_, err = la.Renew(ctx)
	require.Error(t, err)
	require.NotErrorIs(t, err, hub.ErrLeaseLost)
	se, ok := errors.AsType[*hub.StoreError](err)
	require.True(t, ok)
	require.Equal(t, "renew", se.Op)
	_, err = a.Acquire(ctx, "files", ttl)
	require.Error(t, err)
	require.NotErrorIs(t, err, hub.ErrLeaseHeld)
}

func TestLoadRefusesWhatItCannotUse(t *testing.T) {
	_, rdb := newRedis(t)
	ctx := context.Background()
	s := &redisstore.Store{Client: rdb, MaxBytes: 4096}

	_, err := s.Load(ctx, "search")
	require.ErrorIs(t, err, hub.ErrNotFound)

	require.NoError(t, s.Save(ctx, "search", state("session-0123456789abcdef")))
	rs, err := s.Load(ctx, "search")
	require.NoError(t, err)
	require.Equal(t, "session-0123456789abcdef", rs.SessionID)

	raw, err := rdb.Get(ctx, "mcpsup:{search}:state").Result()
	require.NoError(t, err)
	require.NoError(t, rdb.Set(ctx, "mcpsup:{files}:state", raw, 0).Err())
	_, err = s.Load(ctx, "files")
	require.ErrorIs(t, err, hub.ErrForeign)

	for name, v := range map[string]string{
		"not json":    "{",
		"bad version": `{"version":9,"server":"search","resume":{}}`,
		"bad resume":  `{"version":1,"server":"search","resume":{"version":1,"session_id":"a\nb"}}`,
		"too large":   `{"version":1,"server":"search","resume":{},"x":"` + strings.Repeat("x", 5000) + `"}`,
	} {
		require.NoError(t, rdb.Set(ctx, "mcpsup:{search}:state", v, 0).Err())
		_, err = s.Load(ctx, "search")
		require.ErrorIs(t, err, hub.ErrCorrupt, name)
	}
	require.NoError(t, s.Delete(ctx, "search"))
	_, err = s.Load(ctx, "search")
	require.ErrorIs(t, err, hub.ErrNotFound)

	_, err = s.Acquire(ctx, strings.Repeat("n", redisstore.MaxServerNameBytes+1), ttl)
	require.Error(t, err)
}
