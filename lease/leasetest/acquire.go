package leasetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/lease"
	"github.com/ringflake/ringflake/simclock"
	"github.com/ringflake/ringflake/strategies"
)

func testConcurrentAcquirers(t *testing.T, d Driver) {
	for _, tc := range []struct {
		name      string
		nodeBits  int
		acquirers int
	}{
		{"64 acquirers, 1024 ids", 10, 64},
		{"64 acquirers, 16 ids", 4, 64},
		{"32 acquirers, 32 ids", 5, 32},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := withPrefix(settled(t, d.Connect(t)))
			opts.Layout = SmallLayout(t, tc.nodeBits)
			leases := make([]*holder, tc.acquirers)
			errs := make([]error, tc.acquirers)
			var g errgroup.Group
			for i := range tc.acquirers {
				c := d.Connect(t) // a client (connection) each, like separate processes
				g.Go(func() error {
					leases[i], errs[i] = acquire(t, c, opts)
					return nil
				})
			}
			require.NoError(t, g.Wait())

			var ids []int64
			for i, l := range leases {
				if errs[i] != nil {
					require.ErrorIs(t, errs[i], ringflake.ErrNodeUnavailable)
					continue
				}
				require.True(t, l.Held())
				ids = append(ids, l.Node())
			}
			slices.Sort(ids)
			n := min(tc.acquirers, 1<<tc.nodeBits)
			want := make([]int64, n)
			for i := range want {
				want[i] = int64(i)
			}
			assert.Equal(t, want, ids, "distinct ids, the lowest ones, one per acquirer while ids last")
		})
	}
}

func testExhaustedRange(t *testing.T, d Driver) {
	c := d.Connect(t)
	opts := withPrefix(settled(t, c))
	opts.Layout = SmallLayout(t, 2)
	for want := range int64(4) {
		assert.Equal(t, want, mustAcquire(t, c, opts).Node())
	}
	_, err := acquire(t, c, opts)
	require.ErrorIs(t, err, ringflake.ErrNodeUnavailable)
	var full *lease.RangeFullError
	require.ErrorAs(t, err, &full)
	assert.Equal(t, int64(4), full.Nodes)
	assert.Equal(t, opts.Prefix, full.Prefix)

	// The same prefix with a wider layout has room.
	wider := opts
	wider.Layout = SmallLayout(t, 3)
	assert.Equal(t, int64(4), mustAcquire(t, c, wider).Node())
}

// testExpiredIDIsHandedOutAgain: ids are reused after their lease
// expires, never burned.
func testExpiredIDIsHandedOutAgain(t *testing.T, d Driver) {
	c := d.Connect(t)
	opts := withPrefix(settled(t, c))
	a := mustAcquire(t, c, opts)
	require.Equal(t, int64(1), mustAcquire(t, c, opts).Node())
	c.Expire(t, opts.Prefix, a.Node())
	assert.Equal(t, int64(0), mustAcquire(t, c, opts).Node(), "the expired id, not a new one")
	assert.Equal(t, int64(2), mustAcquire(t, c, opts).Node())
}

func testCloseReleasesTheID(t *testing.T, d Driver) {
	ctx := context.Background()
	c := d.Connect(t)
	opts := withPrefix(settled(t, c))
	a := mustAcquire(t, c, opts)
	b := mustAcquire(t, c, opts)
	require.Equal(t, []int64{0, 1}, []int64{a.Node(), b.Node()})

	g := newGenerator(t, a, simclock.New(Start), strategies.Default())
	_, err := g.Next()
	require.NoError(t, err)
	require.NoError(t, g.Close(ctx))
	require.NoError(t, a.Close(ctx))
	assert.False(t, a.Held())
	assert.ErrorIs(t, a.Err(), lease.ErrClosed)
	requireDone(t, a)
	require.NoError(t, a.Close(ctx), "closing twice")
	exists, _ := c.Key(t, opts.Prefix, 0)
	assert.False(t, exists, "the lease key is deleted at once, not left to expire")

	// A new generator on the closed lease refuses to issue. (New itself
	// need not save a mark: the exact mark Close saved covers the clock.)
	g, err = ringflake.New(0, ringflake.WithLease(a.Lease), ringflake.WithClock(simclock.New(Start)))
	if err == nil {
		_, err = g.Next()
	}
	require.ErrorIs(t, err, ringflake.ErrLeaseLost)

	assert.Equal(t, int64(0), mustAcquire(t, c, opts).Node(), "the lowest free id is handed out again")
	assert.Equal(t, int64(2), mustAcquire(t, c, opts).Node())
}

