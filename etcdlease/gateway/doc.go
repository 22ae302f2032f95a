// Package gateway is a client of etcd's JSON gateway — the HTTP/1.1 API
// every etcd 3.4, 3.5 and 3.6 member serves on its client port next to
// gRPC — with net/http and encoding/json only: a transport of package
// [txnlease] for programs that should not compile gRPC, protobuf and an
// etcd client (the ringflake command among them).
//
//	gw, err := gateway.New(gateway.Config{Endpoints: []string{"http://10.0.0.1:2379", "http://10.0.0.2:2379"}})
//	l, err := txnlease.Acquire(ctx, gw, txnlease.Options{Prefix: "orders"})
//	...
//	l.Close(ctx)
//	gw.Close()
//
// It sends POSTs of protobuf's JSON mapping of etcd's v3 API — bytes in
// base64, int64s as strings — to /v3/kv/txn, /v3/kv/range, /v3/kv/put,
// /v3/kv/deleterange and /v3/lease/grant, revoke, keepalive (one message
// of the stream) and timetolive: the same transactions, on the same keys,
// as etcdlease's clientv3 transport, so leases of both share a prefix.
//
// # Endpoints, failover and retries
//
// A request goes to the endpoint that answered last. When it cannot be
// connected to — refused, no route, DNS, a TLS handshake that failed, no
// connection within [Config.DialTimeout] — the request goes to the next,
// and an [*UnreachableError] lists every endpoint's error when none
// could be. A request that reached an endpoint is never sent again to
// another: etcd may have run it, and a transaction that creates a key
// must not run twice. net/http may send it once more on a new connection
// to the same endpoint when a kept-alive connection turns out to be
// closed, but only a request that does no harm twice (a read, a
// keep-alive, a revocation). etcd's own errors (no leader, too many
// requests) are returned as they are, without a retry: the lease renews
// again on its own schedule.
//
// # Deadlines, sizes and errors
//
// Every request ends when its context does; its error then matches the
// context's. An answer longer than [Config.MaxResponseBytes] (16 MiB) is
// not read. An answer of etcd's error is an [*Error] with its gRPC code
// and message; one for an etcd lease that does not exist matches
// [txnlease.ErrLeaseNotFound]. An answer that is not etcd's answer to the
// request — not JSON, another shape, a transaction response whose
// responses do not match the transaction's operations, a lease response
// about another lease — is a [*ResponseError], never a result and never
// a panic (FuzzDecode). Errors are one line.
//
// # TLS and authentication
//
// https endpoints are verified with [Config.TLS] (the system's roots
// without it); a client certificate in it authenticates the client. With
// [Config.Username], the client authenticates (/v3/auth/authenticate)
// before its first request and sends the token with each; when etcd
// rejects the token (it expired, or the member restarted), it
// authenticates again and sends the request once more — etcd ran nothing.
// HTTP proxies from the environment are not used.
//
// A Client is safe for concurrent use by multiple goroutines.
package gateway
