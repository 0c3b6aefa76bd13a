package redisstore

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpsup/mcpsup/hub"
	"github.com/mcpsup/mcpsup/supervisor"
)

// DefaultPrefix starts every key the Store writes.
const DefaultPrefix = "mcpsup:"

// MaxServerNameBytes bounds a server name: it is part of four keys.
const MaxServerNameBytes = 256

// Store keeps resume states in Redis and grants leases on them; it
// implements hub.Leaser (and so hub.Store). Per server name it uses four
// keys, all with the name as hash tag (one Redis Cluster slot):
//
//	<prefix>{<server>}:state   the state as hub.MarshalState writes it
//	<prefix>{<server>}:lease   the lease: "<holder>:<token>", with the lease's TTL (PX)
//	<prefix>{<server>}:token   the fencing counter (INCR on each acquisition)
//	<prefix>{<server>}:fence   the last acquisition's "<holder>:<token>", no TTL
//
// A fenced write (Lease.Save, Lease.Delete) succeeds only while the fence
// is the writer's own, whatever its clock says. Each lease operation is one
// Lua script: one round trip. Client is required. Safe for concurrent use;
// the fields must not change after first use.
type Store struct {
	// Client is the Redis client (required; not closed by the Store). Give
	// it ContextTimeoutEnabled: true, so a call ends at its context's
	// deadline (hub.Config.StoreTimeout), not at go-redis's ReadTimeout.
	Client redis.UniversalClient
	// Prefix starts every key. Default DefaultPrefix.
	Prefix string
	// Holder names this replica in the lease and fence values. Default: a
	// random name per Store (crypto/rand.Text), so two never share one.
	Holder string
	// MaxBytes bounds a stored state read or written. Default
	// hub.DefaultMaxFileBytes.
	MaxBytes int

	once   sync.Once
	holder string
}

var _ hub.Leaser = (*Store)(nil)

// FencedError is a lease operation refused because another replica acquired
// the server's lease since. It wraps hub.ErrLeaseLost.
type FencedError struct {
	Op      string // "renew", "save" or "delete"
	Server  string
	Holder  string // the refused lease: "<holder>:<token>"
	Current string // the server's fence at Redis: "<holder>:<token>", "" when none
}

func (e *FencedError) Error() string {
	return fmt.Sprintf("redisstore: %s of %q fenced: lease %s is stale, the current one is %s", e.Op, e.Server, e.Holder, cmp.Or(e.Current, "none"))
}

func (e *FencedError) Unwrap() error { return hub.ErrLeaseLost }

// storeErr is err as a *hub.StoreError of op on server; nil stays nil.
func storeErr(op, server string, err error) error {
	if err == nil {
		return nil
	}
	return &hub.StoreError{Op: op, Server: server, Err: err}
}

func (s *Store) max() int64 { return cmp.Or(int64(max(s.MaxBytes, 0)), hub.DefaultMaxFileBytes) }

// keys are one server's keys, in the order the scripts take them.
type keys struct{ state, lease, token, fence string }

func (s *Store) keys(server string) keys {
	base := cmp.Or(s.Prefix, DefaultPrefix) + "{" + server + "}:"
	return keys{state: base + "state", lease: base + "lease", token: base + "token", fence: base + "fence"}
}

func checkName(server string) error {
	switch {
	case server == "":
		return errors.New("empty server name")
	case len(server) > MaxServerNameBytes:
		return fmt.Errorf("server name of %d bytes, more than %d", len(server), MaxServerNameBytes)
	}
	return nil
}

// Load reads the server's state; see hub.Store and hub.ParseState. One
// over MaxBytes (Redis sends at most MaxBytes+1 of it) or not a Redis
// string is hub.ErrCorrupt.
func (s *Store) Load(ctx context.Context, server string) (*supervisor.ResumeState, error) {
	rs, _, err := s.read(ctx, server)
	return rs, storeErr("load", server, err)
}

// SavedBy returns who saved the server's stored state: "<holder>:<token>"
// of the lease it was saved under ("" for an unfenced Save), or an error
// as Load's.
func (s *Store) SavedBy(ctx context.Context, server string) (string, error) {
	_, holder, err := s.read(ctx, server)
	return holder, storeErr("load", server, err)
}

