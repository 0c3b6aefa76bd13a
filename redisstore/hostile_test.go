package redisstore_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/hub"
	"github.com/mcpsup/mcpsup/redisstore"
)

// netOutput is the bytes redis-server has written to its clients so far
// (INFO stats, total_net_output_bytes).
func netOutput(t *testing.T, rdb *redis.Client) int64 {
	t.Helper()
	info, err := rdb.Info(context.Background(), "stats").Result()
	require.NoError(t, err)
	for line := range strings.SplitSeq(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "total_net_output_bytes:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			require.NoError(t, err)
			return n
		}
	}
	t.Fatal("no total_net_output_bytes in INFO stats")
	return 0
}

func TestLoadOfAHugeStateReadsNoMoreThanTheBound(t *testing.T) {
	_, rdb := newRedis(t)
	ctx := context.Background()
	s := &redisstore.Store{Client: rdb, MaxBytes: 4096}
	huge := `{"version":1,"server":"search","resume":{},"x":"` + strings.Repeat("x", 8<<20) + `"}`
	require.NoError(t, rdb.Set(ctx, "mcpsup:{search}:state", huge, 0).Err())

	for _, read := range []func() error{
		func() error { _, err := s.Load(ctx, "search"); return err },
		func() error { _, err := s.SavedBy(ctx, "search"); return err },
	} {
		before := netOutput(t, rdb)
		err := read()
		sent := netOutput(t, rdb) - before
		require.ErrorIs(t, err, hub.ErrCorrupt)
		require.ErrorContains(t, err, "more than 4096")
		require.Less(t, sent, int64(64<<10), "bytes Redis sent for one read of an 8 MiB state")
	}
}

func TestStateOfTheWrongTypeIsCorrupt(t *testing.T) {
	_, rdb := newRedis(t)
	ctx := context.Background()
	s := &redisstore.Store{Client: rdb}
	require.NoError(t, rdb.HSet(ctx, "mcpsup:{search}:state", "version", "1").Err())

	_, err := s.Load(ctx, "search")
	require.ErrorIs(t, err, hub.ErrCorrupt) // the hub starts fresh, and its save replaces it
	require.ErrorContains(t, err, "hash")
	_, err = s.SavedBy(ctx, "search")
	require.ErrorIs(t, err, hub.ErrCorrupt)

	require.NoError(t, s.Save(ctx, "search", state("session-0123456789abcdef")))
	rs, err := s.Load(ctx, "search")
	require.NoError(t, err)
	require.Equal(t, "session-0123456789abcdef", rs.SessionID)
}

func TestLeaseWithoutExpiryEndsWithinOneTTL(t *testing.T) {
	_, rdb := newRedis(t)
	ctx := context.Background()
	s := &redisstore.Store{Client: rdb, Holder: "a"}
	for name, write := range map[string]func(key string) error{
		"string": func(key string) error { return rdb.Set(ctx, key, "ghost:1", 0).Err() },
		"hash":   func(key string) error { return rdb.HSet(ctx, key, "holder", "ghost").Err() },
	} {
		server := "search-" + name
		key := "mcpsup:{" + server + "}:lease"
		require.NoError(t, write(key))

		_, err := s.Acquire(ctx, server, ttl)
		held, ok := errors.AsType[*hub.LeaseHeldError](err)
		require.True(t, ok, "%s: %v", name, err)
		require.Positive(t, held.Remaining, name)
		require.LessOrEqual(t, held.Remaining, ttl, name)
		left, err := rdb.PTTL(ctx, key).Result()
		require.NoError(t, err)
		require.Positive(t, left, "%s: the lease now ends", name)
		require.LessOrEqual(t, left, ttl, name)
	}
}

