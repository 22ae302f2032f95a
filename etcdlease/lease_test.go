package etcdlease_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/etcdlease"
	"github.com/ringflake/ringflake/lease/leasetest"
)

// TestFailedAcquisitionRevokesItsLease: Acquire grants an etcd lease before
// it looks for a free id; when there is none, it revokes that lease. It
// counts the leases of the shared server, so it runs first, before other
// tests leave any behind.
func TestFailedAcquisitionRevokesItsLease(t *testing.T) {
	ctx := context.Background()
	c := sharedClient(t)
	opts := etcdlease.Options{Prefix: leasetest.Prefix(t), Layout: leasetest.SmallLayout(t, 2), TTL: time.Minute}
	for range 4 {
		l, err := etcdlease.Acquire(ctx, c, opts)
		require.NoError(t, err)
		t.Cleanup(func() { _ = l.Close(ctx) })
	}
	leases, err := c.Leases(ctx)
	require.NoError(t, err)
	before := len(leases.Leases)
	_, err = etcdlease.Acquire(ctx, c, opts)
	require.ErrorIs(t, err, ringflake.ErrNodeUnavailable)
	leases, err = c.Leases(ctx)
	require.NoError(t, err)
	assert.Len(t, leases.Leases, before, "the etcd lease granted for a failed acquisition is revoked")
}

// TestConformance runs the lease modules' shared suite against etcd.
func TestConformance(t *testing.T) { leasetest.Run(t, driver{}) }

func TestAcquireNilClient(t *testing.T) {
	_, err := etcdlease.Acquire(context.Background(), nil, etcdlease.Options{})
	require.ErrorIs(t, err, ringflake.ErrInvalidOption)
}
