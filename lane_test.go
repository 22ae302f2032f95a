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

// countingLogical is the logical strategy, TickStable, with its Decide
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

// A plan that counts on from the newest tick (logical, borrowing) serves
// the calls of the same clock tick after it moved the newest tick on
// within its range: at one clock tick, a generator borrowing ten ticks
// asks its strategy once, not once per borrowed tick, and its IDs stay
// unique, increasing and within the lead.
func TestLaneCountsOnAcrossBorrowedTicks(t *testing.T) {
	c := &countingLogical{Strategy: strategies.Logical(time.Second)}
	clk := simclock.New(start)
	small, err := ringflake.ParseLayout("twitter,node=18,seq=4") // 16 IDs a tick
	require.NoError(t, err)
	g, err := ringflake.New(1, ringflake.WithClock(clk), ringflake.WithStrategy(c), ringflake.WithLayout(small))
	require.NoError(t, err)
	var prev ringflake.ID
	for i := range 16 * 11 { // the clock's tick, then ten borrowed ones
		id, err := g.Next()
		require.NoError(t, err)
		require.Greater(t, id, prev, "call %d", i)
		prev = id
	}
	assert.Equal(t, int64(1), c.asked.Load(), "asked once: when the clock's own tick was used up")
	st := g.Stats()
	assert.Equal(t, 10*time.Millisecond, st.Borrowed)
	assert.Equal(t, uint64(16*11), st.Issued)
	// The next clock tick is a new situation: the strategy is asked again.
	clk.Add(time.Millisecond)
	for range 17 {
		_, err := g.Next()
		require.NoError(t, err)
	}
	assert.Equal(t, int64(2), c.asked.Load())
}