// read returns the server's stored state and its holder, with Load's errors.
func (s *Store) read(ctx context.Context, server string) (*supervisor.ResumeState, string, error) {
	if err := checkName(server); err != nil {
		return nil, "", err
	}
	key := s.keys(server).state
	data, err := s.Client.GetRange(ctx, key, 0, s.max()).Result() // at most max+1 bytes sent
	switch {
	case redis.HasErrorPrefix(err, "WRONGTYPE"):
		t, _ := s.Client.Type(ctx, key).Result()
		return nil, "", fmt.Errorf("%w: a Redis %s, not a string", hub.ErrCorrupt, t)
	case err != nil:
		return nil, "", err
	case data == "": // GETRANGE of a missing key; no Store writes an empty state
		return nil, "", hub.ErrNotFound
	}
	return hub.ParseState(server, []byte(data), s.max())
}

// Save writes the server's state unfenced (a plain SET), for a host that
// uses the Store without leases; a hub that leases writes through
// Lease.Save instead.
func (s *Store) Save(ctx context.Context, server string, rs *supervisor.ResumeState) error {
	err := checkName(server)
	var data []byte
	if err == nil {
		data, err = hub.MarshalState(server, "", rs, s.max())
	}
	if err == nil {
		err = s.Client.Set(ctx, s.keys(server).state, data, 0).Err()
	}
	return storeErr("save", server, err)
}

// Delete removes the server's state unfenced; see Save.
func (s *Store) Delete(ctx context.Context, server string) error {
	err := checkName(server)
	if err == nil {
		err = s.Client.Del(ctx, s.keys(server).state).Err()
	}
	return storeErr("delete", server, err)
}

// The lease scripts. Each runs atomically at Redis: one round trip.
var (
	// KEYS: lease, token, fence. ARGV: holder, ttl ms.
	// {1, token} acquired; {0, pttl} held by another.
	// A lease key without expiry (no Store writes one) is given the TTL,
	// so it ends within one TTL like any holder's. A counter that is not
	// an integer, or not one in [1, 2^53) (a Lua number holds those
	// exactly), starts again after the fence's token, the last one handed
	// out. A token is written with %d: Lua's own form of a number past
	// 1e14 is 1e+14, which is not the token Go reads.
	acquireScript = redis.NewScript(`
local left = redis.call('PTTL', KEYS[1])
if left == -1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {0, tonumber(ARGV[2])}
end
if left ~= -2 then return {0, left} end
local t = redis.pcall('INCR', KEYS[2])
if type(t) ~= 'number' or t < 1 or t >= 9007199254740992 then
  local f = redis.pcall('GET', KEYS[3])
  t = 1
  if type(f) == 'string' then t = (tonumber(string.match(f, ':(%d+)$')) or 0) + 1 end
  if t >= 9007199254740992 then t = 1 end
  redis.call('SET', KEYS[2], string.format('%d', t))
end
local v = ARGV[1] .. ':' .. string.format('%d', t)
if not redis.call('SET', KEYS[1], v, 'NX', 'PX', ARGV[2]) then return {0, 0} end
redis.call('SET', KEYS[3], v)
return {1, t}`)

	// KEYS: lease, fence, token. ARGV: "<holder>:<token>", ttl ms, token.
	// 1 renewed; 2 taken again after the data was lost; {0, fence} refused.
	// A fence of another type counts as none.
	renewScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
local f = redis.pcall('GET', KEYS[2])
if type(f) ~= 'string' then f = false end
if cur == false and (f == false or f == ARGV[1]) then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  redis.call('SET', KEYS[2], ARGV[1])
  if (tonumber(redis.pcall('GET', KEYS[3])) or 0) < tonumber(ARGV[3]) then
    redis.call('SET', KEYS[3], ARGV[3])
  end
  if f == false then return 2 end
  return 1
end
return {0, f or ''}`)

	// KEYS: fence, state, lease. ARGV: "<holder>:<token>", the state ("":
	// delete). 1 written; {0, fence} refused. A fence that is no string
	// (missing, or of another type: no Store writes one) is restored
	// while the lease is still this holder's: no other acquired since.
	writeScript = redis.NewScript(`
local f = redis.pcall('GET', KEYS[1])
if type(f) ~= 'string' then
  if redis.pcall('GET', KEYS[3]) ~= ARGV[1] then return {0, ''} end
  redis.call('SET', KEYS[1], ARGV[1])
  f = ARGV[1]
end
if f ~= ARGV[1] then return {0, f} end
if ARGV[2] == '' then redis.call('DEL', KEYS[2]) else redis.call('SET', KEYS[2], ARGV[2]) end
return 1`)

	// KEYS: lease. ARGV: "<holder>:<token>".
	releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`)
)

