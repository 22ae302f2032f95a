// Package pglease leases ringflake node ids from PostgreSQL, for fleets
// whose only shared service is their database: the generators of a fleet
// get distinct node ids without configuration, ids of crashed holders are
// reused after their TTL, a holder that can no longer be sure of its id
// stops issuing, and the high-water mark of an id travels in its row to
// the next holder.
//
// It lives in its own module, github.com/ringflake/ringflake/pglease, so
// that the core module does not depend on a PostgreSQL driver. It uses
// github.com/jackc/pgx/v5 ([DB]: a *pgxpool.Pool, a *pgx.Conn) and is
// tested against PostgreSQL 15, directly and through PgBouncer 1.18 in
// transaction pooling mode.
//
//	pool, err := pgxpool.New(ctx, "postgres://app@db:5432/app")
//	err = pglease.Migrate(ctx, pool) // once: the tables and functions below
//	l, err := pglease.Acquire(ctx, pool, pglease.Options{Prefix: "orders"}) // or Claim a configured id
//	err = l.WaitHeld(ctx) // at once, or after a quiet period (below)
//	gen, err := ringflake.New(l.Node(), ringflake.WithLease(l))
//	...
//	gen.Close(ctx) // saves the exact high-water mark through the lease
//	l.Close(ctx)   // releases the id at once
//
// What the lease modules share — [Options], the events, the errors, the
// renewal loop ([lease.Keeper], embedded in [Lease]) — is package
// github.com/ringflake/ringflake/lease of the core module; this module
// holds PostgreSQL's side of it: two tables and a few PL/pgSQL functions.
//
// # The tables
//
// [Migrate] runs [Schema] (idempotent; a DBA may run it instead):
//
//	CREATE TABLE ringflake_node_epochs (
//	    prefix      text        PRIMARY KEY,
//	    epoch       text        NOT NULL,  -- random, made anew whenever the row is missing
//	    server      text        NOT NULL,  -- system identifier/timeline of the server
//	    quiet_until timestamptz NOT NULL,  -- ids taken before it are not used before it
//	    fence       bigint      NOT NULL   -- the last fencing token handed out
//	);
//	CREATE TABLE ringflake_node_leases (
//	    prefix     text        NOT NULL,
//	    node       bigint      NOT NULL,
//	    fence      bigint      NOT NULL,   -- the fencing token of the id's latest holder
//	    holder     text        NOT NULL,   -- its Options.Holder, "HOSTNAME/PID" by default
//	    expires_at timestamptz,            -- on the database's clock; NULL once released
//	    mark       text,                   -- the latest holder's high-water mark
//	    saved      bigint      NOT NULL DEFAULT 0, -- the number of the holder's save that stored it
//	    PRIMARY KEY (prefix, node)
//	);
//
// and the functions ringflake_node_acquire, ringflake_node_renew and
// ringflake_node_save_mark_in_order (with their helpers, all named
// ringflake_node_*).
// The names are unqualified: set search_path in the connection string to
// keep them in a schema of their own. The role of the leases needs
// SELECT, INSERT, UPDATE on the tables and EXECUTE on the functions; it
// calls pg_control_system() and pg_current_wal_lsn(), which PostgreSQL
// grants to PUBLIC. Dropping the tables takes CASCADE (the functions use
// their row types), which leaves the functions that use a row type only
// in their bodies behind; every call then fails with [ErrNoSchema], as on
// a database that never had the tables, and Migrate makes everything
// again. The tables it makes have no epoch for any prefix, so leases
// taken after it wait out the quiet period of a server that lost its
// data.
//
// # How an id is held
//
// Every request is one statement — a call of a function, or one UPDATE
// or SELECT — so one short transaction of its own: nothing is held across
// round trips, nothing lives in the session (no advisory locks, no
// prepared statements, no temporary tables, no SET), and the statements
// are sent with pgx's simple protocol whatever the pool's default. A pool,
// or PgBouncer in transaction pooling mode, may run each request on any
// server connection. A session-level advisory lock would not do as the
// source of truth: through a pooler it is held by whichever server
// connection ran it, orphaned when the client goes, and gone on a
// failover, without the holder knowing.
//
// [Acquire] calls ringflake_node_acquire, which locks the prefix's epoch
// row (FOR UPDATE: acquisitions of a prefix run one at a time), finds the
// lowest id in the layout's range without a live row (expires_at later
// than clock_timestamp()), and writes its row with the holder, a new
// fencing token and expires_at = clock_timestamp() + TTL — an expiry
// computed by the database's clock, never by the application's. The mark
// in the row stays: the next holder loads it. The lease counts its
// validity from the instant it sent the request, on its own monotonic
// clock:
//
//	(instant the last successful renewal was sent) + TTL − Margin
//
// The database set expires_at later than that instant, so the row
// outlives the lease's own count; Margin (TTL/100 + 2ms by default)
// covers the holder's clock running slower than the database's.
// [lease.Keeper.Held], which a generator calls on every ID, compares that
// instant with the monotonic clock on every call.
//
// A background goroutine renews every RenewEvery (TTL/3 by default): one
// call of ringflake_node_renew, which sets expires_at = clock_timestamp()
// + TTL on the id's row if its fencing token is still this lease's. When
// the row expired or was released, or was deleted, and nobody acquired
// the id since (the token is still ours, or there is no row), the lease
// takes it again ([lease.Retaken]); when another token is there, the lease
// is lost for good ([lease.Lost]): Held stays false, Done is closed, Err
// tells why. When renewals fail (the database or PgBouncer down, a
// partition), Held turns false once the lease may have expired, and turns
// true again when a renewal succeeds with the token still ours.
//
// # Fencing
//
// The row's fence is the fencing token: every acquisition takes a new one,
// greater than every token handed out under the prefix before (the epoch
// row counts them) and than the database's clock in microseconds, so
// tokens keep growing even after the tables were restored from an older
// backup. A mark is saved (ringflake_node_save_mark_in_order) only while
// the row holds the lease's token and has not expired on the database's
// clock: a holder paused past its TTL (SIGSTOP, a stopped VM) cannot
// overwrite the mark of the next holder, its generator issues nothing past
// its last saved mark, and the next holder starts after that mark. And a
// mark is saved only when no later save of the lease was stored before
// (the row keeps the number of the save that stored its mark): a request
// that stalled on the way and arrives late cannot put the mark back.
//
// # When the database loses data
//
// Every acquisition and renewal reads the prefix's epoch row. When it is
// missing — a new prefix, tables dropped and made again, a restore of a
// backup from before the prefix existed — Acquire (or Claim) makes a new
// one, with a new random epoch, and a quiet period of TTL + Margin +
// MaxLead; renewals of leases of the old epoch report them lost for good
// (the error matches [lease.ErrDataLost]). The row also records the
// server's system identifier (new with every initdb) and WAL timeline (new
// with every promotion of a replica and every recovery from a backup):
// when they changed, the next acquisition or renewal starts a quiet period
// too, and keeps the epoch, so that holders whose rows survived keep
// their ids. A lease that takes an id during a quiet period does not hold
// it until the period ends (Held is false; [lease.Keeper.WaitHeld] waits):
// by then every holder the database may have forgotten has stopped, and
// the clock has passed every ID such a holder may have issued ahead of
// its clock (docs/fleet.md gives the arithmetic).
//
// A restart of the server loses nothing: the functions that write commit
// with synchronous_commit raised to on when the server's setting is off
// or local, so a lease or a mark that the database acknowledged is on
// disk. What is not detected: a logical restore (pg_dump) into the same
// cluster, or rows edited by hand. After such a restore, delete the
// prefix's epoch row (DELETE FROM ringflake_node_epochs WHERE prefix =
// '…') before the fleet reconnects: every holder then loses its lease
// and the next acquirer waits out a quiet period.
//
// # The mark's lead, and the TTL
//
// As with the other lease modules, a generator keeps its mark TTL/2 ahead
// ([lease.Keeper.MarkAhead]): one statement about every TTL/4 per node.
// The TTL is how long an id of a crashed holder stays unusable, how long
// a holder cut off from the database keeps issuing, and, with MaxLead, how
// long a quiet period lasts; a renewal must succeed within TTL − Margin.
// 10 s (the default) suits most fleets. TTLs are whole milliseconds.
//
// A prefix's ids must all be used with layouts of the same node range
// (Options.Layout); ids are never burned, and [List] shows which are in
// use, by whom, with their remaining TTL and mark.
package pglease
