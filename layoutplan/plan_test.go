package layoutplan_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/layoutplan"
)

var planEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestPlan(t *testing.T) {
	d := layoutplan.Demand{Nodes: 500, Rate: 100_000, Years: 50, Epoch: planEpoch}
	fits, err := layoutplan.Fits(d)
	require.NoError(t, err)
	var got []string
	for _, f := range fits {
		got = append(got, f.Layout.String())
	}
	assert.Equal(t, []string{
		"epoch=2026-01-01T00:00:00Z,unit=1ms,time=43,node=11,seq=9",
		"epoch=2026-01-01T00:00:00Z,unit=100ms,time=36,node=11,seq=16",
		"epoch=2026-01-01T00:00:00Z,unit=1s,time=33,node=11,seq=19",
		"epoch=2026-01-01T00:00:00Z,unit=10ms,time=39,node=11,seq=13",
	}, got)
	assert.InDelta(t, 2048.0/500, fits[0].Nodes, 1e-9)
	assert.InDelta(t, 512_000.0/100_000, fits[0].Rate, 1e-9)
	assertFits(t, d, fits)

	// One unit only, when asked.
	d.Unit = 10 * time.Millisecond
	fits, err = layoutplan.Fits(d)
	require.NoError(t, err)
	require.Len(t, fits, 1)
	assert.Equal(t, 10*time.Millisecond, fits[0].Layout.Spec().Unit)
	assertFits(t, d, fits)
}

// assertFits checks that every fit meets d, with the headroom it claims,
// in order of headroom, and prints as a layout string that reads back.
func assertFits(t *testing.T, d layoutplan.Demand, fits []layoutplan.Fit) {
	t.Helper()
	require.NotEmpty(t, fits)
	for i, f := range fits {
		l := f.Layout
		lifetime := l.Last().Add(l.Spec().Unit).Sub(l.Spec().Epoch)
		assert.Equal(t, 63, l.Spec().Width)
		assert.GreaterOrEqual(t, l.MaxNode()+1, d.Nodes, "%s: nodes", l)
		assert.GreaterOrEqual(t, layoutplan.Capacity(l), d.Rate, "%s: rate", l)
		assert.GreaterOrEqual(t, lifetime.Hours()/24/365.25, d.Years, "%s: years", l)
		assert.GreaterOrEqual(t, f.Headroom(), 1.0)
		assert.InDelta(t, float64(l.MaxNode()+1)/float64(d.Nodes), f.Nodes, 1e-9)
		assert.InDelta(t, layoutplan.Capacity(l)/d.Rate, f.Rate, 1e-9)
		assert.InDelta(t, lifetime.Hours()/24/365.25/d.Years, f.Years, 1e-6)
		if i > 0 {
			assert.LessOrEqual(t, f.Headroom(), fits[i-1].Headroom(), "best first")
		}
		back, err := ringflake.ParseLayout(l.String())
		require.NoError(t, err)
		assert.True(t, l.Equal(back))
		if !d.Epoch.IsZero() {
			assert.True(t, l.Spec().Epoch.Equal(d.Epoch))
		}
	}
}

// Small demands leave most bits spare; they go round to every field.
func TestPlanSharesSpareBits(t *testing.T) {
	d := layoutplan.Demand{Nodes: 1, Rate: 1, Years: 1, Unit: time.Second, Epoch: planEpoch}
	fits, err := layoutplan.Fits(d)
	require.NoError(t, err)
	assertFits(t, d, fits)
	// 1 s of 33 bits lasts 272 years; a 34th bit would pass 292 years, so
	// time stops there and the rest goes to sequence and node.
	assert.Equal(t, "epoch=2026-01-01T00:00:00Z,unit=1s,time=33,node=15,seq=15", fits[0].Layout.String())

	d = layoutplan.Demand{Nodes: 3, Rate: 0.5, Years: 0.001, Epoch: planEpoch}
	fits, err = layoutplan.Fits(d)
	require.NoError(t, err)
	assertFits(t, d, fits)
}

func TestPlanNoLayoutFits(t *testing.T) {
	_, err := layoutplan.Fits(layoutplan.Demand{Nodes: 1 << 20, Rate: 1e9, Years: 100, Epoch: planEpoch})
	require.ErrorIs(t, err, layoutplan.ErrNoLayoutFits)
	var pe *layoutplan.NoFitError
	require.ErrorAs(t, err, &pe)
	require.Len(t, pe.Short, 4)
	assert.Equal(t, layoutplan.Shortfall{Unit: time.Millisecond, NodeBits: 20, SequenceBits: 20, TimeBits: 42}, pe.Short[0])
	assert.Equal(t, 19, pe.Short[0].Missing())
	assert.Contains(t, err.Error(), "with 1ms ticks 20 node + 20 sequence + 42 time bits = 82, 19 more than 63")

	// One bit too many: Twitter's layout (4096 IDs per 1 ms tick, 69
	// years) with one node more than its 1024.
	_, err = layoutplan.Fits(layoutplan.Demand{Nodes: 1025, Rate: 4_096_000, Years: 69, Unit: time.Millisecond, Epoch: planEpoch})
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, []layoutplan.Shortfall{{Unit: time.Millisecond, NodeBits: 11, SequenceBits: 12, TimeBits: 41}}, pe.Short)
	assert.Equal(t, 1, pe.Short[0].Missing())

	_, err = layoutplan.Fits(layoutplan.Demand{Nodes: 1, Rate: 1, Years: 300, Epoch: planEpoch})
	require.ErrorAs(t, err, &pe)
	for _, s := range pe.Short {
		assert.True(t, s.TooLong, "%v", s)
	}
	assert.Contains(t, err.Error(), "292 years")
}

func TestPlanRejects(t *testing.T) {
	ok := layoutplan.Demand{Nodes: 1, Rate: 1, Years: 1, Epoch: planEpoch}
	for _, tc := range []struct {
		field string
		edit  func(*layoutplan.Demand)
	}{
		{"Nodes", func(d *layoutplan.Demand) { d.Nodes = 0 }},
		{"Rate", func(d *layoutplan.Demand) { d.Rate = 0 }},
		{"Rate", func(d *layoutplan.Demand) { d.Rate = math.NaN() }},
		{"Rate", func(d *layoutplan.Demand) { d.Rate = math.Inf(1) }},
		{"Years", func(d *layoutplan.Demand) { d.Years = -1 }},
		{"Unit", func(d *layoutplan.Demand) { d.Unit = 1500 * time.Microsecond }},
		{"Unit", func(d *layoutplan.Demand) { d.Unit = -time.Millisecond }},
	} {
		d := ok
		tc.edit(&d)
		_, err := layoutplan.Fits(d)
		require.ErrorIs(t, err, layoutplan.ErrInvalidDemand, tc.field)
		var de *layoutplan.DemandError
		require.ErrorAs(t, err, &de)
		assert.Equal(t, tc.field, de.Field)
	}
	d := ok
	d.Epoch = time.Date(1969, 1, 1, 0, 0, 0, 0, time.UTC)
	_, err := layoutplan.Fits(d)
	require.ErrorIs(t, err, ringflake.ErrInvalidLayout)
	assert.False(t, errors.Is(err, layoutplan.ErrNoLayoutFits))
}
