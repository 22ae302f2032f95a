package ringflake_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/simclock"
	"github.com/ringflake/ringflake/strategies"
)

// countingRing is the ring strategy with its Decide calls counted; it
// states nothing about being TickStable.
type countingRing struct {
	strategies.Strategy
	asked atomic.Int64
}

func (c *countingRing) Decide(s strategies.Situation) strategies.Plan {
	c.asked.Add(1)
	return c.Strategy.Decide(s)
}

// stableRing is countingRing saying it is TickStable.
type stableRing struct{ *countingRing }

func (stableRing) TickStable() bool { return true }

// Reusing a plan for later calls in the same situation is opted into: a
// strategy that does not say it is TickStable is asked on every call of a
// rollback, one that does once per situation (here: one clock tick, one
// newest tick).
func TestLaneIsOptIn(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stable bool
		asked  func(calls int64) (lo, hi int64)
	}{
		{"not TickStable", false, func(calls int64) (int64, int64) { return calls, calls }},
		{"TickStable", true, func(int64) (int64, int64) { return 1, 1 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &countingRing{Strategy: strategies.Ring()}
			var s strategies.Strategy = c
			if tc.stable {
				s = stableRing{c}
			}
			clk := simclock.New(start)
			g, err := ringflake.New(1, ringflake.WithClock(clk), ringflake.WithStrategy(s))
			require.NoError(t, err)
			for range 10 {
				_, err := g.Next()
				require.NoError(t, err)
				clk.Add(time.Millisecond)
			}
			clk.Step(-5 * time.Millisecond) // back into ticks with room: the ring reuses them
			require.Zero(t, c.asked.Load(), "the strategy is not asked before the rollback")
			const calls = 100
			for range calls {
				_, err := g.Next()
				require.NoError(t, err)
			}
			lo, hi := tc.asked(calls)
			assert.GreaterOrEqual(t, c.asked.Load(), lo)
			assert.LessOrEqual(t, c.asked.Load(), hi)
			assert.Equal(t, uint64(calls), g.Stats().RingReuses, "every call reused a number of the ring")
		})
	}
}

// countingLogical is the logical strategy (TickStable) with its Decide
// calls counted.
type countingLogical struct {
	strategies.Strategy
	asked atomic.Int64
}

func (c *countingLogical) Decide(s strategies.Situation) strategies.Plan {
	c.asked.Add(1)
	return c.Strategy.Decide(s)
}

func (*countingLogical) TickStable() bool { return true }

// A borrowing generator counts on through the ticks of the plan its
// strategy gave: with the clock standing still in one tick, 5 ticks'
// worth of IDs ask the logical strategy once, not once per borrowed tick;
// a newest tick past the plan's range asks again, and so does a new clock
// tick.
func TestLaneCountsOnThroughThePlansTicks(t *testing.T) {
	c := &countingLogical{Strategy: strategies.Logical(5 * time.Millisecond)}
	clk := simclock.New(start)
	g, err := ringflake.New(1, ringflake.WithClock(clk), ringflake.WithStrategy(c))
	require.NoError(t, err)
	const perTick = 4096 // the Twitter layout's sequence
	var last ringflake.ID
	next := func() ringflake.ID {
		t.Helper()
		id, err := g.Next()
		require.NoError(t, err)
		require.Greater(t, id, last)
		last = id
		return id
	}
	first := next()
	for range 5*perTick - 1 {
		next()
	}
	// The clock's tick and the next four, borrowed.
	assert.Equal(t, int64(1), c.asked.Load(), "asked once for the clock's tick used up, then counted on")
	l := g.Layout()
	assert.Equal(t, first.Time(l).Add(4*time.Millisecond), last.Time(l))

	// The plan at that clock tick reaches 5 ms ahead: the sixth tick is
	// the last one in it, the seventh needs the next clock tick.
	for range perTick {
		next()
	}
	assert.Equal(t, int64(1), c.asked.Load())
	// Past the plan's range the strategy is asked again (it sleeps to the
	// next clock tick, which the simulated clock reaches at once).
	next()
	assert.Greater(t, c.asked.Load(), int64(1), "a newest tick past the plan's range asks again")
	asked := c.asked.Load()
	clk.Add(time.Millisecond)
	next()
	assert.Equal(t, asked+1, c.asked.Load(), "a new clock tick asks the strategy again")
	assert.Equal(t, uint64(0), g.Stats().Rollbacks)
}
