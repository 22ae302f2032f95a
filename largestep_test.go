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

// TestLargeStepByStrategy is what the README's strategy section says each
// strategy does with a large step: after a second of light load (one ID
// per tick, Sonyflake's layout: 10 ms ticks of 256 sequence numbers) the
// clock steps back an hour. error, wait:5ms and logical:1s fail at once;
// ring — alone or first in the default chain — absorbs the step with the
// sequence numbers the last 256 ticks left unused (256 × 255 IDs; with
// Twitter's layout 256 × 4095), stamped at those ticks, up to the newest
// tick issued and an hour ahead of the clock, and only then fails.
func TestLargeStepByStrategy(t *testing.T) {
	const spare = 256 * 255 // the ring's 256 ticks, one ID each issued
	for _, tc := range []struct {
		strategy string
		absorbed int // IDs issued after the step before the first error
	}{
		{"error", 0},
		{"wait:5ms", 0},
		{"logical:1s", 0},
		{"ring", spare},
		{"ring,wait:5ms,error", spare},
	} {
		t.Run(tc.strategy, func(t *testing.T) {
			ctx := context.Background()
			s, err := strategies.Parse(tc.strategy)
			require.NoError(t, err)
			clk := simclock.New(start)
			l := ringflake.SonyflakeLayout()
			g, err := ringflake.New(1, ringflake.WithClock(clk), ringflake.WithStrategy(s), ringflake.WithLayout(l))
			require.NoError(t, err)
			defer func() { require.NoError(t, g.Close(ctx)) }()
			var newest ringflake.ID
			for range 1000 {
				id, err := g.Next()
				require.NoError(t, err)
				newest = id
				clk.Add(l.Spec().Unit)
			}
			clk.Step(-time.Hour)

			seen := make(map[ringflake.ID]bool, tc.absorbed)
			ids := make([]ringflake.ID, 4096)
			for {
				n, err := g.NextN(ctx, ids)
				for _, id := range ids[:n] {
					require.False(t, seen[id], "duplicate %d", id)
					seen[id] = true
					require.LessOrEqual(t, id.Time(l), newest.Time(l), "stamped past the newest tick before the step")
					require.Greater(t, id.Time(l), newest.Time(l).Add(-256*l.Spec().Unit), "stamped below the ring's window")
				}
				if err != nil {
					require.ErrorIs(t, err, ringflake.ErrClockRollback)
					break
				}
				require.LessOrEqual(t, len(seen), tc.absorbed, "issued more than the ring's spare")
			}
			assert.Equal(t, tc.absorbed, len(seen), "IDs issued after the step")
			if tc.absorbed > 0 {
				_, err := g.Next()
				require.ErrorIs(t, err, ringflake.ErrClockRollback, "once the spare is used up")
			}
		})
	}
}
