// Package hostlocal keeps ringflake's state on one host, without a
// server: node ids that no two processes of the host hold at once, and
// the high-water mark a generator leaves for its next run.
//
//   - [Node] is a [ringflake.NodeSource] that gives each process the
//     lowest node id no other process of the host holds ([Node.NodeID]),
//     or the id it is configured with ([Node.Claim]), by locking a file
//     per id with flock(2) in a directory ([DefaultDir], or one of your
//     own). The kernel drops a lock when its process dies, so ids of
//     crashed processes are free again at once. Every process of the host
//     must use the same directory: two directories are two ranges of ids
//     that overlap.
//   - [MarkFile] is a [ringflake.MarkStore] that keeps the high-water
//     mark in a small text file, replaced atomically, so that a restarted
//     generator never issues an ID its previous run may have issued
//     ([ringflake.WithMarkStore]).
//
// Node ids from a Node are unique among the processes of one host only:
// across hosts, give each host its own range (a layout's datacenter
// bits) or use a lease on a coordination service (redislease, etcdlease,
// pglease). Errors are documented on each function; they match
// ringflake's sentinels ([ringflake.ErrNodeUnavailable],
// [ringflake.ErrMarkCorrupt], …) with errors.Is.
//
// The package starts no goroutine and reads no environment at import.
package hostlocal
