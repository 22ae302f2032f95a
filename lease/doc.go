// Package lease is what ringflake's lease modules share, as public,
// versioned API of the core module: the [Options] of a lease and their
// checks, the events ([Event]) a lease reports, its errors, and the [Keeper] that
// keeps a leased node id — renewals on a timer, Held measured against the
// clock, quiet periods, expiry and loss.
//
// The modules github.com/ringflake/ringflake/redislease and
// github.com/ringflake/ringflake/etcdlease each add only their server's
// protocol (Lua scripts, etcd transactions): their Options, Event and
// Holding are aliases of the types here, and their Lease type embeds a
// [*Keeper]. A lease of either is used the same way:
//
//	l, err := redislease.Acquire(ctx, client, lease.Options{Prefix: "orders"}) // or etcdlease, or Claim a configured id
//	err = l.WaitHeld(ctx) // at once; after a quiet period on a first start or after the server lost data
//	gen, err := ringflake.New(l.Node(), ringflake.WithLease(l))
//	go func() { <-l.Done(); /* lost for good (l.Err()): restart with a new lease */ }()
//	…
//	gen.Close(ctx) // first: saves the exact high-water mark through the lease
//	l.Close(ctx)   // then: frees the id at once
//
// # When the server loses data
//
// A lease module keeps a per-prefix epoch on the server. When it is
// missing (a new prefix, or a server that lost it) or, with Redis, when
// the server process changed, a lease that takes an id does not hold it
// for a quiet period of [Config.Quiet] = TTL + Margin + MaxLead: after
// TTL + Margin every lease the server may have forgotten has expired by its
// holder's own count, and after MaxLead more the clock has passed every ID
// such a holder may have issued ahead of its clock. [Options.MaxLead] is
// the fleet's bound on that lead (default 1 s), and ringflake.New refuses a
// generator whose strategy may lead further. docs/fleet.md gives the
// arithmetic.
//
// # Fleet skew
//
// A module whose server has a clock (Redis TIME) measures the holder's
// offset to it ([Offset], [MeasureOffset]) at acquire and at every
// renewal: an acquire whose clock is certainly further off than
// [Options.MaxSkew] fails with a [*SkewError] ([ErrClockSkew]), and a
// holder that drifts beyond it reports a [ClockSkewed] event and keeps
// issuing. A [Recorder] counts a lease's events, with the latest offset,
// for metrics. docs/fleet.md, "Fleet skew", says why a drifting holder is
// not stopped, and what a fleet on etcd, which has no server time, can do.
//
// Package [github.com/ringflake/ringflake/lease/leasetest] is the
// conformance suite every lease module runs against real servers.
//
// The package needs nothing beyond the core module's dependencies.
package lease
