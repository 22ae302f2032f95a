// Package sqltest proves ringflake's database/sql support (ringflake.ID and
// ringflake.NullID as sql.Scanner and driver.Valuer, and NullID's JSON
// against the server's json and jsonb) against a real PostgreSQL server,
// through both common drivers, github.com/jackc/pgx/v5 and
// github.com/lib/pq. It is a module of its own so that the drivers stay
// out of ringflake's dependencies; it has no API, only tests.
//
// The tests read the server's address from RINGFLAKE_TEST_POSTGRES_DSN and
// fail when it is not set. scripts/test.sh starts a throwaway server and
// sets it.
package sqltest
