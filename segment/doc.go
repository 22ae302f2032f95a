// Package segment hands out dense, strictly increasing 64-bit numbers per
// business tag from ranges ("segments") taken from a PostgreSQL table, as
// Meituan's Leaf-segment does: order numbers people read, or the ids of a
// table moving off auto-increment.
//
// It lives in its own module, github.com/ringflake/ringflake/segment, so
// that the core ringflake module does not depend on a database. It uses
// database/sql; pass a pool opened with any PostgreSQL driver (pgx's
// stdlib or lib/pq).
//
//	db, err := sql.Open("pgx", dsn)
//	err = segment.Migrate(ctx, db) // CREATE TABLE IF NOT EXISTS ringflake_segments …
//	orders, err := segment.New(ctx, db, "orders")
//	defer orders.Close()
//	n, err := orders.Next(ctx) // 1, 2, 3, … in this process; other processes get other ranges
//
// # Segments or Snowflake IDs
//
//	                 segment                                ringflake Generator
//	density          dense: 1, 2, 3 … (gaps: lost tails)    sparse: 2^22 per millisecond
//	order            strictly increasing per process;       time-ordered across the fleet
//	                 across processes only roughly
//	clock            none: a clock step changes nothing     reads the clock; rollbacks need a strategy
//	database         one round trip per range; a process    none
//	                 without it serves its buffers, then fails
//	size             as small as the count so far           always about 2^60
//	reveals          how many numbers were handed out       time and node of each ID
//
// Pick segments for short numbers that people type or read, for counts
// that must stay dense, and where a database is there anyway; pick
// Snowflake IDs (package ringflake) for keys that need no database, that
// sort by time across every host, and that do not reveal business volume.
// Numbers shown to outsiders can be published through package
// github.com/ringflake/ringflake/opaque, which turns each into a keyed,
// reversible public number or text that reveals neither count nor order
// (see Example (Opaque)).
//
// # How numbers are handed out
//
// The table has one row per tag, (biz_tag, max_id, step, …) — see
// [Schema]. An allocator takes a range of n numbers with one statement,
//
//	UPDATE ringflake_segments SET max_id = max_id + n WHERE biz_tag = $1 RETURNING max_id
//
// and hands out [max_id−n, max_id) from memory with one atomic add per
// number. It keeps two buffers: when a call takes the number at 10 % of
// the current range ([WithPrefetchAt]), the next range is loaded in the
// background, so a round trip never stalls a caller while numbers last:
//
//	current  [1000 ······▲·························· 1999]   ▲ 10 %: load the next
//	next     [5000 ································· 5999]   (other processes took 2000–4999)
//
// When the current range is used up, the allocator switches to the next
// and the process repeats. Like Leaf's, the step adapts: a range that
// lasted less than 15 minutes ([WithTargetDuration]) makes the next twice
// as large, up to [WithMaxStep]; one that lasted 30 minutes or more, half
// as large, down to the row's step.
//
// # Guarantees
//
//   - No number is handed out twice, by any number of goroutines and
//     processes on one table: each range comes from a committed UPDATE of
//     the row, which moves max_id past it. An allocator uses a range only
//     after reading it back, so a statement that fails half-way, a
//     connection that drops, a reply lost after the commit or a server that
//     restarts can cost a range, never give one out twice. The statement
//     turns synchronous_commit on for its own transaction, so a commit the
//     server reported survives a server crash even where it is off.
//   - A goroutine's numbers strictly increase, and a call returns a number
//     greater than any returned before it began.
//   - While the database is down, calls are served from the buffers; when
//     both are empty, calls fail at once with an [*UnavailableError]
//     (matching [ErrUnavailable], wrapping the database's error). The
//     allocator tries again after a backoff (10 ms doubling to 1 s,
//     [WithBackoff]) and recovers on its own.
//   - Callers wait only when both buffers are empty and a range is being
//     taken; they stop waiting when their context ends.
//
// Numbers are lost, never reused: the rest of the buffers when a process
// ends or calls [Allocator.Close] (at most two ranges of the current
// step, [Stats].Left just before), and a range whose commit the allocator
// did not hear of. Those gaps are the price of density without a round
// trip per number; [WithMaxStep] bounds them. Leaf's advice, a step of
// 600 times the peak rate per second, keeps a process serving for 10 to
// 20 minutes without its database.
//
// An Allocator is safe for concurrent use by multiple goroutines. The
// package keeps no global state and starts no goroutine at import; an
// allocator runs one goroutine while it loads a range.
//
// ringflake is licensed under the Apache License 2.0: see LICENSE at the
// root of the repository.
package segment
