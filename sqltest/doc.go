// Package sqltest proves ringflake's database/sql support (ringflake.ID and
// ringflake.NullID as sql.Scanner and driver.Valuer, and NullID's JSON
// against the server's json and jsonb) against a real PostgreSQL server,
// through both common drivers, github.com/jackc/pgx/v5 and
// github.com/lib/pq, and the PostgreSQL functions of sql/ringflake.sql
// (the time, tick, node and sequence of an ID, and the smallest and largest
// ID of a timestamp, for any layout), which must agree with the Go
// functions on the edge IDs of every preset in both field orders, and the
// opaque public IDs of sql/opaque.sql (FF1 through pgcrypto), which must
// compute the same numbers as package opaque on 100,000 IDs. It also pins
// what pgx v5 does natively, without database/sql (pgx_test.go): ID,
// NullID and []ringflake.ID ↔ BIGINT[] through pgx.Conn and
// pgxpool.Pool, in every query mode. It is a
// module of its own so that the drivers stay out of ringflake's
// dependencies; it has no API, only tests.
//
// The tests read the server's address from RINGFLAKE_TEST_POSTGRES_DSN and
// fail when it is not set. scripts/test.sh starts a throwaway server and
// sets it.
//
// ringflake is licensed under the Apache License 2.0: see LICENSE at the
// root of the repository.
package sqltest
