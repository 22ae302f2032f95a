// Package lualease is redislease's lease — its Lua scripts, fencing
// tokens, ordered marks, quiet periods and skew measurement — over any
// Redis client that can run a Lua script ([ScriptRunner]). It is the one
// implementation behind both of redislease's transports:
//
//   - package github.com/ringflake/ringflake/redislease, for services
//     that use go-redis: its Acquire, Claim, List and MeasureOffset take
//     a go-redis client and call this package's;
//   - package github.com/ringflake/ringflake/redislease/resp, a small
//     Redis client of its own (RESP2, one connection, nothing beyond the
//     standard library), for programs that do not want to compile
//     go-redis, such as the ringflake command.
//
// With resp:
//
//	opts, err := resp.ParseURL("redis://127.0.0.1:6379/0")
//	client, err := resp.New(opts)
//	l, err := lualease.Acquire(ctx, client, lualease.Options{Prefix: "orders"})
//	err = l.WaitHeld(ctx) // at once, or after a quiet period
//	gen, err := ringflake.New(l.Node(), ringflake.WithLease(l))
//
// Both transports write the same keys with the same scripts, so leases of
// either share a prefix. How a lease holds its id, what it does when
// Redis loses data, fencing, the marks' lead and fleet skew are described
// in package redislease's documentation, which holds for both. This
// package does not import go-redis; a client of your own (redigo,
// rueidis) needs only a RunScript method.
//
// The package is part of module github.com/ringflake/ringflake/redislease.
// Apache License 2.0, like the rest of ringflake.
package lualease
