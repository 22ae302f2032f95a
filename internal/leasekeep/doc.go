// Package leasekeep is what the lease modules of ringflake share: keeping a
// leased node id ([Keeper]: renewals on a timer, Held measured against the
// clock, quiet periods, expiry, loss), the events a lease reports
// ([Event]), the defaults and checks of their options ([Config],
// [OptionError]), and requests bounded by a timeout whatever the client
// does ([Call]). The protocol of each coordination service — Redis
// scripts, etcd transactions — stays in its module
// (github.com/ringflake/ringflake/redislease, …/etcdlease), which declares
// its own exported Options and Event types and converts to and from these.
//
// It needs nothing beyond the core module's dependencies.
package leasekeep
