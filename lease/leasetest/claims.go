package leasetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/lease"
	"github.com/ringflake/ringflake/simclock"
	"github.com/ringflake/ringflake/strategies"
)

// testClaim: Claim holds the id it is given, with the same keys as
// Acquire: a second claim of a held id fails, naming the holder; Acquire
// skips claimed ids; an id out of the layout's range is refused.
func testClaim(t *testing.T, d Driver) {
	ctx := context.Background()
	c := d.Connect(t)
	opts := withPrefix(settled(t, c))
	opts.Layout = SmallLayout(t, 3) // ids 0 to 7
	named := func(holder string) lease.Options {
		o := opts
		o.Holder = holder
		return o
	}
	a := mustClaim(t, c, 2, named("host-a/101"))
	assert.Equal(t, int64(2), a.Node())
	assert.True(t, a.Held(), "a settled prefix: held at once")
	require.NoError(t, a.WaitHeld(ctx))
	require.Equal(t, int64(0), mustAcquire(t, c, named("host-acquirer/7")).Node())

	for _, tc := range []struct {
		name string
		node int64
		want string // the holder the error names
	}{{"a claimed id", 2, "host-a/101"}, {"an acquired id", 0, "host-acquirer/7"}} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := claim(t, c, tc.node, named("host-b/202"))
			require.ErrorIs(t, err, ringflake.ErrNodeUnavailable)
			var held *lease.HeldError
			require.ErrorAs(t, err, &held)
			assert.Equal(t, tc.node, held.Node)
			assert.Equal(t, tc.want, held.Holder, "the error names the holder")
			assert.Equal(t, opts.Prefix, held.Prefix)
		})
	}
	assert.Equal(t, int64(1), mustAcquire(t, c, opts).Node())
	assert.Equal(t, int64(3), mustAcquire(t, c, opts).Node(), "Acquire skips the claimed id")

	c.Put(t, opts.Prefix, 5, "someone")
	_, err := claim(t, c, 5, opts)
	var held *lease.HeldError
	require.ErrorAs(t, err, &held, "a key written by someone else")
	assert.Empty(t, held.Holder, "its holder is not known")

	for _, node := range []int64{8, -1} {
		_, err := claim(t, c, node, opts)
		require.ErrorIs(t, err, ringflake.ErrNodeOutOfRange, "node %d of ids 0 to 7", node)
	}

	// A claim under a prefix the server has no epoch for waits out the
	// quiet period, as an acquisition does.
	fresh := withPrefix(Prefix(t))
	f := mustClaim(t, c, 4, fresh)
	assert.False(t, f.Held(), "quiet period")
	for range 3 {
		f.advance(t, every, lease.Renewed)
		assert.False(t, f.Held(), "quiet period, though renewed")
	}
	f.clk.Set(Start.Add(ttl + margin + lease.DefaultMaxLead + time.Second))
	assert.True(t, f.Held())
}

// testClaimCarriesTheMark: a claim keeps the generator's mark, as an
// acquired lease does: after a clean close and after a crash, the next
// claim of the id starts after every ID the previous holder issued, even
// with a clock five seconds behind.
func testClaimCarriesTheMark(t *testing.T, d Driver) {
	ctx := context.Background()
	for _, clean := range []bool{true, false} {
		t.Run(fmt.Sprintf("clean %v", clean), func(t *testing.T) {
			c := d.Connect(t)
			opts := withPrefix(settled(t, c))
			opts.MaxLead = time.Minute
			a := mustClaim(t, c, 9, opts)
			ga := newGenerator(t, a, simclock.New(Start), strategies.Default())
			var newest ringflake.ID
			for range 50 {
				id, err := ga.Next()
				require.NoError(t, err)
				newest = id
			}
			if clean {
				require.NoError(t, ga.Close(ctx))
				require.NoError(t, a.Close(ctx))
			} else {
				c.Expire(t, opts.Prefix, 9)
			}
			b := mustClaim(t, c, 9, opts)
			gb := newGenerator(t, b, simclock.New(Start.Add(-5*time.Second)), strategies.Logical(time.Minute))
			id, err := gb.Next()
			require.NoError(t, err)
			assert.Greater(t, id, newest, "the next holder starts after the previous one's IDs")
			assert.Equal(t, int64(9), id.Node(gb.Layout()))
		})
	}
}

// testClaimLost: a holder whose claim is taken from it stops issuing at
// its next renewal, and the new holder starts after its mark.
func testClaimLost(t *testing.T, d Driver) {
	for _, tc := range []struct {
		name  string
		steal func(t *testing.T, c Conn, opts lease.Options) *holder
	}{
		{"expired and claimed by another process", func(t *testing.T, c Conn, opts lease.Options) *holder {
			c.Expire(t, opts.Prefix, 6)
			return mustClaim(t, c, 6, opts)
		}},
		{"overwritten", func(t *testing.T, c Conn, opts lease.Options) *holder {
			c.Put(t, opts.Prefix, 6, "intruder")
			return nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := d.Connect(t)
			opts := withPrefix(settled(t, c))
			a := mustClaim(t, c, 6, opts)
			aClock := simclock.New(Start)
			ga := newGenerator(t, a, aClock, strategies.Default())
			first, err := ga.Next()
			require.NoError(t, err)

			b := tc.steal(t, c, opts)
			e := a.advance(t, every, lease.Lost)
			require.ErrorIs(t, e.Err, ringflake.ErrLeaseLost)
			assert.False(t, a.Held())
			aClock.Add(every)
			_, err = ga.Next()
			require.ErrorIs(t, err, ringflake.ErrLeaseLost, "the generator stops issuing")
			require.ErrorIs(t, a.Err(), ringflake.ErrLeaseLost)
			requireDone(t, a)
			if b == nil {
				return
			}
			// B holds the id now, and issues after A's IDs.
			gb := newGenerator(t, b, simclock.New(Start.Add(ttl)), strategies.Default())
			id, err := gb.Next()
			require.NoError(t, err)
			assert.Greater(t, id, first)
		})
	}
}
