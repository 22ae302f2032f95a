// Package redislease leases ringflake node ids from Redis, so that the
// generators of a fleet get distinct node ids without configuration, ids
// of crashed holders are reused after their TTL, and a holder that can no
// longer be sure of its id stops issuing.
//
// It lives in its own module, github.com/ringflake/ringflake/redislease, so
// that the core module does not depend on a Redis client; its name keeps
// it apart from go-redis's package redis. It needs Redis 5 or later
// (tested on 7.0), and a client allowed to run INFO inside scripts. Every
// key of a prefix hashes to one Redis Cluster slot, so the scripts also
// suit a cluster (untested here).
//
//	client := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
//	l, err := redislease.Acquire(ctx, client, redislease.Options{TTL: 10 * time.Second})
//	err = l.WaitHeld(ctx) // at once, or after a quiet period (below)
//	gen, err := ringflake.New(l.Node(), ringflake.WithLease(l))
//	...
//	gen.Close(ctx) // saves the exact high-water mark through the lease
//	l.Close(ctx)   // releases the id at once
//
// What both lease modules share — [Options], the events, the errors, the
// renewal loop ([lease.Keeper], embedded in [Lease]) — is package
// github.com/ringflake/ringflake/lease of the core module; this module
// holds Redis's side of it.
//
// # Two transports
//
// The lease — its Lua scripts, fencing, ordered marks, quiet periods and
// skew measurement — is written once, in package
// [github.com/ringflake/ringflake/redislease/lualease], over an interface
// of one method: run this script with these keys and arguments
// ([lualease.ScriptRunner]). Two clients run it:
//
//   - go-redis, through this package: [Acquire], [Claim], [List] and
//     [MeasureOffset] take a go-redis client (redis.Scripter) and call
//     lualease's. Use it in a service that has a go-redis client
//     already, or needs what go-redis brings: pools, Cluster and
//     Sentinel clients, RESP3, hooks for tracing.
//   - [github.com/ringflake/ringflake/redislease/resp], a small RESP2
//     client of this module that imports nothing beyond the standard
//     library: pass a resp.Client to lualease.Acquire, Claim, List and
//     MeasureOffset. Use it where go-redis would be compiled for the
//     lease alone: a command-line tool, a small service, a program whose
//     build time matters. The ringflake command uses it, and compiles no
//     go-redis. It has one connection, redis:// and rediss:// URLs, AUTH,
//     SELECT and TLS, and honours every context deadline; no Cluster, no
//     Sentinel.
//
// Both send the same scripts to the same keys: leases of either transport
// share a prefix, and everything below holds for both. [Lease] is
// lualease's type whichever client holds it; its methods are documented
// there.
//
// # How an id is held
//
// [Acquire] runs a Lua script that tries SET {prefix}:lease:<id> TOKEN NX
// PX ttl for ids 0, 1, 2, … and stops at the first that succeeds, with a
// random 128-bit token. Each SET NX is atomic, so two acquirers never get
// the same id. The script tries 1024 ids per call and Acquire calls it
// again for the next 1024 while none is free, so that a large range that
// is mostly held (65,536 ids with some layouts) does not block Redis for
// the whole scan: the id is the lowest free one, unless a lower one was
// freed while later chunks were tried. The script also records the token
// as the id's latest acquirer in {prefix}:node:<id>, a hash without TTL.
//
// (The allocation this replaces kept one id per datacenter and IP address
// for ever and drew new ones with INCR: two processes behind one address
// shared an id, ids of dead hosts were never freed, the counter wrapped
// past the node range onto ids in use, and nothing noticed a lost id.)
//
// A background goroutine renews every RenewEvery (TTL/3 by default) with
// a script that resets the TTL only if the key still holds the token. The
// lease holds the id until
//
//	(instant the last successful renewal was sent) + TTL − Margin
//
// on its clock. Measuring from the send, not from the reply, means the
// server's TTL started no earlier than the instant the lease counts from;
// Margin (TTL/100 + 2ms by default) covers the holder's clock running
// slower than the server's. Held ([lease.Keeper.Held]) — which a generator calls on
// every ID — compares that instant with the clock (monotonic time) on
// every call, so a renewal goroutine that runs late (a long GC pause, a
// loaded machine) cannot stretch the lease. When renewals fail — Redis
// down, a partition — Held turns false once the lease may have expired,
// generators fail with ringflake.ErrLeaseLost, and renewals go on: when one
// succeeds and the key still holds the token, Held turns true again.
//
// When a renewal finds the key gone (expired, or deleted by hand) and the
// node hash still names this lease's token, nobody acquired the id in
// between, and the same script sets the key again ([lease.Retaken]). When another
// token holds the key, or acquired it since, the lease is lost for good
// ([lease.Lost]): Held stays false, [lease.Keeper.Done] is closed and [lease.Keeper.Err] tells
// why. The service should then acquire a new lease and start a new
// generator.
//
// # Claiming a configured id
//
// A node id given by configuration (static, an environment variable, a
// StatefulSet's ordinal) is exactly as unique as that configuration. [Claim]
// guards it: the same script with one id to try (SET NX on its key), the
// same renewals, fencing, quiet periods and marks as Acquire, so a second
// process that claims an id someone holds fails at once with a
// [*lease.HeldError] naming the holder ([Options].Holder, "HOSTNAME/PID"
// by default, from the node hash), and a holder that loses its claim stops
// issuing. Claimed and acquired ids share the range.
//
// # Requests and timeouts
//
// Options.Timeout bounds every request a lease makes — each script call
// of Acquire and [List], renewals, marks, the release of Close — and the
// lease enforces it itself: go-redis ignores context deadlines unless the
// client has ContextTimeoutEnabled (off by default), so a lease stops
// waiting at the deadline whatever the client's options, and the call it
// abandons runs out in the background (it may still reach the server:
// a late renewal only extends the key, a late acquisition holds an id
// nobody uses until its TTL, and a late mark changes nothing: a lease
// numbers its saves and the script stores one only when its number is
// above that of the last save it stored, so a mark never goes back). Set
// ContextTimeoutEnabled all the same, so that an abandoned call also gives
// its connection back at the deadline rather than at the client's
// ReadTimeout. A resp.Client always stops at the deadline, and drops the
// connection the call was on.
//
// # When Redis loses data
//
// A lease is only as good as the server's memory of it. If Redis forgets
// that A holds an id — it restarted without persistence, lost its last
// second (appendfsync everysec), was restored from an old snapshot, or
// failed over to a replica that had not received the latest writes — A
// still holds the id by its own count until its next renewal tells it
// otherwise, while B can acquire the same id at once and load an old mark,
// or none. Both would issue identical IDs.
//
// So every script first checks the prefix's epoch, {prefix}:epoch, a hash
// without TTL holding a random value and the run_id of the Redis process
// that last ran a script (from INFO, which is why the client must be
// allowed to run it):
//
//   - no epoch: a prefix nobody used yet, or a server that lost the
//     prefix's data (restart without persistence, FLUSHALL, an empty
//     replica). Acquire makes a new epoch and starts a quiet period;
//     renewals of leases of the old epoch report them lost for good (the
//     error matches [lease.ErrDataLost]).
//   - another run_id: the server process changed (a restart, a failover)
//     and may have lost its latest writes. A quiet period starts; the
//     epoch stays, so holders whose keys survived keep them.
//
// During a quiet period — TTL + Margin + MaxLead — ids are handed out as
// usual, but a lease that takes one (by Acquire or Claim, or again after
// its key vanished) does not hold it before the period ends: Held is false
// and generators fail with ringflake.ErrLeaseLost. Use
// [lease.Keeper.WaitHeld] to wait for it. A fleet's first start under a new
// prefix waits once, for the same reason: the server cannot tell a new
// prefix from a lost one.
//
// The period's length is the arithmetic of the worst case. A holder A
// that Redis forgot last renewed at some instant before the loss, so by
// its own count it holds its id, and issues, until at most TTL − Margin
// after the loss; its IDs may run up to MaxLead ahead of its clock (a
// logical strategy borrowing future time), so they reach the loss + TTL −
// Margin + MaxLead at most. The next holder B issues from the end of the
// quiet period on, stamped at or after its clock: loss + TTL + Margin +
// MaxLead at least — 2 × Margin above A's last possible ID, with clocks
// that agree. Options.MaxLead is the fleet's bound on the lead, the same
// (or more) in every process of the prefix, since the lease that finds
// the loss sets the period; ringflake.New refuses a generator on a lease
// whose strategy may lead further than its MaxLead, or that does not say.
// Leases of one prefix should share a TTL for the same reason.
//
// What remains:
//
//   - Marks. A server that loses data loses marks: the next holder of an
//     id starts from its own clock. After a quiet period the previous
//     holder has stopped and the clock has passed its lead, so its IDs are
//     behind the new holder's unless the new holder's clock is behind the
//     old one's by more than about the margin, or a holder ran further
//     ahead than the MaxLead of the lease that found the loss. A holder whose key survived a restart that lost its latest
//     mark keeps issuing correctly, but if it crashes before it saves a
//     mark again (within about TTL/4), the next holder of its id starts
//     from the older mark.
//   - What INFO cannot tell. A loss without a change of process — an
//     operator deleting keys, a proxy in front of several servers that
//     hides their run_ids — is not detected. After restoring data by
//     hand, delete {prefix}:epoch: every holder then loses its lease and
//     the next acquirer waits out a quiet period.
//   - Server clocks. Redis expires keys by its wall clock; a forward step
//     of the server's clock expires leases early. Renewals then retake or
//     lose them, and the fenced marks keep IDs unique. The same step shows
//     as every holder's offset changing at once (see "Fleet skew").
//
// A Redis with appendonly yes and appendfsync always, without failover to
// asynchronous replicas, loses nothing on a crash; a restart then costs
// only the quiet period for ids taken during it. Use etcd
// (github.com/ringflake/ringflake/etcdlease) where failover matters.
//
// # Fencing, and a paused process
//
// Held is a local belief, checked before each ID is issued: a process
// paused between that check and the ID's use (a stopped VM, a long GC
// pause, SIGSTOP), or for longer than the TTL in the middle of a call, may
// issue an ID under an id that someone else holds by then. What keeps
// those IDs unique is the high-water mark: the lease implements
// ringflake.MarkStore, the mark lives in the node hash (no TTL: marks
// outlive leases), and a save succeeds only while the lease key holds the
// saver's token (the token is the fencing token, and the check is in the
// script). Saves take effect in the order the lease made them (each
// carries its number; see [lualease.Lease.SaveMark]), so a save that stalled on
// the way cannot replace a later one. A generator never issues past its last saved mark, and the next
// holder of the id starts after that mark, so the paused process's IDs
// stay below the next holder's. This holds only when the generator keeps
// its mark with the lease — the default when no ringflake.WithMarkStore is
// given.
//
// # The mark's lead
//
// A generator writes its mark ahead of the IDs it issues, and saves the
// next one when half the lead is used. The lease suggests a lead of TTL/2
// ([lease.Keeper.MarkAhead]) instead of ringflake.DefaultMarkAhead (1 s): one
// save about every TTL/4 per node rather than two a second, and a
// generator that keeps issuing through a Redis pause of up to about TTL/4
// before it waits for a save. The cost is what the next holder must skip
// after a crash, up to the lead; but the crashed holder's key outlives its
// last mark (the key lives at least 2/3 TTL past the crash, the mark at
// most TTL/2, with the default RenewEvery), so with clocks in step the
// next holder waits for nothing.
// A restart that resumes the same id after losing its lease, or a new
// holder whose clock is behind, starts behind the mark by up to the lead,
// and its strategy decides (wait, borrow time, or fail until the clock
// catches up). ringflake.WithMarkAhead overrides the lead.
//
// # Fleet skew
//
// Node ids keep a fleet's IDs unique; the hosts' clocks decide their
// order. A host whose clock is 8 s behind its peers issues IDs that sort
// 8 s in the past, and nothing in the IDs tells. Redis has a clock the
// whole fleet can be compared with: TIME. A lease measures its host's
// offset to it NTP-style — the host's clock when the request is sent and
// when the answer arrives, the server's reading in between — so the offset
// (server − host, positive when the host is behind) is known to within half
// the round trip (plus TIME's microsecond): [lease.Offset]. Of five
// samples, the one with the shortest round trip is kept; the round trip is
// timed on the monotonic clock, the local readings come from
// Options.Clock. [MeasureOffset] takes the same measurement on its own.
//
// [Acquire] and [Claim] measure before they take an id and refuse, with a
// [*lease.SkewError] matching [lease.ErrClockSkew] that names the offset
// and its uncertainty on one line, a host whose clock is certainly further
// off than Options.MaxSkew (default 1 s): |offset| − uncertainty >
// MaxSkew. A measurement whose uncertainty covers the maximum does not
// refuse; with a nearby Redis the uncertainty is a fraction of a
// millisecond. Every successful renewal measures again ([lualease.Lease.ClockOffset]
// and the events' Offset): a holder that drifted beyond MaxSkew reports a
// [lease.ClockSkewed] event, before the renewal's own, at every renewal
// while it stays beyond; ringflakeprom and ringflakeexpvar export the
// offset and the events through a [lease.Recorder].
//
// A drifting holder keeps its lease and keeps issuing. Its IDs stay unique
// — uniqueness comes from the node id and the fenced mark, not from clocks
// agreeing — and only their order against other hosts' IDs suffers, by the
// skew. Stopping would cost more than it saves: every holder measures
// against the same server, so a step of Redis's own clock (its host's NTP
// correcting, a VM restored) would make every holder skewed at once and
// stop the whole fleet, for a fault in the one clock that does not stamp
// IDs. Refusing at acquire costs nothing of the kind: a new process fails
// before it issues anything, and says why. A service that values order
// over availability can close its lease on a ClockSkewed event.
//
// The quiet period after a loss of data (above) assumes that a new holder's
// clock is not behind the forgotten holder's by more than about 2 ×
// Margin. Holders within MaxSkew of the server are within 2 × MaxSkew of
// each other (plus the uncertainties), so a MaxSkew at most Margin makes
// acquisition enforce that assumption, for hosts as they start; the
// default of 1 s only catches clocks that are badly off.
//
// A negative MaxSkew turns the measurement off (five extra script calls at
// acquire and at each renewal, each a round trip). A lease on a mock
// clock must turn it off, or set the mock near the real time: the
// measurement compares Options.Clock with the server's real clock.
//
// # Choosing the TTL
//
// The TTL is how long an id of a crashed holder stays unusable, how long
// a holder cut off from Redis keeps issuing, and, with MaxLead, how long a
// quiet period lasts. All should be short, but a renewal must succeed within
// TTL − Margin: with the default RenewEvery of TTL/3, two renewals in a
// row may fail. 10 s (the default) suits most fleets; go lower only with a
// fast, close Redis.
//
// Leases and keys: a prefix's ids must all be used with layouts of the
// same node range (Options.Layout); ids are never burned, and
// [List] shows which are in use, by whom, with their remaining TTL.
package redislease
