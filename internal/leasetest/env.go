package leasetest

import (
	"net"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// RequireEnv returns the environment variable name, and fails the test
// with help — how to provide the server it names — when it is not set.
func RequireEnv(t *testing.T, name, help string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		t.Fatalf("%s is not set. %s", name, help)
	}
	return v
}

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
