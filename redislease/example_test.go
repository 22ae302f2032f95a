package redislease_test

import (
	"context"
	"errors"
	"log"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/redislease"
)

// A service leases its node id from Redis, issues IDs under it, and
// restarts with a new lease when it loses this one. etcdlease's Acquire
// is used the same way. (No Output: it needs a Redis server.)
func Example() {
	ctx := context.Background()
	// ContextTimeoutEnabled lets go-redis give up at the lease's deadlines
	// too (the lease stops waiting at Options.Timeout in any case).
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379", ContextTimeoutEnabled: true})
	defer client.Close()

	lease, err := redislease.Acquire(ctx, client, redislease.Options{
		Prefix: "orders",         // the fleet sharing the ids
		TTL:    10 * time.Second, // a crashed holder's id is free again after 10 s
	})
	if errors.Is(err, ringflake.ErrNodeUnavailable) {
		log.Fatal("every node id is in use: ", err)
	} else if err != nil {
		log.Fatal(err)
	}
	// The first lease under a prefix, or the first after Redis restarted
	// or lost data, waits out a quiet period (TTL + Margin + MaxLead)
	// before it holds its id; normally this returns at once.
	if err := lease.WaitHeld(ctx); err != nil {
		log.Fatal(err)
	}
	gen, err := ringflake.New(lease.Node(), ringflake.WithLease(lease)) // the mark is kept with the lease
	if err != nil {
		log.Fatal(err)
	}

	go func() {
		<-lease.Done() // lost for good (or closed): acquire a new lease, start a new generator
		log.Print(lease.Err())
	}()

	id, err := gen.Next()
	if errors.Is(err, ringflake.ErrLeaseLost) {
		// Redis unreachable for longer than the lease can be valid: nothing
		// is issued until a renewal succeeds.
	}
	log.Print(id)

	// Generator first: its Close saves the exact mark through the lease.
	_ = gen.Close(ctx)
	_ = lease.Close(ctx)
}
