-- ringflake's IDs in PostgreSQL (13 and later): the time, node and sequence
-- of an ID, and the smallest and largest ID of a timestamp, for any layout.
--
-- Install:   psql -f sql/ringflake.sql        (into the first schema of search_path)
--
-- Every function takes the layout as its last parameters, as a layout
-- string would give them:
--
--   epoch        timestamptz  the layout's epoch               twitter: '2010-11-04 01:42:54.657+00'
--   unit_ms      bigint       the tick length in milliseconds  twitter: 1, sonyflake: 10
--   time_bits    int          bits of the tick count           twitter: 41
--   node_bits    int          bits of the node (datacenter and worker together)  twitter: 10
--   seq_bits     int          bits of the sequence             twitter: 12
--   field_order  text         'time,node,seq' (the default: Twitter, discord)
--                             or 'time,seq,node' (Sonyflake)
--
-- For example, for IDs of the sonyflake preset:
--
--   SELECT ringflake_time(id, '2014-09-01+00', 10, 39, 16, 8, 'time,seq,node'),
--          ringflake_node(id, '2014-09-01+00', 10, 39, 16, 8, 'time,seq,node')
--   FROM orders;
--
--   SELECT * FROM orders
--   WHERE id BETWEEN ringflake_min_id('2026-01-01+00', '2010-11-04 01:42:54.657+00', 1, 41, 10, 12)
--                AND ringflake_max_id('2026-01-31 23:59:59.999+00', '2010-11-04 01:42:54.657+00', 1, 41, 10, 12);
--
-- They agree with the Go package (Layout.Decompose, Layout.Bounds): an ID
-- that is negative or uses bits above the layout's width is an error, as is
-- a layout NewLayout rejects; a timestamp outside the layout's lifetime
-- saturates to its first or last tick in ringflake_min_id and
-- ringflake_max_id. NULL in, NULL out. Timestamps have microseconds, so an
-- epoch with finer digits than that cannot be written here. Errors have
-- SQLSTATE 22023 (invalid_parameter_value).

-- ringflake_check_layout raises an error for a layout ringflake.NewLayout
-- rejects, and returns the number of bits below the time.
CREATE OR REPLACE FUNCTION ringflake_check_layout(
    epoch timestamptz, unit_ms bigint, time_bits int, node_bits int, seq_bits int, field_order text)
RETURNS int
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
    IF epoch < '1970-01-01 00:00:00+00' THEN
        RAISE EXCEPTION 'ringflake: invalid layout: epoch: % is before 1970-01-01T00:00:00Z', epoch
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF unit_ms < 1 THEN
        RAISE EXCEPTION 'ringflake: invalid layout: unit: % ms is not a positive whole number of milliseconds', unit_ms
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF time_bits < 1 OR node_bits < 0 OR seq_bits < 0 OR time_bits + node_bits + seq_bits > 63 THEN
        RAISE EXCEPTION 'ringflake: invalid layout: bits: time % + node % + sequence % must be at most 63, time at least 1',
            time_bits, node_bits, seq_bits
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF field_order NOT IN ('time,node,seq', 'time,seq,node') THEN
        RAISE EXCEPTION 'ringflake: invalid layout: order: % is neither time,node,seq nor time,seq,node', field_order
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- The last tick must start within a Go time.Duration of the epoch
    -- (63 bits never do; tested apart, as 1 << 63 would overflow).
    IF time_bits = 63 THEN
        RAISE EXCEPTION 'ringflake: invalid layout: time: 63 bits reach beyond the about 292 years a layout can last'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF (1::bigint << time_bits) - 1 > 9223372036854775807 / (unit_ms * 1000000) THEN
        RAISE EXCEPTION 'ringflake: invalid layout: time: % bits of % ms reach beyond the about 292 years a layout can last',
            time_bits, unit_ms
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    RETURN node_bits + seq_bits;
END
$$;

-- ringflake_check_id raises an error for an ID that is negative or uses bits
-- above the layout's width.
CREATE OR REPLACE FUNCTION ringflake_check_id(id bigint, width int)
RETURNS void
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
    IF id < 0 OR (width < 63 AND id >> width <> 0) THEN
        RAISE EXCEPTION 'ringflake: invalid ID "%": does not fit the layout''s % bits', id, width
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
END
$$;

-- ringflake_part returns the part of id named part ('tick', 'node' or
-- 'sequence') under the layout, after checking both.
CREATE OR REPLACE FUNCTION ringflake_part(
    id bigint, epoch timestamptz, unit_ms bigint, time_bits int, node_bits int, seq_bits int,
    field_order text, part text)
RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    below int := ringflake_check_layout(epoch, unit_ms, time_bits, node_bits, seq_bits, field_order);
    seq_first boolean := field_order = 'time,seq,node';
