-- ringflake's opaque public IDs in PostgreSQL (13 and later, with pgcrypto):
-- the public number of an ID and back, exactly as the Go package opaque
-- computes them (Codec.Encode and Codec.Decode), so that a view can publish
-- opaque IDs and a query can find a row by one.
--
-- Install:   psql -f sql/opaque.sql        (into the first schema of search_path;
--                                           creates the extension pgcrypto if missing)
--
--   ringflake_opaque_encode(id bigint, key bytea, tweak bytea) → bigint
--   ringflake_opaque_decode(pub bigint, key bytea, tweak bytea) → bigint
--
-- key is the AES key of the version that made the number (16, 24 or 32 bytes:
-- decode(base64, 'base64') of its entry in RINGFLAKE_OPAQUE_KEY, which reads the
-- standard base64 alphabet, padded); tweak is the
-- type's tweak as bytes (convert_to('order_', 'UTF8')). For example:
--
--   CREATE VIEW public_orders AS
--   SELECT ringflake_opaque_encode(id, decode(current_setting('app.opaque_key'), 'base64'),
--                                  convert_to('order_', 'UTF8')) AS public_id,
--          total, created_at
--   FROM orders;
--
--   SELECT * FROM orders
--   WHERE id = ringflake_opaque_decode($1, decode(current_setting('app.opaque_key'), 'base64'),
--                                      convert_to('order_', 'UTF8'));
--
-- The algorithm is FF1 of NIST SP 800-38G with radix 2 over the ID's 63
-- bits (u = 31, v = 32, b = 4, d = 8), AES through pgcrypto's
-- encrypt(block, key, 'aes-ecb/pad:none'): ten AES blocks per ID and one
-- to two more for the part of the CBC-MAC that depends on the key and
-- tweak only (opaque/binary.go explains the layout). Only the number: the
-- text form, with its key version and checks, is made by the Go package.
-- A negative ID or number, a key of another length or a tweak longer than
-- 256 bytes is an error with SQLSTATE 22023 (invalid_parameter_value).
-- NULL in, NULL out.
--
-- Keep the key out of SQL text that is logged (log_statement): pass it as
-- a parameter or a setting of the session or role, and remember that a
-- superuser can read it.

CREATE EXTENSION IF NOT EXISTS pgcrypto;

-- ringflake_opaque_int8 reads 8 bytes of b from byte offset off (from 1)
-- as a big-endian bigint.
CREATE OR REPLACE FUNCTION ringflake_opaque_int8(b bytea, off int)
RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT ('x' || encode(substring(b FROM off FOR 8), 'hex'))::bit(64)::bigint
$$;

-- ringflake_opaque_base returns the CBC-MAC state of FF1's P and of every
-- block of Q before the last, XORed with the 11 bytes of the last block
-- that come from the tweak, as two bigints: a round XORs [i]^1 || [B]^4
-- into the low one and encrypts.
CREATE OR REPLACE FUNCTION ringflake_opaque_base(key bytea, tweak bytea)
RETURNS bigint[]
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    t     int := length(tweak);
    head  bytea;
    whole int;
    state bytea;
    hi    bigint;
    lo    bigint;
BEGIN
    IF length(key) NOT IN (16, 24, 32) THEN
        RAISE EXCEPTION 'opaque: invalid key: % bytes, want 16, 24 or 32 (AES-128, -192, -256)', length(key)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF t > 256 THEN
        RAISE EXCEPTION 'opaque: invalid option: tweak of % bytes, want at most 256', t
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- P = 01 02 01 | radix 000002 | 0a | u = 1f | n = 0000003f | t.
    state := encrypt('\x010201000002' || '\x0a1f0000003f'::bytea || int4send(t), key, 'aes-ecb/pad:none');
    -- Q before [i]: T || 0^((-t-5) mod 16), 11 bytes past a block boundary.
    head := tweak || decode(repeat('00', ((-t - 5) % 16 + 16) % 16), 'hex');
    whole := length(head) - 11;
    FOR j IN 0 .. whole / 16 - 1 LOOP
        hi := ringflake_opaque_int8(state, 1) # ringflake_opaque_int8(head, 16 * j + 1);
        lo := ringflake_opaque_int8(state, 9) # ringflake_opaque_int8(head, 16 * j + 9);
        state := encrypt(int8send(hi) || int8send(lo), key, 'aes-ecb/pad:none');
    END LOOP;
    head := substring(head FROM whole + 1) || '\x0000000000'::bytea;
    RETURN ARRAY[ringflake_opaque_int8(state, 1) # ringflake_opaque_int8(head, 1),
                 ringflake_opaque_int8(state, 9) # ringflake_opaque_int8(head, 9)];
END
$$;

-- ringflake_opaque_encode returns the public number of id under key and
-- tweak: FF1.Encrypt of its 63 bits.
CREATE OR REPLACE FUNCTION ringflake_opaque_encode(id bigint, key bytea, tweak bytea)
RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    base bigint[];
    a    bigint;
    b    bigint;
    c    bigint;
    m    bigint;
    y    bigint;
BEGIN
    IF id < 0 THEN
        RAISE EXCEPTION 'opaque: negative ID: %', id USING ERRCODE = 'invalid_parameter_value';
    END IF;
    base := ringflake_opaque_base(key, tweak);
    a := id >> 32;         -- the top 31 bits
    b := id & 4294967295;  -- the low 32
    FOR i IN 0 .. 9 LOOP
        y := ringflake_opaque_int8(encrypt(int8send(base[1]) || int8send(base[2] # (i::bigint << 32 | b)),
                                           key, 'aes-ecb/pad:none'), 1);
        m := CASE WHEN i % 2 = 0 THEN 2147483647 ELSE 4294967295 END;  -- mod 2^31, 2^32
        c := (a + (y & m)) & m;
        a := b;
        b := c;
    END LOOP;
    RETURN a << 32 | b;
END
$$;

-- ringflake_opaque_decode returns the ID whose public number under key and
-- tweak is pub: FF1.Decrypt of its 63 bits.
CREATE OR REPLACE FUNCTION ringflake_opaque_decode(pub bigint, key bytea, tweak bytea)
RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    base bigint[];
    a    bigint;
    b    bigint;
    c    bigint;
    m    bigint;
    y    bigint;
BEGIN
    IF pub < 0 THEN
        RAISE EXCEPTION 'opaque: malformed public ID: negative: %', pub USING ERRCODE = 'invalid_parameter_value';
    END IF;
    base := ringflake_opaque_base(key, tweak);
    a := pub >> 32;
    b := pub & 4294967295;
    FOR i IN REVERSE 9 .. 0 LOOP
        y := ringflake_opaque_int8(encrypt(int8send(base[1]) || int8send(base[2] # (i::bigint << 32 | a)),
                                           key, 'aes-ecb/pad:none'), 1);
        m := CASE WHEN i % 2 = 0 THEN 2147483647 ELSE 4294967295 END;
        c := (b - (y & m)) & m;
        b := a;
        a := c;
    END LOOP;
    RETURN a << 32 | b;
END
$$;
