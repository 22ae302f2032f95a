// Package ringflake issues 64-bit, time-ordered, Snowflake-style IDs and
// keeps them unique when the host's wall clock steps backwards (an NTP
// step, a VM resume, a hand-set date).
//
// An ID packs a tick count, a node id and a sequence number; by default
// ([TwitterLayout]):
//
//	bit  63 | 62 .............. 22 | 21 ...... 17 | 16 ...... 12 | 11 ......... 0
//	      0 | time: milliseconds   | datacenter   | worker       | sequence
//	        | since the epoch,     | 5 bits       | 5 bits       | 12 bits
//	        | 41 bits              |              |              |
//
//	id = (ms - epoch) << 22 | datacenter << 17 | worker << 12 | sequence
//	epoch = 2010-11-04T01:42:54.657Z
//
// Other layouts choose the epoch, the unit (any whole number of
// milliseconds), the bit widths and the field order (time | node |
// sequence, or time | sequence | node as Sonyflake); see [Layout] and the
// presets, which make and read their namesakes' IDs bit for bit
// ([SonyflakeLayout], [SonyflakeV2Layout], [DiscordLayout]; [github.com/ringflake/ringflake/layoutplan.Presets]).
// Composing and decomposing IDs needs no generator ([Layout.Compose],
// [Layout.Decompose]); [Layout.Bounds] bounds the IDs of a time range
// for range queries. [WithExistingID] makes [New] check that a change of layout or epoch keeps ORDER BY id.
//
// An [ID] is decimal in text and a string in JSON, and ID and [NullID]
// implement database/sql's Scanner and driver.Valuer.
//
// The root package is for the programs that issue and read IDs. What only
// some of them need lives in packages of its own, which the root does not
// import:
//
//	encodings    IDs as hex, base32, base58, base62, base64url and bwmarrin's forms
//	serialno     IDs as business serial numbers (prefix, UTC time, node, sequence)
//	hostlocal    node ids and high-water mark files local to one host (flock)
//	layoutplan   layouts that fit a fleet's demand; migration checks
//	strategies   the rollback strategies and their parser
//	simclock     a simulated clock for tests and CI
//	lease        what the node id leases on Redis, etcd and PostgreSQL share
//	causal       the newest ID a request has seen, carried in an HTTP header
//
// A [Generator] remembers what it issued in a ring of 256 slots indexed by
// tick mod 256 and takes every ID from it — with one atomic add at the
// clock's tick, whose slot it holds whole, or one compare-and-swap that
// only moves a slot forward — so it never issues an ID twice whatever its
// clock does. When the clock reads
// earlier than the newest ID issued, the generator's strategy (package
// strategies) decides what happens:
//
//	strategy    on a rollback of d                 stays available        unique  monotonic          ID time vs wall clock
//	error       fails with a RollbackError (d)     no, until caught up    yes     yes                exact
//	wait:5ms    sleeps if d ≤ 5ms, else fails      stalls ≤ 5ms           yes     yes                exact
//	logical:1s  counts on from the newest ID       while d ≤ 1s           yes     yes                ahead by ≤ 1s
//	ring        reuses spare sequence numbers      while spare capacity   yes     no, during rollback never past the newest
//	ring,wait:5ms,error (default): each in turn
//
// [Generator.Observe] orders IDs across services: after it returns, the
// generator's IDs are greater than the ID it observed, borrowing time ahead
// of its clock (at most [WithMaxForward]) when the observed ID is ahead.
//
// "Exact" and the bounds are those of the clock the generator reads. With
// a clock that has a monotonic reading (the default system clock and
// simclock do) the generator reads the wall clock once per tick, so a step
// of the wall clock is seen up to one tick late and IDs issued meanwhile
// carry the time from before the step; see [Generator].
//
// Generators read time through a small [Clock] interface, so tests and CI
// can drive them with a simulated clock (package simclock) that steps,
// freezes, drifts and jitters deterministically, or with the clocks of
// github.com/benbjohnson/clock.
//
// [Generator.NextN] fills a slice with IDs, taking each tick's sequence
// numbers with one atomic operation; [WithSequenceOffset] starts each tick
// at a random sequence number, so that id % shards spreads at low rates
// (where the sequence is the ID's low bits, as in [TwitterLayout]).
// Callers that wait for a tick are served in the order they started
// waiting, and on the system clock they do not hold an OS thread each.
//
// A generator counts what it does ([Generator.Stats]) and can report each
// rollback to a hook ([WithRollbackHook]) or a log/slog logger
// ([WithLogger]); package ringflakeexpvar serves the counters through
// expvar, and the module github.com/ringflake/ringflake/ringflakeprom
// exports them to Prometheus.
//
// A generator keeps no state across restarts unless it is given a
// [MarkStore] ([WithMarkStore]; hostlocal.NewMarkFile keeps the mark in a
// file): without one, a process that restarts while its clock reads behind
// the IDs it issued before can issue them again. With one, a [Mark] also
// tells the time a crashed run reserved from a clock that stepped back.
// With a [Lease] its node id comes from a coordination service (modules
// redislease, etcdlease and pglease); hostlocal.Node hands the processes of one
// host distinct node ids through file locks.
//
// One node id has one live generator: [New] refuses a second one on the
// same node and an equal layout in a process ([ErrNodeInUse]; layouts
// are equal when they make the same bits, whatever their names, as
// [Layout.Equal] says), and a mark file serves one generator at a time
// (hostlocal.ErrMarkInUse). Generators of two different layouts may share
// a node id: the guard lets both run, because each issues unique IDs of
// its own layout. But their IDs are numbers of one int64 range and can
// be equal (Twitter's and Discord's layouts put the same bits in the same
// places, from different epochs): IDs of different layouts that go into
// one table or key space need different node ids.
//
// A Generator is safe for concurrent use by multiple goroutines, Close
// included: calls in flight when it closes fail with [ErrClosed] or
// return IDs that the exact mark Close saves covers. Layouts, IDs and
// strategies are immutable values. The package's process-wide state is
// the registry of live generators on the system clock behind
// [ErrNodeInUse], and whether the CPU's cycle counter may be read for
// time (decided at the first [New] from the kernel's clock source and
// RINGFLAKE_CYCLES; see [Generator]). It starts no goroutines and registers
// nothing at import; importing it links neither net/http nor expvar.
package ringflake
