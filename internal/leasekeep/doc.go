// Package leasekeep is what the lease modules of ringflake share: keeping a
// leased node id ([Keeper]: renewals on a timer, the Held flag, expiry,
// loss), the events a lease reports ([Event]), and the defaults and checks
// of their options ([Config]). The protocol of each coordination service —
// Redis scripts, etcd transactions — stays in its module
// (github.com/ringflake/ringflake/redislease, …/etcdlease), which declares
// its own exported Options and Event types and converts to and from these.
//
// It needs nothing beyond the core module's dependencies.
package leasekeep
