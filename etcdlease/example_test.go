package etcdlease_test

import (
	"context"
	"errors"
	"log"
	"os"
	"strconv"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/etcdlease"
	"github.com/ringflake/ringflake/lease"
)

// A service whose node id is configured — here by $NODE_ID, as a
// StatefulSet or a deployment tool might set it — claims that id in etcd
// before it issues: a second process started with the same id fails at
// once, naming the first, instead of issuing the same IDs. The claim
// fences the generator like a lease from Acquire, and keeps its mark.
// redislease's Claim is used the same way. (No Output: it needs an etcd
// server.)
func ExampleClaim() {
	ctx := context.Background()
	node, err := strconv.ParseInt(os.Getenv("NODE_ID"), 10, 64)
	if err != nil {
		log.Fatal("NODE_ID: ", err)
	}
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{"127.0.0.1:2379"}, DialTimeout: 5 * time.Second})
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	claim, err := etcdlease.Claim(ctx, client, node, etcdlease.Options{Prefix: "orders"})
	var held *lease.HeldError
	if errors.As(err, &held) {
		log.Fatalf("node %d is already in use by %s: fix the configuration", held.Node, held.Holder)
	} else if err != nil {
		log.Fatal(err)
	}
	defer claim.Close(ctx) // deferred first, so it runs after the generator's Close

	if err := claim.WaitHeld(ctx); err != nil { // a quiet period on a first start
		log.Fatal(err)
	}
	gen, err := ringflake.New(node, ringflake.WithLease(claim))
	if err != nil {
		log.Fatal(err)
	}
	defer gen.Close(ctx)

	select {
	case <-claim.Done(): // another process took the id: stop, do not issue
		log.Fatal(claim.Err())
	default:
	}
	if id, err := gen.Next(); err == nil {
		log.Print(id)
	}
}

// An operator lists the node ids in use under a prefix, with their holders
// and marks. (No Output: it needs an etcd server.)
func ExampleList() {
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{"127.0.0.1:2379"}, DialTimeout: 5 * time.Second})
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	holdings, err := etcdlease.List(context.Background(), client, etcdlease.Options{Prefix: "orders"})
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range holdings {
		log.Printf("node %d: %s, expires in %v, mark %v", h.Node, h.Holder, h.TTL, h.Mark)
	}
}
