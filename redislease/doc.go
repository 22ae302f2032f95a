// Package redislease leases ringflake node ids from Redis, so that the
// generators of a fleet get distinct node ids without configuration, ids
// of crashed holders are reused after their TTL, and a holder that can no
// longer be sure of its id stops issuing.
//
// It lives in its own module, github.com/ringflake/ringflake/redislease, so
// that the core module does not depend on a Redis client; its name keeps
// it apart from go-redis's package redis. It needs Redis 5 or later
// (tested on 7.0). Every key of a prefix hashes to one Redis Cluster slot,
// so the scripts also suit a cluster (untested here).
//
//	lease, err := redislease.Acquire(ctx, client, redislease.Options{TTL: 10 * time.Second})
//	gen, err := ringflake.New(lease.Node(), ringflake.WithLease(lease))
//	...
//	gen.Close(ctx)   // saves the exact high-water mark through the lease
//	lease.Close(ctx) // releases the id at once
//
// # How an id is held
//
// [Acquire] runs one Lua script that tries SET {prefix}:lease:<id> TOKEN NX
// PX ttl for id 0, 1, 2, … and stops at the first that succeeds: the
// lowest free id, with a random 128-bit token, atomically, so two
// acquirers never get the same id. The script also records the token as
// the id's latest acquirer in {prefix}:node:<id>, a hash without TTL.
//
// (The allocation this replaces kept one id per datacenter and IP address
// for ever and drew new ones with INCR: two processes behind one address
// shared an id, ids of dead hosts were never freed, the counter wrapped
// past the node range onto ids in use, and nothing noticed a lost id.)
//
// A background goroutine renews every RenewEvery (TTL/3 by default) with
// a script that resets the TTL only if the key still holds the token.
// [Lease.Held] — which a generator calls on every ID — is an atomic load:
// a timer on the lease's clock turns it false at
//
//	(instant the last successful renewal was sent) + TTL − Margin
//
// Measuring from the send, not from the reply, means the server's TTL
// started no earlier than the instant the lease counts from; Margin
// (TTL/100 + 2ms by default) covers the holder's clock running slower than
// the server's. When renewals fail — Redis down, a partition — Held turns
// false once the lease may have expired, generators fail with
// ringflake.ErrLeaseLost, and renewals go on: when one succeeds and the key
// still holds the token, Held turns true again.
//
// When a renewal finds the key gone (expired, or deleted by hand) and the
// node hash still names this lease's token, nobody acquired the id in
// between, and the same script sets the key again ([Retaken]). When another
// token holds the key, or acquired it since, the lease is lost for good
// ([Lost]): Held stays false, [Lease.Done] is closed and [Lease.Err] tells
// why. The service should then acquire a new lease and start a new
// generator.
//
// # Fencing, and a paused process
//
// Held is a local belief. A process paused longer than the TTL (a stopped
// VM, a long GC pause, SIGSTOP) resumes with Held still true until its
// timer goroutine runs, and may issue a few IDs under an id that someone
// else holds by then. What keeps those IDs unique is the high-water mark:
// the lease implements [ringflake.MarkStore], the mark lives in the node
// hash (no TTL: marks outlive leases), and a save succeeds only while the
// lease key holds the saver's token (the token is the fencing token, and
// the check is in the script). A generator never issues past its last
// saved mark, and the next holder of the id starts after that mark, so the
// paused process's IDs stay below the next holder's. This holds only when
// the generator keeps its mark with the lease — the default when no
// ringflake.WithMarkStore is given.
//
// # What Redis must provide
//
// Marks are only as durable as the server: with appendonly yes and
// appendfsync always, a saved mark survives a server crash; with the
// default snapshotting a crash can lose the latest marks, and a new holder
// whose clock is behind could then re-issue IDs of the lost interval. A
// failover to a replica that had not received the latest writes has the
// same effect (and can hand one id to two holders for up to one TTL):
// marks and leases are as consistent as Redis is. Redis expires keys by
// its own wall clock, so a forward step of the server's clock can expire
// a lease early; renewals then retake or lose it, and the fenced marks
// keep IDs unique. If the node hash is lost (FLUSHALL, a server without
// persistence restarted), holders cannot prove that nobody held their id
// in between and their leases are lost for good.
//
// # Choosing the TTL
//
// The TTL is how long an id of a crashed holder stays unusable, and how
// long a holder cut off from Redis keeps issuing. Both should be short,
// but a renewal must succeed within TTL − Margin: with the default
// RenewEvery of TTL/3, two renewals in a row may fail. 10 s (the default)
// suits most fleets; go lower only with a fast, close Redis.
//
// Leases and keys: a prefix's ids must all be used with layouts of the
// same node range (Options.Layout); ids are never burned, and
// [List] shows which are in use, by whom, with their remaining TTL.
package redislease
