// Package resp is a small Redis client: RESP2 over one connection, with
// nothing beyond the standard library. It is the light transport of
// ringflake's Redis lease: a [Client] runs package lualease's scripts
// (it implements lualease.ScriptRunner), so that a program can lease node
// ids from Redis without compiling go-redis — the ringflake command does,
// to start fast. For a service that uses go-redis already, package
// redislease takes its client instead; both run the same scripts on the
// same keys.
//
//	opts, err := resp.ParseURL("rediss://user:secret@redis.internal:6380/2")
//	client, err := resp.New(opts)
//	defer client.Close()
//	l, err := lualease.Acquire(ctx, client, lualease.Options{Prefix: "orders"})
//
// What it does:
//
//   - redis:// and rediss:// URLs ([ParseURL]): AUTH with a password, or
//     a user and a password; SELECT of a database; TLS (crypto/tls,
//     verified against the host) for rediss.
//   - One connection, dialled when first needed and again after any
//     error that may have left it out of step; calls take turns on it.
//     A lease makes a few calls a second: one connection is plenty.
//   - Every call is bounded: a context's deadline or cancellation
//     interrupts it at once, and DialTimeout, ReadTimeout and
//     WriteTimeout bound it otherwise.
//   - Replies: simple strings, errors (a *[Error], for errors.As),
//     integers, bulk strings, nil, arrays, nested. A reply that is not
//     RESP2 is an error matching [ErrProtocol], never a panic, and a
//     reply is read as it arrives, within [Options].MaxReply, so that a
//     length a hostile server announces allocates nothing.
//   - No retries, no logging, no pipelining, no RESP3, no Cluster or
//     Sentinel, no pub/sub: what a lease needs, and no more.
//
// A Client is safe for concurrent use by multiple goroutines.
//
// The package is part of module github.com/ringflake/ringflake/redislease.
// Apache License 2.0, like the rest of ringflake.
package resp
