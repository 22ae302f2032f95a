// Package etcdlease leases ringflake node ids from etcd, so that the
// generators of a fleet get distinct node ids without configuration, ids
// of crashed holders are reused after their TTL, and a holder that can no
// longer be sure of its id stops issuing.
//
// It lives in its own module, github.com/ringflake/ringflake/etcdlease, so
// that the core module does not depend on an etcd client (and on gRPC).
// This package uses go.etcd.io/etcd/client/v3 v3.5; package
// [github.com/ringflake/ringflake/etcdlease/gateway] does the same over
// etcd's JSON gateway without it (see "Two transports" below). Both use
// the etcd v3 API (KV, Txn, Lease) and are tested against etcd 3.4
// (Debian bookworm's etcd-server); etcd 3.5 and 3.6 servers serve the
// same API.
//
//	l, err := etcdlease.Acquire(ctx, client, etcdlease.Options{TTL: 10 * time.Second})
//	err = l.WaitHeld(ctx) // at once, or after a quiet period (below)
//	gen, err := ringflake.New(l.Node(), ringflake.WithLease(l))
//	...
//	gen.Close(ctx) // saves the exact high-water mark through the lease
//	l.Close(ctx)   // revokes the etcd lease: the id is free at once
//
// What both lease modules share — [Options], the events, the errors, the
// renewal loop ([lease.Keeper], embedded in [Lease]) — is package
// github.com/ringflake/ringflake/lease of the core module; this module
// holds etcd's side of it: transactions and the etcd client calls.
//
// # Two transports
//
// The lease logic is written once, in package
// [github.com/ringflake/ringflake/etcdlease/txnlease], against a small
// model of etcd's transactions and leases in plain Go types (comparisons,
// operations, responses), and runs over either of two transports:
//
//   - clientv3 (gRPC): this package. [Acquire], [Claim] and [List] take a
//     [Client] (a *clientv3.Client) and call txnlease's; [Lease] is
//     txnlease's Lease.
//   - etcd's JSON gateway (HTTP/1.1, on the same client port): package
//     [github.com/ringflake/ringflake/etcdlease/gateway], with net/http and
//     encoding/json only. txnlease.Acquire(ctx, gw, opts) and its Claim
//     and List take a *gateway.Client. Neither package imports gRPC,
//     protobuf, zap or an etcd client, so a program that imports only
//     them compiles none of it: the ringflake command does so.
//
// Both send the same transactions to the same keys, so leases over either
// share a prefix, and both pass the conformance suite below against a real
// etcd (TestTransportsAgree checks that they read the same responses).
// The gateway client adds its own failover (to the next endpoint when one
// cannot be connected to), TLS and user authentication; see its package
// documentation.
//
// # How an id is held
//
// [Acquire] grants an etcd lease of TTL seconds, then creates
// PREFIX/lease/<id> for the lowest id without one, attached to that lease,
// in a transaction whose condition is that the key does not exist
// (CreateRevision == 0); when another acquirer was first, the same
// transaction returns the ids in use and Acquire tries the next lowest. So
// two acquirers never get the same id, and etcd deletes the key when the
// lease expires. The transaction also writes PREFIX/owner/<id> (no lease):
// the token of the id's latest acquirer. Each request is bounded by
// Options.Timeout, the whole acquisition by its context.
//
// A background goroutine renews every RenewEvery (TTL/3 by default): one
// keep-alive of the etcd lease (KeepAliveOnce), then a read of the id's
// key and the prefix's epoch. The lease drives its own keep-alives, rather
// than watching the channel of clientv3's KeepAlive, so that it knows when
// each keep-alive was sent and so that its timers run on an injectable
// clock. The lease holds the id until
//
//	(instant the last successful renewal was started) + TTL − Margin
//
// on its clock. Counting from before the keep-alive was sent means the
// server's TTL was reset no earlier than the instant the lease counts
// from; Margin (TTL/100 + 2ms by default) covers the holder's clock running
// slower than the server's. Held ([lease.Keeper.Held]) — which a
// generator calls on every ID — compares that instant with the clock
// (monotonic time) on every call, so a renewal goroutine that runs late (a long GC pause, a loaded
// machine) cannot stretch the lease. When renewals fail — etcd down, a
// partition, no quorum — Held turns false once the lease may have expired,
// generators fail with ringflake.ErrLeaseLost, and renewals go on: when one
// succeeds and the key still holds the token, Held turns true again.
//
// When the etcd lease is gone (it expired, or was revoked) or the key was
// deleted, and the owner key still names this lease's token, nobody
// acquired the id in between, and the lease creates the key again in a
// transaction that checks exactly that ([lease.Retaken]). When another holder's
// key is there, or another holder acquired the id since, the lease is lost
// for good ([lease.Lost]): Held stays false, [lease.Keeper.Done] is closed
// and [lease.Keeper.Err] tells why. The service should then acquire a new
// lease and start a new generator.
//
// # Claiming a configured id
//
// A node id given by configuration (static, an environment variable, a
// StatefulSet's ordinal) is exactly as unique as that configuration. [Claim]
// guards it: it takes the given id with the same transaction, keys,
// renewals, fencing and marks as Acquire, so a second process that claims
// an id someone holds fails at once with a [*lease.HeldError] naming the
// holder ([Options].Holder, "HOSTNAME/PID" by default), and a holder that
// loses its claim stops issuing. Claimed and acquired ids share the range.
//
// # Fencing, and a paused process
//
// Held is a local belief, checked before each ID is issued: a process
// paused right after that check (a stopped VM, a long GC pause, SIGSTOP)
// may issue an ID under an id that someone else holds by then. What keeps
// those IDs unique is the high-water mark: the lease implements
// [ringflake.MarkStore], the mark lives in PREFIX/mark/<id> (no lease:
// marks outlive leases), and a save is a transaction that succeeds only
// while the id's key holds the saver's token and when no later save of the
// lease was stored before (the number of the save that stored the mark
// lives in PREFIX/saved/<id>; see [txnlease.Lease.SaveMark]), so a save that
// stalled on the way cannot replace a later one. A generator never issues
// past its last saved mark, and the next holder of the id starts after
// that mark, so the paused process's IDs stay below the next holder's.
// This holds only when the generator keeps its mark with the lease — the
// default when no ringflake.WithMarkStore is given.
//
// etcd makes this strong: writes are committed by a quorum and synced to
// disk, and lease expiry is decided by the leader, so marks survive server
// crashes, restarts and failovers, and a lease is never held twice. On a
// leader change etcd extends every lease by its TTL, which only makes the
// holder's estimate more conservative.
//
// # When etcd loses data
//
// What etcd cannot survive is losing its data: a cluster rebuilt empty
// behind the same endpoints, or one restored from a backup, which lacks
// the leases and marks written since. A holder A the cluster forgot holds
// its id by its own count until its next renewal, while B can take the
// same id at once and load an old mark, or none.
//
// Every acquisition and renewal therefore reads the prefix's epoch,
// PREFIX/epoch (no lease: a random value). When it is missing — a prefix
// nobody used yet, or a cluster that lost it — Acquire (or Claim) makes a
// new one and starts a quiet period of TTL + Margin + MaxLead (the key
// PREFIX/quiet, on an etcd lease of its own, rounded up to whole
// seconds); renewals of leases of the old epoch report them lost for good
// (the error matches [lease.ErrDataLost]). A lease that takes an id during
// a quiet period does not hold it until the period ends: Held is false,
// generators fail with ringflake.ErrLeaseLost; [lease.Keeper.WaitHeld]
// waits for it. A fleet's first start under a new prefix waits once, for
// the same reason.
//
// The period's length is the arithmetic of the worst case. A holder A
// that etcd forgot last renewed at some instant before the loss, so by its
// own count it holds its id, and issues, until at most TTL − Margin after
// the loss; its IDs may run up to MaxLead ahead of its clock (a logical
// strategy borrowing future time), so they reach the loss + TTL − Margin +
// MaxLead at most. The next holder B issues from the end of the quiet
// period on, stamped at or after its clock: loss + TTL + Margin + MaxLead
// at least. B starts 2 × Margin above A's last possible ID, with clocks
// that agree. Options.MaxLead is the fleet's bound on the lead, the same
// (or more) in every process of the prefix, since the lease that makes the
// epoch sets the period; ringflake.New refuses a generator on a lease
// whose strategy may lead further than its MaxLead, or that does not say.
// Leases of one prefix should share a TTL for the same reason.
//
// What remains: a backup restored with the epoch in it is not detected —
// an acquirer cannot tell it from the cluster it was. Its holders recorded
// after the backup find out at their next renewal (within RenewEvery, and
// they then stop), but until then a new acquirer may share their id, and
// the restored marks are older than what was issued. After restoring a
// backup, delete PREFIX/epoch (etcdctl del PREFIX/epoch) before the fleet
// reconnects: every holder then loses its lease, and the next acquirer
// waits out a quiet period. Marks lost with the data stay lost: after the
// quiet period the old holders have stopped and the clock has passed their
// lead, so IDs repeat only if a new holder's clock is behind an old one's
// by more than about the margin, or a holder ran further ahead than the
// MaxLead of the lease that made the epoch.
//
// # The mark's lead
//
// A generator writes its mark ahead of the IDs it issues, and saves the
// next one when half the lead is used. The lease suggests a lead of TTL/2
// ([lease.Keeper.MarkAhead]) instead of ringflake.DefaultMarkAhead (1 s): one
// transaction about every TTL/4 per node rather than two a second, and a
// generator that keeps issuing through an etcd stall (an election, a slow
// disk) of up to about TTL/4 before it waits for a save. The cost is what
// the next holder must skip after a crash, up to the lead; but the crashed
// holder's key outlives its last mark (the key lives at least 2/3 TTL past
// the crash, the mark at most TTL/2, with the default RenewEvery), so with
// clocks in step the next holder waits for nothing. A holder whose clock
// is behind starts behind the mark by up to the lead, and its strategy
// decides (wait, borrow time, or fail until the clock catches up).
// ringflake.WithMarkAhead overrides the lead.
//
// # Clock skew: etcd has no server time
//
// redislease measures each holder's offset to the server's clock (Redis
// TIME) and refuses a host whose clock is too far off; this module cannot.
// etcd's API carries no time: a response header holds the cluster and
// member ids, the revision and the raft term, and etcd counts lease TTLs
// on the leader's own clock without ever reporting it. So Options.MaxSkew
// does nothing here: zero or negative turns it off (the default), and a
// positive MaxSkew is an error (ringflake.ErrInvalidOption) rather than a
// check that silently never runs. Lease events never carry an Offset, and
// no lease.ClockSkewed event is reported.
//
// What a fleet on etcd can do instead, most useful first:
//
//   - Keep every host's clock disciplined and watch it: the kernel's view
//     (adjtimex, read-only: synchronised or not, the maximum error) and
//     chrony's (the offset it is correcting, root dispersion), as the
//     command ringflake clock prints them. A host that is synchronised to
//     a good source is within its error bound of true time, and so of its
//     peers.
//   - Where a Redis is at hand, measure against its TIME
//     (redislease.MeasureOffset, or ringflake clock -against redis://…):
//     one common reference for the whole fleet, without using Redis for
//     leases.
//   - For gross skew only: etcd's HTTP endpoints (/version, /health on the
//     client URL) answer with a Date header, the etcd member's clock in
//     whole seconds. Read NTP-style it bounds the offset to about half a
//     second plus half the round trip: enough to catch a host 8 s off,
//     not one 300 ms off, and it needs the HTTP endpoint reachable (with
//     TLS and authentication as the cluster requires).
//
// # Choosing the TTL
//
// The TTL is how long an id of a crashed holder stays unusable, how long a
// holder cut off from etcd keeps issuing, and, with MaxLead, how long a
// quiet period lasts. All should be short, but a renewal must succeed within
// TTL − Margin: with the default RenewEvery of TTL/3, two renewals in a
// row may fail. 10 s (the default) suits most fleets; etcd grants no less
// than 1.5 election timeouts (2 s with its defaults).
//
// A prefix's ids must all be used with layouts of the same node range
// (Options.Layout); ids are never burned, and [List] shows which are in
// use, by whom, with their remaining TTL.
package etcdlease
