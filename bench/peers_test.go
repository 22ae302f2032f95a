package bench_test

import (
	"testing"
	"time"

	"github.com/bwmarrin/snowflake"
	"github.com/sony/sonyflake/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/simclock"
	"github.com/ringflake/ringflake/strategies"
)

// The peers' own decoders read the IDs ringflake issues under the presets
// named after them, and ringflake reads theirs: node, sequence and time.

// issue returns n IDs of a generator on node with layout l, on a simulated
// clock that steps back halfway (the ring reuses earlier ticks).
func issue(t *testing.T, l ringflake.Layout, node int64, n int) []ringflake.ID {
	t.Helper()
	clk := simclock.New(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	g, err := ringflake.New(node, ringflake.WithClock(clk), ringflake.WithLayout(l), ringflake.WithStrategy(strategies.Ring()))
	require.NoError(t, err)
	ids := make([]ringflake.ID, n)
	for i := range ids {
		switch {
		case i == n/2:
			clk.Step(-3 * l.Spec().Unit)
		case i%7 == 0:
			clk.Add(l.Spec().Unit)
		}
		ids[i], err = g.Next()
		require.NoError(t, err)
	}
	return ids
}

func TestSonyflakeReadsRingflake(t *testing.T) {
	const machine = 0xBEEF
	for _, tc := range []struct {
		name   string
		layout ringflake.Layout
		start  time.Time // Settings.StartTime; zero is v2's default, 2025-01-01
	}{
		{"sonyflake (v1's start)", ringflake.SonyflakeLayout(), time.Date(2014, 9, 1, 0, 0, 0, 0, time.UTC)},
		{"sonyflake-v2 (v2's defaults)", ringflake.SonyflakeV2Layout(), time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sf, err := sonyflake.New(sonyflake.Settings{StartTime: tc.start, MachineID: func() (int, error) { return machine, nil }})
			require.NoError(t, err)
			l := tc.layout
			for _, id := range issue(t, l, machine, 600) {
				parts := sf.Decompose(int64(id))
				assert.Equal(t, int64(machine), parts["machine"])
				assert.Equal(t, id.Sequence(l), parts["sequence"])
				assert.Equal(t, l.Tick(id.Time(l)), parts["time"])
				assert.True(t, sf.ToTime(int64(id)).Equal(id.Time(l)), "%v vs %v", sf.ToTime(int64(id)), id.Time(l))

				// And Sonyflake's own Compose makes the same ID.
				back, err := sf.Compose(id.Time(l), int(id.Sequence(l)), machine)
				require.NoError(t, err)
				assert.Equal(t, int64(id), back)
			}
		})
	}
}

func TestBwmarrinReadsRingflake(t *testing.T) {
	l, err := ringflake.ParseLayout("twitter,node=10") // bwmarrin's defaults: Twitter's epoch, 10 node bits, 12 step bits
	require.NoError(t, err)
	require.Equal(t, [2]uint8{10, 12}, [2]uint8{snowflake.NodeBits, snowflake.StepBits}, "bwmarrin's defaults")
	for _, id := range issue(t, l, 777, 600) {
		f := snowflake.ParseInt64(int64(id))
		assert.Equal(t, int64(777), f.Node())
		assert.Equal(t, id.Sequence(l), f.Step())
		assert.Equal(t, id.Time(l).UnixMilli(), f.Time())
	}

	// And ringflake reads bwmarrin's.
	n, err := snowflake.NewNode(5)
	require.NoError(t, err)
	for range 100 {
		f := n.Generate()
		id := ringflake.ID(f.Int64())
		assert.Equal(t, int64(5), id.Node(l))
		assert.Equal(t, f.Step(), id.Sequence(l))
		assert.Equal(t, f.Time(), id.Time(l).UnixMilli())
	}
}