func TestCorruptFencingCounterStillGrows(t *testing.T) {
	_, rdb := newRedis(t)
	ctx := context.Background()
	s := &redisstore.Store{Client: rdb, Holder: "a"}
	l, err := s.Acquire(ctx, "search", ttl)
	require.NoError(t, err)
	first := l.Token()
	require.NoError(t, l.Release(ctx))

	require.NoError(t, rdb.Set(ctx, "mcpsup:{search}:token", "not a number", 0).Err())
	l, err = s.Acquire(ctx, "search", ttl)
	require.NoError(t, err)
	require.Greater(t, l.Token(), first)
	_, err = l.Renew(ctx)
	require.NoError(t, err)
	require.NoError(t, l.Save(ctx, state("session-0123456789abcdef")))

	// The renewal that takes a lost lease again reads the counter too.
	require.NoError(t, rdb.Del(ctx, "mcpsup:{search}:lease").Err())
	require.NoError(t, rdb.Set(ctx, "mcpsup:{search}:token", "also not", 0).Err())
	_, err = l.Renew(ctx)
	require.NoError(t, err)
	left, err := rdb.PTTL(ctx, "mcpsup:{search}:lease").Result()
	require.NoError(t, err)
	require.Positive(t, left)
}

// A fence key of another type (no Store writes one) no longer fails every
// fenced write until the next acquisition, which never comes while the
// holder renews: the holder's write restores it, a stale lease's write is
// still refused, and a renewal that takes a lost lease again counts it as
// none.
func TestFenceOfTheWrongTypeIsRestoredByItsHolder(t *testing.T) {
	_, rdb := newRedis(t)
	ctx := context.Background()
	s := &redisstore.Store{Client: rdb, Holder: "a"}
	l, err := s.Acquire(ctx, "search", ttl)
	require.NoError(t, err)
	const fence = "mcpsup:{search}:fence"
	require.NoError(t, rdb.Del(ctx, fence).Err())
	require.NoError(t, rdb.HSet(ctx, fence, "x", "1").Err())

	require.NoError(t, l.Save(ctx, state("session-0123456789abcdef")))
	got, err := rdb.Get(ctx, fence).Result()
	require.NoError(t, err)
	require.Equal(t, "a:"+strconv.FormatUint(l.Token(), 10), got)
	rs, err := s.Load(ctx, "search")
	require.NoError(t, err)
	require.Equal(t, "session-0123456789abcdef", rs.SessionID)

	// Not the holder any more: refused, typed, the fence left as it is.
	require.NoError(t, rdb.Del(ctx, "mcpsup:{search}:lease").Err())
	require.NoError(t, rdb.Set(ctx, "mcpsup:{search}:lease", "b:99", 0).Err())
	require.NoError(t, rdb.Del(ctx, fence).Err())
	require.NoError(t, rdb.HSet(ctx, fence, "x", "1").Err())
	err = l.Save(ctx, state("session-0123456789abcdef"))
	require.ErrorIs(t, err, hub.ErrLeaseLost)

	// The lease lost and the fence of another type: renewal takes it again.
	require.NoError(t, rdb.Del(ctx, "mcpsup:{search}:lease").Err())
	_, err = l.Renew(ctx)
	require.NoError(t, err)
	require.NoError(t, l.Save(ctx, state("session-0123456789abcdef")))
}

// A counter past 1e14 (Lua writes such a number as 1e+14), or below 1, no
// longer hands out a lease whose every renewal and save is refused as
// stale: the token is written as Go reads it, and a counter outside
// [1, 2^53) starts again after the fence's token.
func TestFencingCounterOutOfRangeStillServes(t *testing.T) {
	for _, counter := range []string{"100000000000000", "-3", "9007199254740993"} {
		_, rdb := newRedis(t)
		ctx := context.Background()
		s := &redisstore.Store{Client: rdb, Holder: "a"}
		require.NoError(t, rdb.Set(ctx, "mcpsup:{search}:token", counter, 0).Err())
		for range 2 {
			l, err := s.Acquire(ctx, "search", ttl)
			require.NoError(t, err, counter)
			require.Positive(t, l.Token(), counter)
			_, err = l.Renew(ctx)
			require.NoError(t, err, "%s: the lease is its holder's", counter)
			require.NoError(t, l.Save(ctx, state("session-0123456789abcdef")), counter)
			require.NoError(t, l.Release(ctx), counter)
		}
	}
}
