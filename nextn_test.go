package ringflake_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/simclock"
	"github.com/ringflake/ringflake/strategies"
)

// NextN fills the whole slice with strictly increasing IDs, as many Next
// calls would, taking a tick's sequence numbers with one atomic operation:
// a batch larger than a tick waits for the next tick for the rest.
func TestNextNFillsInOrder(t *testing.T) {
	clk := simclock.New(start)
	g, err := ringflake.New(5, ringflake.WithClock(clk))
	require.NoError(t, err)
	ids := make([]ringflake.ID, 10000) // 4096 a tick: two ticks and a bit
	n, err := g.NextN(context.Background(), ids)
	require.NoError(t, err)
	require.Equal(t, len(ids), n)
	for i := 1; i < n; i++ {
		require.Greater(t, ids[i], ids[i-1])
	}
	l := g.Layout()
	assert.Equal(t, start, ids[0].Time(l))
	assert.Equal(t, start.Add(2*time.Millisecond), ids[n-1].Time(l), "two tick waits")
	assert.Equal(t, uint64(2), g.Stats().TickWaits)
	assert.Equal(t, uint64(10000), g.Stats().Issued)

	next, err := g.Next()
	require.NoError(t, err)
	assert.Greater(t, next, ids[n-1], "Next goes on after the batch")

	n, err = g.NextN(context.Background(), nil)
	require.NoError(t, err)
	assert.Zero(t, n, "an empty batch")
}

// NextN follows the strategy as Next does: during a rollback the ring's
// spare room, the logical strategy's borrowing, the error strategy's
// error — with the IDs filled before it valid and issued.
func TestNextNFollowsTheStrategy(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		strategy string
		check    func(t *testing.T, ids []ringflake.ID, n int, err error, before ringflake.ID, l ringflake.Layout)
	}{
		{"error", func(t *testing.T, ids []ringflake.ID, n int, err error, _ ringflake.ID, _ ringflake.Layout) {
			require.ErrorIs(t, err, ringflake.ErrClockRollback)
			assert.Zero(t, n)
		}},
		{"ring", func(t *testing.T, ids []ringflake.ID, n int, err error, before ringflake.ID, l ringflake.Layout) {
			require.NoError(t, err)
			assert.Equal(t, len(ids), n)
			for _, id := range ids {
				assert.LessOrEqual(t, id.Time(l), before.Time(l), "reused: never past the newest ID")
			}
		}},
		{"logical:1s", func(t *testing.T, ids []ringflake.ID, n int, err error, before ringflake.ID, _ ringflake.Layout) {
			require.NoError(t, err)
			assert.Equal(t, len(ids), n)
			assert.Greater(t, ids[0], before, "monotonic through the rollback")
		}},
	} {
		t.Run(tc.strategy, func(t *testing.T) {
			s, err := strategies.Parse(tc.strategy)
			require.NoError(t, err)
			clk := simclock.New(start)
			g, err := ringflake.New(5, ringflake.WithClock(clk), ringflake.WithStrategy(s))
			require.NoError(t, err)
			var before ringflake.ID
			for range 20 { // some room left in each of 20 ticks
				before, err = g.Next()
				require.NoError(t, err)
				clk.Add(time.Millisecond)
			}
			clk.Step(-10 * time.Millisecond)
			clk.Add(time.Millisecond) // the generator sees the step at the next tick
			ids := make([]ringflake.ID, 300)
			n, err := g.NextN(ctx, ids)
			for i := 1; i < n; i++ {
				require.Greater(t, ids[i], ids[i-1], "a batch is strictly increasing")
			}
			tc.check(t, ids, n, err, before, g.Layout())
		})
	}
}

// A batch allocates nothing and costs one atomic operation per tick: the
// benchmarks in bench/ measure it; here, that it allocates nothing.
func TestNextNDoesNotAllocate(t *testing.T) {
	clk := simclock.New(start)
	g, err := ringflake.New(5, ringflake.WithClock(fixedAfter{clk}))
	require.NoError(t, err)
	ids := make([]ringflake.ID, 256)
	assert.Zero(t, mallocs(100, func() { _, err = g.NextN(context.Background(), ids) }))
	require.NoError(t, err)
}

// With WithSequenceOffset(4096) each tick starts at a random sequence
// number, so at one ID per tick id % 16 spreads evenly over 16 shards —
// without it every ID would land on shard 0 — and IDs stay unique through
// clock steps.
func TestSequenceOffsetSpreadsShards(t *testing.T) {
	clk := simclock.New(start)
	g, err := ringflake.New(0, ringflake.WithClock(clk), ringflake.WithSequenceOffset(4096),
		ringflake.WithStrategy(strategies.Ring()))
	require.NoError(t, err)
	const n, shards = 16000, 16
	var count [shards]int
	seen := make(map[ringflake.ID]bool, n)
	for i := range n {
		id, err := g.Next()
		require.NoError(t, err)
		require.False(t, seen[id], "ID %d issued twice", id)
		seen[id] = true
		count[id%shards]++
		clk.Add(time.Millisecond)
		if i%1000 == 999 {
			clk.Step(-30 * time.Millisecond) // the ring reuses spare room
		}
	}
	mean := n / shards
	for s, c := range count {
		assert.InDelta(t, mean, c, 0.3*float64(mean), "shard %d", s)
	}

	plain, err := ringflake.New(1, ringflake.WithClock(clk))
	require.NoError(t, err)
	for range 100 {
		id, err := plain.Next()
		require.NoError(t, err)
		assert.Zero(t, id%shards, "without the offset, one ID per tick is sequence 0")
		clk.Add(time.Millisecond)
	}

	_, err = ringflake.New(2, ringflake.WithSequenceOffset(-1))
	require.ErrorIs(t, err, ringflake.ErrInvalidOption)
}

// leadLease is a held lease that bounds the fleet's lead.
type leadLease struct {
	node int64
	lead time.Duration
}

func (l leadLease) Node() int64            { return l.node }
func (l leadLease) Held() bool             { return true }
func (l leadLease) MaxLead() time.Duration { return l.lead }
func (l leadLease) String() string         { return "leadLease" }

// overreach is a strategy that states a lead of 2 ms but plans to borrow
// a whole second ahead.
type overreach struct{}

func (overreach) Decide(s strategies.Situation) strategies.Plan {
	return strategies.Issue(max(s.Now(), s.Newest), s.Now()+1000)
}
func (overreach) String() string { return "overreach" }
func (overreach) Promise() strategies.Promise {
	return strategies.Promise{Monotonic: true, MaxLead: 2 * time.Millisecond}
}

// A lease that bounds the lead bounds it whatever the strategy plans: the
// generator never issues further ahead of its clock than MaxLead, so that
// the next holder after a lease server lost its data starts above every ID
// this one issued.
func TestLeaseBoundsTheLead(t *testing.T) {
	clk := simclock.New(start)
	g, err := ringflake.New(4, ringflake.WithClock(clk), ringflake.WithLease(leadLease{node: 4, lead: 5 * time.Millisecond}),
		ringflake.WithStrategy(overreach{}))
	require.NoError(t, err)
	l := g.Layout()
	for range 10 * 4096 { // ten ticks' worth without the clock moving
		id, err := g.Next()
		if err != nil {
			break // at the bound: the strategy has nothing more to offer
		}
		require.LessOrEqual(t, id.Time(l).Sub(clk.Now()), 5*time.Millisecond, "ID %d leads the clock too far", id)
	}
	assert.Equal(t, 5*time.Millisecond, g.Stats().MaxLead)
}
