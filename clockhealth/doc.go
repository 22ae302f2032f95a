// Package clockhealth reads how healthy the host's wall clock is: whether
// something disciplines it (synchronised or not), how far from true time
// it may be (maximum and estimated error), the correction its
// synchronisation daemon is about to apply, and any pending leap second.
//
// A [Reading] is what one [Source] said at one instant. The sources in
// this package are the Linux kernel ([Kernel], adjtimex read-only; other
// systems report [StatusUnknown]) and AWS ClockBound's shared-memory
// segment ([ClockBound]). chrony's command protocol lives in the nested
// module github.com/ringflake/ringflake/chronyhealth, so that this module
// stays free of network clients.
//
// A [Monitor] reads a Source in the background, about once a second, and
// keeps the last Reading for lock-free reads. Reading a source costs a
// system call, a file read or a loopback round trip: never do it per ID.
// The generator's hot path never touches this package; a service asks
// the Monitor (for readiness, metrics, logs) and a [Requirement] decides
// whether a Reading is good enough to start or to stay ready.
//
// Nothing in this package changes the clock: the kernel is asked with
// adjtimex modes 0, which only reads.
package clockhealth
