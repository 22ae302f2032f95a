package leasetest

import (
	"cmp"
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

// testFirstStart: under a prefix the server has no epoch for — a new one,
// or one whose data it lost — leases take ids at once but do not hold them
// until a quiet period of TTL + Margin + MaxLead has passed; WaitHeld
// waits for it, and generators fail with ErrLeaseLost until then.
func testFirstStart(t *testing.T, d Driver) {
	for _, maxLead := range []time.Duration{0, 30 * time.Second} {
		t.Run(fmt.Sprintf("MaxLead %v", maxLead), func(t *testing.T) { firstStart(t, d, maxLead) })
	}
}

func firstStart(t *testing.T, d Driver, maxLead time.Duration) {
	ctx := context.Background()
	c := d.Connect(t)
	opts := withPrefix(Prefix(t)) // not settled
	opts.MaxLead = maxLead
	quiet := ttl + margin + cmp.Or(maxLead, lease.DefaultMaxLead)
	a := mustAcquire(t, c, opts)
	b := mustAcquire(t, c, opts)
	require.Equal(t, []int64{0, 1}, []int64{a.Node(), b.Node()})
	assert.False(t, a.Held(), "quiet period")
	assert.False(t, b.Held(), "quiet period, also for the second acquirer")
	g := newGenerator(t, a, simclock.New(Start), strategies.Default())
	_, err := g.Next()
	require.ErrorIs(t, err, ringflake.ErrLeaseLost)

	waited := make(chan error, 1)
	go func() { waited <- a.WaitHeld(ctx) }()
	for range 3 {
		a.advance(t, every, lease.Renewed)
		assert.False(t, a.Held(), "quiet period, though renewed")
	}
	// (B's period ends a little earlier on its mock clock: the real time
	// between the two acquisitions counts.)
	a.clk.Set(Start.Add(quiet - time.Millisecond))
	assert.False(t, a.Held(), "the quiet period lasts TTL + Margin + MaxLead")
	select {
	case err := <-waited:
		t.Fatalf("WaitHeld returned during the quiet period: %v", err)
	default:
	}
	// The period ends TTL + Margin + MaxLead after the server started it
	// (etcd: rounded up to whole seconds, plus one for TimeToLive's
	// rounding).
	a.clk.Set(Start.Add(quiet + time.Second))
	assert.True(t, a.Held())
	select {
	case err := <-waited:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("WaitHeld did not return within 30s after the quiet period")
	}
	_, err = g.Next()
	require.NoError(t, err)

	require.NoError(t, g.Close(ctx))
	require.NoError(t, a.Close(ctx))
	require.ErrorIs(t, a.WaitHeld(ctx), lease.ErrClosed, "a closed lease never holds its id again")
}

// testMarkAhead: a lease suggests TTL/2 as the lead of the marks kept
// with it, and a generator uses it unless told otherwise.
func testMarkAhead(t *testing.T, d Driver) {
	ctx := context.Background()
	c := d.Connect(t)
	prefix := settled(t, c)
	h := mustAcquire(t, c, withPrefix(prefix))
	assert.Equal(t, ttl/2, h.MarkAhead())
	g := newGenerator(t, h, simclock.New(Start), strategies.Default())
	mark, err := h.LoadMark(ctx)
	require.NoError(t, err)
	assert.True(t, Start.Add(ttl/2).Equal(mark.Limit), "the first mark, TTL/2 ahead: %v", mark)
	require.NoError(t, g.Close(ctx))

	g, err = ringflake.New(0, ringflake.WithLease(h.Lease), ringflake.WithClock(simclock.New(Start.Add(time.Hour))),
		ringflake.WithMarkAhead(time.Second))
	require.NoError(t, err)
	mark, err = h.LoadMark(ctx)
	require.NoError(t, err)
	assert.True(t, Start.Add(time.Hour+time.Second).Equal(mark.Limit), "WithMarkAhead wins: %v", mark)
	require.NoError(t, g.Close(ctx))
}

// testMarkCarriedToTheNextHolder hands an id from holder A to holder B
// whose clock reads 5 s behind A's. B starts after every ID A issued:
// after A's mark written ahead (the lease's lead, TTL/2, past A's last ID)
// when A crashed, before that lead when A closed cleanly — or, with the
// default strategy, refuses.
func testMarkCarriedToTheNextHolder(t *testing.T, d Driver) {
	ctx := context.Background()
	lead := ttl / 2
	for _, tc := range []struct {
		name     string
		clean    bool // A closes its generator and lease; else A crashes
		strategy strategies.Strategy
		refuses  bool
	}{
		{"crash, logical", false, strategies.Logical(time.Minute), false},
		{"crash, wait", false, strategies.Wait(time.Minute), false},
		{"crash, default refuses", false, strategies.Default(), true},
		{"clean close, logical", true, strategies.Logical(10 * time.Second), false},
		{"clean close, wait", true, strategies.Wait(10 * time.Second), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := d.Connect(t)
			opts := withPrefix(settled(t, c))
			opts.MaxLead = time.Minute // the fleet's strategies lead by up to a minute
			a := mustAcquire(t, c, opts)
			ga := newGenerator(t, a, simclock.New(Start), strategies.Default())
			var newestA ringflake.ID
			for range 100 {
				id, err := ga.Next()
				require.NoError(t, err)
				newestA = id
			}
			if tc.clean {
				require.NoError(t, ga.Close(ctx))
				require.NoError(t, a.Close(ctx))
			} else {
				c.Expire(t, opts.Prefix, 0) // A crashed: its lease ran out
			}

			b := mustAcquire(t, c, opts)
			require.Equal(t, int64(0), b.Node(), "the same id")
			gb := newGenerator(t, b, simclock.New(Start.Add(-5*time.Second)), tc.strategy)
			id, err := gb.Next()
			if tc.refuses {
				require.ErrorIs(t, err, ringflake.ErrClockRollback)
				return
			}
			require.NoError(t, err)
			l := gb.Layout()
			assert.Greater(t, id, newestA)
			aLast, bFirst := newestA.Time(l), id.Time(l)
			if tc.clean {
				assert.True(t, bFirst.Before(aLast.Add(lead)), "B starts at %v, within the lead after A's last ID %v", bFirst, aLast)
			} else {
				assert.True(t, bFirst.After(aLast.Add(lead)), "B starts at %v, after A's mark %v", bFirst, aLast.Add(lead))
			}
		})
	}
}

