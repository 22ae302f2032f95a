package etcdlease_test

import (
	"context"
	"errors"
	"log"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/etcdlease"
)

// A service leases its node id from etcd, issues IDs under it, and
// restarts with a new lease when it loses this one. (No Output: it needs
// an etcd server.)
func Example() {
	ctx := context.Background()
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{"127.0.0.1:2379"}, DialTimeout: 5 * time.Second})
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	lease, err := etcdlease.Acquire(ctx, client, etcdlease.Options{
		Prefix: "orders",         // the fleet sharing the ids
		TTL:    10 * time.Second, // a crashed holder's id is free again after 10 s
	})
	if errors.Is(err, ringflake.ErrNodeUnavailable) {
		log.Fatal("every node id is in use: ", err)
	} else if err != nil {
		log.Fatal(err)
	}
	// The first lease under a prefix, or the first after etcd lost the
	// prefix's data, waits out a quiet period of one TTL before it holds
	// its id; normally this returns at once.
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
		// etcd unreachable for longer than the lease can be valid: nothing
		// is issued until a renewal succeeds.
	}
	log.Print(id)

	// Generator first: its Close saves the exact mark through the lease.
	_ = gen.Close(ctx)
	_ = lease.Close(ctx)
}
