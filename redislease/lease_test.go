package redislease_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/internal/leasetest"
	"github.com/ringflake/ringflake/redislease"
)

// TestConformance runs the lease modules' shared suite against Redis.
func TestConformance(t *testing.T) { leasetest.Run(t, driver{}) }

func TestAcquireNilClient(t *testing.T) {
	_, err := redislease.Acquire(context.Background(), nil, redislease.Options{})
	require.ErrorIs(t, err, ringflake.ErrInvalidOption)
}
