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
