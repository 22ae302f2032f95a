package lease_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/lease"
)

// TestResolveZeroRules: zero Options resolved with zero Rules (no TTL
// unit) are an error, not a division by zero.
func TestResolveZeroRules(t *testing.T) {
	var o lease.Options
	var r lease.Rules
	require.NotPanics(t, func() {
		_, err := o.Resolve(r)
		require.ErrorIs(t, err, ringflake.ErrInvalidOption)
	})
}
