package redisstore_test

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/hub"
	"github.com/mcpsup/mcpsup/redisstore"
)

// A replica of a host: every replica runs the same code over the same
// Redis; each server is served by the one that holds its lease, and a
// replica that dies is replaced by another within the lease TTL, which
// resumes the session without `initialize`. (It needs a Redis, so it is
// compiled, not run, by go test; examples/replicas runs two replicas and
// a failover.)
func ExampleStore() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()

	h := hub.New(hub.Config{
		Store: &redisstore.Store{Client: rdb},
		Lease: hub.LeaseConfig{TTL: 15 * time.Second},
		Events: events.SinkFunc(func(ev events.Event) {
			switch ev.Kind {
			case hub.KindLeaseAcquired, hub.KindLeaseLost:
				fmt.Println(ev.Server, ev.Kind, events.Summary(ev))
			}
		}),
	})
	defer h.Detach() // saves each held session (fenced) and releases its lease

	if err := h.Add(ctx, hub.ServerConfig{Name: "search", URL: "https://search.example.com/mcp"}); err != nil {
		fmt.Println(err)
		return
	}
	for _, hl := range h.Health() {
		fmt.Println(hl.Server, hl.Lease, hl.State) // "standby idle" until the lease is acquired
	}
}
