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

// RequireEnv returns the environment variable name, and fails the test —
// a lease test that skips proves nothing — with how to provide the
// servers when it is not set.
func RequireEnv(t testing.TB, name string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		t.Fatalf("%s is not set. These tests need real servers: run ./scripts/test.sh from the repository root "+
			"(it installs redis-server and etcd and starts throwaway ones), or start them yourself and export "+
			"%s=127.0.0.1:PORT %s=$(command -v redis-server) %s=http://127.0.0.1:PORT %s=$(command -v etcd)",
			name, RedisAddrEnv, RedisServerEnv, EtcdEndpointsEnv, EtcdServerEnv)
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
