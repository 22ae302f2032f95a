package redislease_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/lease"
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

// A health check measures how far this host's clock is from Redis's, and
// a lease refuses a host whose clock is too far off. (No Output: it needs
// a Redis server.)
func ExampleMeasureOffset() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer client.Close()

	o, err := redislease.MeasureOffset(ctx, client, nil, 0) // the system clock, five samples
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("Redis's clock minus ours: %v\n", o) // e.g. "+41µs ± 62µs (round trip 123µs)"
	if o.Beyond(100 * time.Millisecond) {
		log.Print("this host's clock is more than 100ms off Redis's")
	}

	var rec lease.Recorder // counts the lease's events for metrics (ringflakeprom.NewLeaseCollector)
	l, err := redislease.Acquire(ctx, client, redislease.Options{
		Prefix:  "orders",
		MaxSkew: 100 * time.Millisecond, // refuse a host further off than this; the default is 1s
		OnEvent: func(e lease.Event) {
			rec.Record(e)
			if e.Kind == lease.ClockSkewed {
				log.Print(e.Err) // a holder that drifted: it keeps issuing, and says so
			}
		},
	})
	var skew *lease.SkewError
	if errors.As(err, &skew) {
		log.Fatalf("refused: offset %v, maximum %v", skew.Offset, skew.Max)
	} else if err != nil {
		log.Fatal(err)
	}
	defer l.Close(ctx)
	fmt.Println("offset at acquire:", l.ClockOffset())
}