BEGIN
    PERFORM ringflake_check_id(id, time_bits + below);
    CASE part
    WHEN 'tick' THEN
        RETURN id >> below;
    WHEN 'node' THEN
        RETURN (id >> CASE WHEN seq_first THEN 0 ELSE seq_bits END) & ((1::bigint << node_bits) - 1);
    WHEN 'sequence' THEN
        RETURN (id >> CASE WHEN seq_first THEN node_bits ELSE 0 END) & ((1::bigint << seq_bits) - 1);
    END CASE;
END
$$;

-- ringflake_tick returns the tick count of id: units since the epoch.
CREATE OR REPLACE FUNCTION ringflake_tick(
    id bigint, epoch timestamptz, unit_ms bigint, time_bits int, node_bits int, seq_bits int,
    field_order text DEFAULT 'time,node,seq')
RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT ringflake_part(id, epoch, unit_ms, time_bits, node_bits, seq_bits, field_order, 'tick')
$$;

-- ringflake_node returns id's node (datacenter and worker together).
CREATE OR REPLACE FUNCTION ringflake_node(
    id bigint, epoch timestamptz, unit_ms bigint, time_bits int, node_bits int, seq_bits int,
    field_order text DEFAULT 'time,node,seq')
RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT ringflake_part(id, epoch, unit_ms, time_bits, node_bits, seq_bits, field_order, 'node')
$$;

-- ringflake_sequence returns id's sequence number.
CREATE OR REPLACE FUNCTION ringflake_sequence(
    id bigint, epoch timestamptz, unit_ms bigint, time_bits int, node_bits int, seq_bits int,
    field_order text DEFAULT 'time,node,seq')
RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT ringflake_part(id, epoch, unit_ms, time_bits, node_bits, seq_bits, field_order, 'sequence')
$$;

-- ringflake_time returns the start of id's tick.
CREATE OR REPLACE FUNCTION ringflake_time(
    id bigint, epoch timestamptz, unit_ms bigint, time_bits int, node_bits int, seq_bits int,
    field_order text DEFAULT 'time,node,seq')
RETURNS timestamptz
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    ms bigint := ringflake_part(id, epoch, unit_ms, time_bits, node_bits, seq_bits, field_order, 'tick') * unit_ms;
BEGIN
    -- Hours and seconds, not days: timestamptz + '1 day' depends on the
    -- time zone's daylight saving, hours never do; and whole hours keep
    -- the seconds small enough to be exact in double precision.
    RETURN epoch + make_interval(hours => (ms / 3600000)::int, secs => (ms % 3600000) / 1000.0);
END
$$;

-- ringflake_clamp_tick returns the tick ts falls in, moved into the
-- layout's ticks [0, 2^time_bits - 1]. It counts exact microseconds from
-- the interval's fields (extract(epoch ...) is double precision before
-- PostgreSQL 14).
CREATE OR REPLACE FUNCTION ringflake_clamp_tick(ts timestamptz, epoch timestamptz, unit_ms bigint, time_bits int)
RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    d interval := ts - epoch; -- days and time, of one sign; no months
    us bigint := extract(day FROM d)::bigint * 86400000000
              + extract(hour FROM d)::bigint * 3600000000
              + extract(minute FROM d)::bigint * 60000000
              + extract(microseconds FROM d)::bigint;
    unit_us bigint := unit_ms * 1000;
    tick bigint;
BEGIN
    IF us >= 0 THEN
        tick := us / unit_us;
    ELSE
        tick := -((-us + unit_us - 1) / unit_us); -- rounding down, as Go's Layout.Tick
    END IF;
    RETURN least(greatest(tick, 0), (1::bigint << time_bits) - 1);
END
$$;

-- ringflake_min_id returns the smallest ID any node can stamp in the tick
-- of ts (node 0, sequence 0); a ts before the epoch counts as the first
-- tick, after the last tick as the last.
CREATE OR REPLACE FUNCTION ringflake_min_id(
    ts timestamptz, epoch timestamptz, unit_ms bigint, time_bits int, node_bits int, seq_bits int,
    field_order text DEFAULT 'time,node,seq')
RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    below int := ringflake_check_layout(epoch, unit_ms, time_bits, node_bits, seq_bits, field_order);
BEGIN
    RETURN ringflake_clamp_tick(ts, epoch, unit_ms, time_bits) << below;
END
$$;

-- ringflake_max_id returns the largest ID any node can stamp in the tick of
-- ts (every node and sequence bit set), saturating as ringflake_min_id.
CREATE OR REPLACE FUNCTION ringflake_max_id(
    ts timestamptz, epoch timestamptz, unit_ms bigint, time_bits int, node_bits int, seq_bits int,
    field_order text DEFAULT 'time,node,seq')
RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    below int := ringflake_check_layout(epoch, unit_ms, time_bits, node_bits, seq_bits, field_order);
BEGIN
    RETURN ringflake_clamp_tick(ts, epoch, unit_ms, time_bits) << below | ((1::bigint << below) - 1);
END
$$;