func testCorruptMark(t *testing.T, d Driver) {
	c := d.Connect(t)
	prefix := settled(t, c)
	h := mustAcquire(t, c, withPrefix(prefix))
	where := c.CorruptMark(t, prefix, 0)
	_, err := ringflake.New(0, ringflake.WithLease(h.Lease), ringflake.WithClock(simclock.New(Start)))
	require.ErrorIs(t, err, ringflake.ErrMarkCorrupt)
	var me *ringflake.MarkError
	require.ErrorAs(t, err, &me)
	assert.Contains(t, me.Path, where)
}

func testMarkRoundTrip(t *testing.T, d Driver) {
	ctx := context.Background()
	c := d.Connect(t)
	h := mustAcquire(t, c, withPrefix(settled(t, c)))
	mark, err := h.LoadMark(ctx)
	require.NoError(t, err)
	assert.True(t, mark.IsZero(), "a first start")
	at := time.Date(2026, 11, 22, 12, 0, 1, 123456789, time.UTC)
	want := ringflake.Mark{Limit: at, Since: at.Add(-time.Second), Node: h.Node(), Layout: "twitter"}
	require.NoError(t, h.SaveMark(ctx, want))
	mark, err = h.LoadMark(ctx)
	require.NoError(t, err)
	assert.Equal(t, want, mark)
}
