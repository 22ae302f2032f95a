package chronyhealth_test

import (
	"os"
	"testing"
)

// envAddr returns the command address in the environment variable name,
// which scripts/test.sh exports; the test fails without it.
func envAddr(t *testing.T, name string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		t.Fatalf("%s is not set: run scripts/test.sh, which starts chronyd -x on loopback and sets it", name)
	}
	return v
}
