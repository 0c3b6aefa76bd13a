// Package redisstore keeps mcpsup hubs' resume states in Redis and grants
// the leases that let replicas share them: a [Store] is a hub.Leaser
// (DESIGN.md section 8). A lease is SET NX PX with a fencing token from an
// INCR counter; every leased write is a Lua script that refuses a stale
// holder with a *FencedError, so a replica that wakes after another
// acquired never writes over the new holder's state. Its own Go module, so
// the core does not depend on go-redis.
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
// Redis 6.2 or later (PTTL, SET with NX and PX, Lua scripts). After Redis
// lost its data, a live holder takes its lease again at its next renewal
// and saves its state again.
package redisstore
