// Package txnlease is the lease logic of module etcdlease — acquiring,
// claiming, renewing and fencing node ids, the prefix's epoch and quiet
// period, marks saved in order — written once, against a small model of
// etcd's v3 transactions and leases in plain Go types ([Client], [Txn],
// [Compare], [Op], [TxnResponse]), so that it runs over any transport
// without importing one.
//
// Two transports come with the module:
//
//   - package etcdlease adapts go.etcd.io/etcd/client/v3 (gRPC): its
//     Acquire, Claim and List take a *clientv3.Client and call this
//     package's;
//   - package [github.com/ringflake/ringflake/etcdlease/gateway] speaks
//     etcd's JSON gateway (HTTP/1.1, net/http and encoding/json only), for
//     programs that should not compile gRPC, such as the ringflake
//     command.
//
// Over the gateway:
//
//	gw, err := gateway.New(gateway.Config{Endpoints: []string{"http://127.0.0.1:2379"}})
//	l, err := txnlease.Acquire(ctx, gw, txnlease.Options{Prefix: "orders"})
//
// Both send the same transactions to etcd: the keys, comparisons, leases
// and guarantees are those the etcdlease package documentation describes,
// and leases of either transport share a prefix. Errors name the module,
// "etcdlease:". This package imports neither gRPC nor an etcd client.
package txnlease
