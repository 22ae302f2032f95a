package pglease

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/ringflake/ringflake/lease"
)

// Schema is the DDL [Migrate] runs: two tables and the functions every
// request of a lease calls. It is idempotent (CREATE … IF NOT EXISTS,
// CREATE OR REPLACE FUNCTION), so running it again — after an upgrade of
// this module, say — is safe; a DBA who manages the schema may run it by
// hand instead. The names are unqualified: they go to the first schema of
// the connection's search_path (set search_path in the connection string
// to keep them elsewhere).
//
// Every function runs as one statement, so as one short transaction of
// its own: nothing is held across round trips, no session state is used,
// and a pool or PgBouncer in transaction pooling mode may hand each call
// to any server connection. Functions that write raise synchronous_commit
// to on for their own transaction when the server's setting is off or
// local, so that a lease or a mark the server acknowledged survives a
// crash of the server.
const Schema = `
-- One migration at a time: concurrent CREATEs of one name can fail.
SELECT pg_advisory_xact_lock(7206443412375135572);

CREATE TABLE IF NOT EXISTS ringflake_node_epochs (
    prefix      text        PRIMARY KEY,
    epoch       text        NOT NULL,  -- random, made anew whenever the row is missing
    server      text        NOT NULL,  -- system identifier/timeline of the server that last wrote the row
    quiet_until timestamptz NOT NULL,  -- ids taken before it are not used before it
    fence       bigint      NOT NULL   -- the last fencing token handed out under the prefix
);

CREATE TABLE IF NOT EXISTS ringflake_node_leases (
    prefix     text        NOT NULL,
    node       bigint      NOT NULL,
    fence      bigint      NOT NULL,  -- the fencing token of the id's latest holder
    holder     text        NOT NULL,  -- Options.Holder of that holder
    expires_at timestamptz,           -- on the database's clock; NULL once released
    mark       text,                  -- the latest holder's high-water mark
    saved      bigint      NOT NULL DEFAULT 0,  -- the number of the holder's save that stored it
    PRIMARY KEY (prefix, node)
);

-- Tables made by versions before saved was added get it here.
ALTER TABLE ringflake_node_leases ADD COLUMN IF NOT EXISTS saved bigint NOT NULL DEFAULT 0;

-- ringflake_node_server names the server process's history: its system
-- identifier (new with every initdb) and its WAL timeline (new with every
-- promotion and every recovery from a backup).
CREATE OR REPLACE FUNCTION ringflake_node_server() RETURNS text
LANGUAGE sql VOLATILE AS $$
    SELECT (SELECT system_identifier FROM pg_control_system())::text || '/' ||
           substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8)
$$;

-- ringflake_node_guard returns the prefix's epoch row, locked, after
-- making it with epoch p_new_epoch and a quiet period when it is missing
-- (unless p_new_epoch is ''; the row is then NULL), and starting a
-- quiet period when the server's history changed since the row was last
-- written.
CREATE OR REPLACE FUNCTION ringflake_node_guard(p_prefix text, p_new_epoch text, p_quiet_ms bigint)
RETURNS ringflake_node_epochs
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    e ringflake_node_epochs;
    srv text := ringflake_node_server();
    quiet interval := p_quiet_ms * interval '1 millisecond';
BEGIN
    IF p_new_epoch <> '' THEN
        INSERT INTO ringflake_node_epochs (prefix, epoch, server, quiet_until, fence)
        VALUES (p_prefix, p_new_epoch, srv, clock_timestamp() + quiet, 0)
        ON CONFLICT ON CONSTRAINT ringflake_node_epochs_pkey DO NOTHING;
    END IF;
    SELECT * INTO e FROM ringflake_node_epochs WHERE prefix = p_prefix FOR UPDATE;
    IF FOUND AND e.server <> srv THEN
        UPDATE ringflake_node_epochs
        SET server = srv, quiet_until = greatest(quiet_until, clock_timestamp() + quiet)
        WHERE prefix = p_prefix
        RETURNING * INTO e;
    END IF;
    RETURN e;
END
$$;

-- ringflake_node_millis_left returns the whole milliseconds, rounded
-- up, from the start of the transaction on the database's clock until t;
-- 0 when t is not later. The client counts them from after the answer,
-- which is later still: it waits a little longer, never less.
CREATE OR REPLACE FUNCTION ringflake_node_millis_left(t timestamptz) RETURNS bigint
LANGUAGE sql VOLATILE AS $$
    SELECT CASE WHEN t > now() THEN ceil(extract(epoch FROM t - now()) * 1000)::bigint ELSE 0 END
$$;

-- ringflake_node_durable makes the commit of the current transaction
-- wait for its WAL to be flushed, unless the server already does more.
CREATE OR REPLACE FUNCTION ringflake_node_durable() RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    IF current_setting('synchronous_commit') IN ('off', 'local') THEN
        PERFORM set_config('synchronous_commit', 'on', true);
    END IF;
END
$$;

-- ringflake_node_acquire takes the lowest id of [p_from, p_to] that no
-- live lease holds, with a new fencing token. It returns the id (-1 when
-- every id there is held, with the holder of p_to), the token, the
-- prefix's epoch and the quiet period left in milliseconds.
CREATE OR REPLACE FUNCTION ringflake_node_acquire(p_prefix text, p_from bigint, p_to bigint, p_holder text,
    p_ttl_ms bigint, p_new_epoch text, p_quiet_ms bigint,
    OUT node bigint, OUT fence bigint, OUT epoch text, OUT quiet_ms bigint, OUT holder text)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
    e ringflake_node_epochs;
    n bigint;
BEGIN
    PERFORM ringflake_node_durable();
    e := ringflake_node_guard(p_prefix, p_new_epoch, p_quiet_ms);
    epoch := e.epoch;
    quiet_ms := ringflake_node_millis_left(e.quiet_until);
    holder := '';
    -- The epoch row is locked: acquisitions of the prefix run one at a
    -- time. A renewal may still extend its own row meanwhile, hence the
    -- loop.
    LOOP
        SELECT min(c) INTO n FROM (
            SELECT p_from AS c
            UNION ALL SELECT l.node + 1 FROM ringflake_node_leases l
                WHERE l.prefix = p_prefix AND l.expires_at > clock_timestamp()
            UNION ALL SELECT l.node FROM ringflake_node_leases l
                WHERE l.prefix = p_prefix AND (l.expires_at IS NULL OR l.expires_at <= clock_timestamp())
        ) free
        WHERE c BETWEEN p_from AND p_to AND NOT EXISTS (
            SELECT 1 FROM ringflake_node_leases l
            WHERE l.prefix = p_prefix AND l.node = free.c AND l.expires_at > clock_timestamp());
        IF n IS NULL THEN
            node := -1;
            fence := 0;
            SELECT l.holder INTO holder FROM ringflake_node_leases l WHERE l.prefix = p_prefix AND l.node = p_to;
            holder := coalesce(holder, '');
            RETURN;
        END IF;
        -- Fencing tokens grow with every acquisition, and start from the
        -- database's clock in microseconds, so that they keep growing
        -- after the table was restored from an older backup.
        fence := greatest(e.fence + 1, (extract(epoch FROM clock_timestamp()) * 1000000)::bigint);
        INSERT INTO ringflake_node_leases AS l (prefix, node, fence, holder, expires_at)
        VALUES (p_prefix, n, fence, p_holder, clock_timestamp() + p_ttl_ms * interval '1 millisecond')
        ON CONFLICT ON CONSTRAINT ringflake_node_leases_pkey DO UPDATE
            SET fence = excluded.fence, holder = excluded.holder, expires_at = excluded.expires_at, saved = 0
            WHERE l.expires_at IS NULL OR l.expires_at <= clock_timestamp();
        IF FOUND THEN
            UPDATE ringflake_node_epochs SET fence = ringflake_node_acquire.fence WHERE prefix = p_prefix;
            node := n;
            RETURN;
        END IF;
    END LOOP;
END
$$;

-- ringflake_node_renew extends the lease of p_node with token p_fence,
-- or takes the id again when the lease expired, was released or its row
-- deleted and nobody acquired the id since. Returns code 1 renewed, 2
-- taken again (with the quiet period left in milliseconds), 0 another
-- holder holds it, -1 it expired and another holder acquired it since,
-- -2 the prefix's epoch is not p_epoch: the table lost the prefix's data.
--
-- The common case, a live lease of ours on an unchanged server, locks
-- only the id's row. Every other case locks the prefix's epoch row first
-- and the id's row next, in the order of ringflake_node_acquire, so that
-- the two never wait for each other in a cycle.
CREATE OR REPLACE FUNCTION ringflake_node_renew(p_prefix text, p_node bigint, p_fence bigint, p_epoch text,
    p_holder text, p_ttl_ms bigint, p_quiet_ms bigint, OUT code int, OUT quiet_ms bigint)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    e ringflake_node_epochs;
    r ringflake_node_leases;
    ttl interval := p_ttl_ms * interval '1 millisecond';
BEGIN
    PERFORM ringflake_node_durable();
    quiet_ms := 0;
    SELECT * INTO e FROM ringflake_node_epochs WHERE prefix = p_prefix;
    IF e.epoch IS DISTINCT FROM p_epoch THEN
        code := -2;
        RETURN;
    END IF;
    IF e.server = ringflake_node_server() THEN
        UPDATE ringflake_node_leases SET expires_at = clock_timestamp() + ttl
        WHERE prefix = p_prefix AND node = p_node AND fence = p_fence AND expires_at > clock_timestamp();
        IF FOUND THEN
            code := 1;
            RETURN;
        END IF;
    END IF;
    -- The lease expired or was released, its row is gone or someone
    -- else's, or the server's history changed (which starts a quiet
    -- period).
    e := ringflake_node_guard(p_prefix, '', p_quiet_ms);
    IF e.epoch IS DISTINCT FROM p_epoch THEN
        code := -2;
        RETURN;
    END IF;
    SELECT * INTO r FROM ringflake_node_leases WHERE prefix = p_prefix AND node = p_node FOR UPDATE;
    IF NOT FOUND THEN
        -- Deleted by hand: nobody acquired the id since (an acquisition
        -- leaves its row, with its token, behind).
        INSERT INTO ringflake_node_leases (prefix, node, fence, holder, expires_at)
        VALUES (p_prefix, p_node, p_fence, p_holder, clock_timestamp() + ttl);
        code := 2;
    ELSIF r.fence <> p_fence THEN
        code := CASE WHEN r.expires_at > clock_timestamp() THEN 0 ELSE -1 END;
        RETURN;
    ELSE
        code := CASE WHEN r.expires_at > clock_timestamp() THEN 1 ELSE 2 END;
        UPDATE ringflake_node_leases SET expires_at = clock_timestamp() + ttl
        WHERE prefix = p_prefix AND node = p_node;
    END IF;
    IF code = 2 THEN
        quiet_ms := ringflake_node_millis_left(e.quiet_until);
    END IF;
END
$$;

-- ringflake_node_save_mark stores the mark of p_node while, and only
-- while, the lease with token p_fence holds the id in epoch p_epoch.
-- Returns whether it did. (What versions before save numbers called;
-- ringflake_node_save_mark_in_order replaces it.)
CREATE OR REPLACE FUNCTION ringflake_node_save_mark(p_prefix text, p_node bigint, p_fence bigint, p_epoch text, p_mark text)
RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    PERFORM ringflake_node_durable();
    UPDATE ringflake_node_leases l SET mark = p_mark
    WHERE l.prefix = p_prefix AND l.node = p_node AND l.fence = p_fence AND l.expires_at > clock_timestamp()
      AND EXISTS (SELECT 1 FROM ringflake_node_epochs e WHERE e.prefix = p_prefix AND e.epoch = p_epoch);
    RETURN FOUND;
END
$$;

-- ringflake_node_save_mark_in_order stores the mark of p_node, as save
-- number p_save of the lease with token p_fence, while, and only while,
-- that lease holds the id in epoch p_epoch, and only when no later save
-- of the lease was stored before: saves of a lease take effect in the
-- order they were made, so one that arrives late (a request its client
-- gave up on) changes nothing. Returns 1 saved, 0 the lease does not
-- hold the id, 2 a later save of the lease was stored first.
CREATE OR REPLACE FUNCTION ringflake_node_save_mark_in_order(p_prefix text, p_node bigint, p_fence bigint, p_epoch text,
    p_mark text, p_save bigint)
RETURNS int
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    PERFORM ringflake_node_durable();
    PERFORM 1 FROM ringflake_node_leases l
    WHERE l.prefix = p_prefix AND l.node = p_node AND l.fence = p_fence AND l.expires_at > clock_timestamp()
      AND EXISTS (SELECT 1 FROM ringflake_node_epochs e WHERE e.prefix = p_prefix AND e.epoch = p_epoch)
    FOR UPDATE OF l;
    IF NOT FOUND THEN
        RETURN 0;
    END IF;
    UPDATE ringflake_node_leases SET mark = p_mark, saved = p_save
    WHERE prefix = p_prefix AND node = p_node AND saved < p_save;
    RETURN CASE WHEN FOUND THEN 1 ELSE 2 END;
END
$$;
`

// Migrate creates the tables and functions of the leases, as [Schema]
// says, unless they exist, and replaces the functions with this version's.
// The DDL runs as one transaction, under a transaction-level advisory
// lock so that processes that migrate at the same time wait for each
// other. Run it before the first lease, with a role allowed
// to create tables. A lease on a database without the tables fails with
// an error that matches [ErrNoSchema].
func Migrate(ctx context.Context, db DB) error {
	if db == nil {
		return &lease.OptionError{Package: rules.Package, Reason: "Migrate: nil database"}
	}
	if _, err := db.Exec(ctx, Schema, pgx.QueryExecModeSimpleProtocol); err != nil {
		return fmt.Errorf("pglease: creating the lease tables: %w", clientErr(err))
	}
	return nil
}
