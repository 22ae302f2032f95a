// Package fleetsim simulates a whole fleet of ringflake generators —
// their hosts' clocks, the lease server they take their node ids from, the
// messages that carry IDs between them — deterministically, in one event
// loop that advances true time, and checks against true time what the
// fleet promises: no ID twice, per-node order where the strategy promises
// it, causality through Observe, one holder per node id at a time, stored
// marks that never go back, leads within MaxLead, and a fleet that issues
// again after the faults stop.
//
// The real [github.com/ringflake/ringflake.Generator] and strategies run
// in it, and the lease logic is the real [lease.Keeper]'s, driven through
// [lease.Drive] (Held, quiet periods, retaking, loss); the server is a
// model of what redislease, etcdlease and pglease keep on Redis, etcd and
// PostgreSQL (see model.go), which passes the lease/leasetest
// conformance suite the modules pass against real servers
// (conformance_test.go). Code that blocks — a generator sleeping on
// its clock, a request waiting for its reply, a mark save in flight —
// runs as goroutines that take turns, one at a time, as the loop says; so
// a scenario and its seed give the same report and the same trace hash,
// byte for byte, on any machine.
//
// A fleet scenario is a scenario file (package scenario) with a fleet:
// block: read one with [ReadFile] and run it with [Run], or run it with
// `ringflake replay FILE`. [Search] draws random fleets and fault
// schedules from seeds ([Draw]) and shrinks the first that breaks a
// property ([Shrink]) to a small scenario that reproduces it; `ringflake
// fleet -seeds N` does the same from the command line. docs/fleet-sim.md
// says how a team writes its own fleet into a scenario, runs the search
// in CI, and turns a finding into a regression file.
package fleetsim
