package opaque

import (
	"testing"
)

// testSecret returns a fixed secret of n bytes, different for each seed.
func testSecret(seed byte, n int) []byte {
	s := make([]byte, n)
	for i := range s {
		s[i] = seed*31 + byte(i)*7 + 1
	}
	return s
}

// testKeys returns a key set with an AES-256 primary of version 2 and an
// AES-128 key of version 1.
func testKeys(tb testing.TB) *Keys {
	tb.Helper()
	ks, err := NewKeys(Key{Version: 2, Secret: testSecret(2, 32)}, Key{Version: 1, Secret: testSecret(1, 16)})
	if err != nil {
		tb.Fatal(err)
	}
	return ks
}
