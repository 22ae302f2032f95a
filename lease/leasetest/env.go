package leasetest

import (
	"net"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// The environment variables that name the servers of the tests.
// scripts/test.sh installs redis-server and etcd when they are missing,
// starts throwaway servers on loopback ports and sets all four.
const (
	// RedisAddrEnv names a Redis server the tests share (each test under a
	// prefix of its own): 127.0.0.1:PORT.
	RedisAddrEnv = "RINGFLAKE_TEST_REDIS_ADDR"
	// RedisServerEnv names the redis-server binary, for tests that start,
	// stop and wipe servers of their own ([StartRedis]).
	RedisServerEnv = "RINGFLAKE_TEST_REDIS_SERVER"
	// EtcdEndpointsEnv names an etcd the tests share: comma-separated
	// endpoints, http://127.0.0.1:PORT.
	EtcdEndpointsEnv = "RINGFLAKE_TEST_ETCD_ENDPOINTS"
	// EtcdServerEnv names the etcd binary, for tests that start, stop and
	// wipe servers of their own ([StartEtcd]).
	EtcdServerEnv = "RINGFLAKE_TEST_ETCD_SERVER"
)

// The environment variables of the PostgreSQL and PgBouncer servers the
// tests of pglease use. scripts/test.sh starts a throwaway PostgreSQL and
// a PgBouncer in front of it and sets all four.
const (
	// PostgresDSNEnv names a PostgreSQL server the tests share (each test
	// under a prefix of its own): postgres://USER@127.0.0.1:PORT/DB?….
	PostgresDSNEnv = "RINGFLAKE_TEST_POSTGRES_DSN"
	// PostgresBindirEnv names the directory of initdb, pg_ctl and
	// postgres, for tests that start, crash and wipe clusters of their
	// own ([StartPostgres]).
	PostgresBindirEnv = "RINGFLAKE_TEST_POSTGRES_BINDIR"
	// PgBouncerDSNEnv names a PgBouncer in transaction pooling mode in
	// front of the server of PostgresDSNEnv.
	PgBouncerDSNEnv = "RINGFLAKE_TEST_PGBOUNCER_DSN"
	// PgBouncerEnv names the pgbouncer binary, for tests that start and
	// restart PgBouncers of their own ([StartPgBouncer]).
	PgBouncerEnv = "RINGFLAKE_TEST_PGBOUNCER"
)

// RequireEnv returns the environment variable name, and fails the test —
// a lease test that skips proves nothing — with how to provide the
// servers when it is not set.
func RequireEnv(t testing.TB, name string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		t.Fatalf("%s is not set. These tests need real servers: run ./scripts/test.sh from the repository root "+
			"(it installs redis-server, etcd, PostgreSQL and PgBouncer and starts throwaway ones), or start them yourself and export "+
			"%s=127.0.0.1:PORT %s=$(command -v redis-server) %s=http://127.0.0.1:PORT %s=$(command -v etcd) "+
			"%s=postgres://USER@127.0.0.1:PORT/DB %s=/usr/lib/postgresql/VERSION/bin %s=postgres://USER@127.0.0.1:PGBOUNCER_PORT/DB %s=$(command -v pgbouncer)",
			name, RedisAddrEnv, RedisServerEnv, EtcdEndpointsEnv, EtcdServerEnv,
			PostgresDSNEnv, PostgresBindirEnv, PgBouncerDSNEnv, PgBouncerEnv)
	}
	return v
}

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
