// Package redisstore keeps mcpsup hubs' resume states in Redis and grants
// the leases that let replicas of a host share them: a [Store] is a
// hub.Leaser, so a hub given one as Config.Store serves each server only
// while it holds that server's lease (hub.LeaseConfig states the rule and
// its bounds).
//
// A lease is a key set with SET NX PX and a fencing token from an INCR
// counter; it is renewed by a Lua script that extends it only while the
// value is still the holder's; every write of a leased state is a Lua
// script that compares the holder's token with the server's fence and
// refuses a stale holder's write with a *FencedError (wrapping
// hub.ErrLeaseLost). A paused or partitioned replica that wakes after
// another acquired can therefore never write over the new holder's state.
//
// It is its own Go module, so mcpsup's core module does not depend on
// go-redis.
//
// # Use
//
//	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379", ContextTimeoutEnabled: true}) // calls end at StoreTimeout
//	h := hub.New(hub.Config{
//		Store: &redisstore.Store{Client: rdb},
//		Lease: hub.LeaseConfig{TTL: 15 * time.Second},
//	})
//	defer h.Detach() // saves every session and releases the leases
//
// # Redis
//
// Redis 6.2 or later (PTTL, SET with NX and PX, Lua scripts). A Redis that
// loses its data (a restart without persistence) loses the states and the
// counters: a holder whose lease was still live takes it again at its next
// renewal (no other replica acquired meanwhile) and saves its state again;
// a server whose holder had already given up starts fresh on the next
// acquisition.
package redisstore