func testListShowsHolders(t *testing.T, d Driver) {
	ctx := context.Background()
	c := d.Connect(t)
	opts := withPrefix(settled(t, c))
	opts.Layout = SmallLayout(t, 11) // more than 1024 ids: a List in chunks needs two
	list, err := c.List(ctx, opts)
	require.NoError(t, err)
	assert.Empty(t, list)

	var hs []*holder
	for _, name := range []string{"ids-0", "ids-1", "ids-2"} {
		o := opts
		o.Holder = name
		hs = append(hs, mustAcquire(t, c, o))
	}
	g := newGenerator(t, hs[1], simclock.New(Start), strategies.Default())
	require.NoError(t, hs[2].Close(ctx))
	// A key written by someone else: listed, without a holder.
	expires := c.Put(t, opts.Prefix, 2000, "someone")

	list, err = c.List(ctx, opts)
	require.NoError(t, err)
	require.Len(t, list, 3)
	for i, want := range []struct {
		node    int64
		holder  string
		expires bool
	}{{0, "ids-0", true}, {1, "ids-1", true}, {2000, "", expires}} {
		assert.Equal(t, want.node, list[i].Node)
		assert.Equal(t, want.holder, list[i].Holder)
		if want.expires {
			assert.Positive(t, list[i].TTL)
			assert.LessOrEqual(t, list[i].TTL, ttl)
		}
	}
	assert.True(t, list[0].Mark.IsZero(), "no generator saved a mark for node 0")
	assert.True(t, Start.Add(ttl/2).Equal(list[1].Mark), "the generator's first mark, written ahead by the lease's lead: %v", list[1].Mark)
	require.NoError(t, g.Close(ctx))
}

func testRenewalsKeepTheLease(t *testing.T, d Driver) {
	c := d.Connect(t)
	h := mustAcquire(t, c, withPrefix(settled(t, c)))
	g := newGenerator(t, h, simclock.New(Start), strategies.Default())
	for i := 1; i <= 5; i++ {
		e := h.advance(t, every, lease.Renewed)
		sent := Start.Add(time.Duration(i) * every)
		assert.Equal(t, sent.Add(ttl-margin), e.ValidUntil, "valid from the instant the renewal was sent, less the margin")
		assert.True(t, h.Held())
		_, err := g.Next()
		require.NoError(t, err)
	}
}

func testInvalidOptions(t *testing.T, d Driver) {
	c := d.Unreachable(t) // never reached: the options are checked first
	unit := d.TTLUnit()
	for _, tc := range []struct {
		name string
		opts lease.Options
	}{
		{"negative TTL", lease.Options{TTL: -time.Second}},
		{"TTL below the unit", lease.Options{TTL: unit / 2}},
		{"TTL not a whole number of units", lease.Options{TTL: unit * 3 / 2}},
		{"renewal not shorter than TTL", lease.Options{TTL: time.Second, RenewEvery: time.Second}},
		{"renewal plus margin not shorter than TTL", lease.Options{TTL: time.Second, RenewEvery: 900 * time.Millisecond, Margin: 100 * time.Millisecond}},
		{"negative margin", lease.Options{Margin: -1}},
		{"negative timeout", lease.Options{Timeout: -1}},
		{"negative max lead", lease.Options{MaxLead: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Acquire(context.Background(), tc.opts)
			require.ErrorIs(t, err, ringflake.ErrInvalidOption)
			_, err = c.Claim(context.Background(), 0, tc.opts)
			require.ErrorIs(t, err, ringflake.ErrInvalidOption)
			_, err = c.List(context.Background(), tc.opts)
			require.ErrorIs(t, err, ringflake.ErrInvalidOption)
		})
	}
}