// Acquire takes the server's lease for ttl (at least 1ms); see hub.Leaser.
// Refused: a *hub.LeaseHeldError with the lease's remaining TTL.
func (s *Store) Acquire(ctx context.Context, server string, ttl time.Duration) (hub.Lease, error) {
	if err := checkName(server); err != nil {
		return nil, storeErr("acquire", server, err)
	}
	s.once.Do(func() { s.holder = cmp.Or(s.Holder, rand.Text()) })
	ms := max(ttl.Milliseconds(), 1)
	k := s.keys(server)
	res, err := acquireScript.Run(ctx, s.Client, []string{k.lease, k.token, k.fence}, s.holder, ms).Int64Slice()
	switch {
	case err != nil:
	case len(res) != 2:
		err = fmt.Errorf("acquire script answered %v", res)
	case res[0] == 0:
		err = &hub.LeaseHeldError{Server: server, Remaining: time.Duration(max(res[1], 0)) * time.Millisecond}
	}
	if err != nil {
		return nil, storeErr("acquire", server, err)
	}
	tok := uint64(res[1])
	return &lease{s: s, server: server, keys: k, token: tok,
		value: s.holder + ":" + strconv.FormatUint(tok, 10), ttlMS: ms}, nil
}

// lease is one acquisition of one server's lease.
type lease struct {
	s      *Store
	server string
	keys   keys
	token  uint64
	value  string // "<holder>:<token>"
	ttlMS  int64
}

func (l *lease) Token() uint64 { return l.token }

// Renew extends the lease by its TTL; see hub.Lease. It also takes the
// lease again when it is gone at Redis and no one acquired since (the
// fence is still ours, or gone with the data: restored).
func (l *lease) Renew(ctx context.Context) (bool, error) {
	v, err := renewScript.Run(ctx, l.s.Client, []string{l.keys.lease, l.keys.fence, l.keys.token}, l.value, l.ttlMS, l.token).Result()
	if n, ok := v.(int64); ok && err == nil {
		return n == 2, nil
	}
	return false, storeErr("renew", l.server, l.refusal("renew", v, err))
}

// refusal is the error of a lease script's answer v other than a success:
// err, a *FencedError for {0, fence}, or one naming the answer.
func (l *lease) refusal(op string, v any, err error) error {
	if refused, ok := v.([]any); ok && err == nil {
		cur := ""
		if len(refused) == 2 {
			cur, _ = refused[1].(string)
		}
		return &FencedError{Op: op, Server: l.server, Holder: l.value, Current: cur}
	}
	return cmp.Or(err, fmt.Errorf("%s script answered %v", op, v))
}

// Save writes the state fenced; see hub.Lease.
func (l *lease) Save(ctx context.Context, rs *supervisor.ResumeState) error {
	data, err := hub.MarshalState(l.server, l.value, rs, l.s.max())
	if err != nil {
		return storeErr("save", l.server, err)
	}
	return l.write(ctx, "save", string(data))
}

// Delete removes the state fenced; see hub.Lease.
func (l *lease) Delete(ctx context.Context) error { return l.write(ctx, "delete", "") }

func (l *lease) write(ctx context.Context, op, data string) error {
	v, err := writeScript.Run(ctx, l.s.Client, []string{l.keys.fence, l.keys.state, l.keys.lease}, l.value, data).Result()
	if v == int64(1) && err == nil {
		return nil
	}
	return storeErr(op, l.server, l.refusal(op, v, err))
}

// Release deletes the lease key if it is still this lease; see hub.Lease.
// The fence stays, so this holder's writes are accepted until another
// replica acquires.
func (l *lease) Release(ctx context.Context) error {
	return storeErr("release", l.server, releaseScript.Run(ctx, l.s.Client, []string{l.keys.lease}, l.value).Err())
}
