package layoutplan_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/layoutplan"
)

var cutoverAt = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func mustLayout(t testing.TB, s string) ringflake.Layout {
	t.Helper()
	l, err := ringflake.ParseLayout(s)
	require.NoError(t, err)
	return l
}

func TestCheckMigrationSameLayout(t *testing.T) {
	l := ringflake.TwitterLayout()
	m, err := layoutplan.CheckMigration(l, l, cutoverAt)
	require.NoError(t, err)
	assert.True(t, m.OK)
	first, _ := tickIDs(t, l, cutoverAt)
	_, last := tickIDs(t, l, cutoverAt.Add(-time.Millisecond))
	assert.Equal(t, first, m.First)
	assert.Equal(t, last, m.Last)
	assert.Equal(t, m.First-1, m.Last, "the ticks meet")
	assert.Equal(t, cutoverAt, m.Cutover)
	assert.Equal(t, cutoverAt, m.CatchUp)

	// Within a tick: the old layout's IDs of the cut-over's tick count as
	// issued before it, and the new layout's first ID is in that same tick.
	mid := cutoverAt.Add(time.Millisecond / 2)
	m, err = layoutplan.CheckMigration(l, l, mid)
	require.NoError(t, err)
	assert.False(t, m.OK, "a cut-over inside a tick shares the tick")
	assert.Equal(t, cutoverAt.Add(time.Millisecond), m.Cutover)
}

// A later epoch makes every new ID smaller than the old ones of the same
// time: ORDER BY id breaks at the cut-over, and no cut-over time mends it.
func TestCheckMigrationLaterEpochBreaks(t *testing.T) {
	from := ringflake.TwitterLayout()
	to := mustLayout(t, "twitter,epoch=2020-01-01T00:00:00Z")
	m, err := layoutplan.CheckMigration(from, to, cutoverAt)
	require.NoError(t, err)
	assert.False(t, m.OK)
	assert.Equal(t, cutoverAt, m.At)
	first, _ := tickIDs(t, to, cutoverAt)
	_, last := tickIDs(t, from, cutoverAt.Add(-time.Millisecond))
	assert.Equal(t, first, m.First)
	assert.Equal(t, last, m.Last)
	assert.Less(t, m.First, m.Last)
	assert.True(t, m.Cutover.IsZero(), "no cut-over works: %v", m.Cutover)
	// The new IDs pass the old ones when the new layout has counted as
	// far as the old one had: the epochs' distance later.
	want := cutoverAt.Add(to.Spec().Epoch.Sub(from.Spec().Epoch))
	assert.Equal(t, "2035-02-27T22:17:05.343Z", want.Format(time.RFC3339Nano))
	assert.True(t, m.CatchUp.Equal(want), "%v", m.CatchUp)
}

// sonyflake → sonyflake-v2 (v2's default start 2025-01-01): the same bits
// counted from a later start.
func TestCheckMigrationSonyflakeToV2(t *testing.T) {
	m, err := layoutplan.CheckMigration(ringflake.SonyflakeLayout(), ringflake.SonyflakeV2Layout(), cutoverAt)
	require.NoError(t, err)
	assert.False(t, m.OK)
	assert.Equal(t, ringflake.ID(3_153_600_000<<24), m.First, "365 days of 10 ms after 2025-01-01, sequence 0, machine 0")
	assert.Equal(t, ringflake.ID(35_769_600_000<<24-1), m.Last, "the last 10 ms before 2026 counted from 2014-09-01, all bits set")
	assert.True(t, m.Cutover.IsZero(), "v2 IDs stay below v1 IDs of the same time")
	assert.Equal(t, "2036-05-03T00:00:00Z", m.CatchUp.Format(time.RFC3339Nano),
		"v2 counts 10 years and 4 months behind v1: its IDs pass v1's of 2026-01-01 then")

	// Check the answer: from CatchUp on, v2's IDs are above every v1 ID
	// issued before the cut-over; a tick earlier they are not.
	v2 := ringflake.SonyflakeV2Layout()
	atCatchUp, _ := tickIDs(t, v2, m.CatchUp)
	before, _ := tickIDs(t, v2, m.CatchUp.Add(-v2.Spec().Unit))
	assert.Greater(t, atCatchUp, m.Last)
	assert.LessOrEqual(t, before, m.Last)
}

// A layout whose IDs grow faster catches up with the old one: the
// earliest cut-over is later than the one asked for.
func TestCheckMigrationEarliestCutover(t *testing.T) {
	from := ringflake.SonyflakeLayout() // 2^24 per 10 ms
	to := mustLayout(t, "twitter,epoch=2026-01-01T00:00:00Z")
	at := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	m, err := layoutplan.CheckMigration(from, to, at)
	require.NoError(t, err)
	assert.False(t, m.OK)
	require.False(t, m.Cutover.IsZero())
	assert.True(t, m.Cutover.After(at))

	ok, err := layoutplan.CheckMigration(from, to, m.Cutover)
	require.NoError(t, err)
	assert.True(t, ok.OK, "switching at the cut-over keeps the order")
	// No earlier time does: the last nanosecond before it and a spread of
	// times since the one asked for.
	for _, c := range []time.Time{m.Cutover.Add(-time.Nanosecond), m.Cutover.Add(-time.Millisecond), at} {
		early, err := layoutplan.CheckMigration(from, to, c)
		require.NoError(t, err)
		assert.False(t, early.OK, "%v", c)
	}
	span := m.Cutover.Sub(at)
	for i := range 1000 {
		c := at.Add(span / 1000 * time.Duration(i))
		early, err := layoutplan.CheckMigration(from, to, c)
		require.NoError(t, err)
		require.False(t, early.OK, "%v works before the earliest cut-over %v", c, m.Cutover)
	}
	// twitter's IDs grow 2.5 times as fast as sonyflake's: they catch up
	// after two thirds of the 11.33 years the epochs are apart.
	assert.Equal(t, "2033-07-23T00:00:00Z", m.Cutover.Format(time.RFC3339Nano))
}

func TestCheckMigrationEdges(t *testing.T) {
	tw := ringflake.TwitterLayout()
	v2 := ringflake.SonyflakeV2Layout()

	// Nothing issued before the old layout's epoch: any new ID is above.
	m, err := layoutplan.CheckMigration(v2, tw, time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	assert.True(t, m.OK)
	assert.Equal(t, ringflake.ID(-1), m.Last)

	// Before the new layout's epoch, its first ID is its very first.
	m, err = layoutplan.CheckMigration(tw, v2, time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	assert.False(t, m.OK)
	assert.Equal(t, ringflake.ID(0), m.First)

	// A cut-over past the old layout's end: its largest ID is the bound.
	js := ringflake.JSSafeLayout()
	m, err = layoutplan.CheckMigration(js, ringflake.SonyflakeLayout(), js.Last().Add(time.Hour))
	require.NoError(t, err)
	assert.True(t, m.OK)
	assert.Equal(t, ringflake.ID(1<<53-1), m.Last)

	_, err = layoutplan.CheckMigration(tw, tw, tw.Last().Add(time.Millisecond))
	require.ErrorIs(t, err, ringflake.ErrLayoutExpired)
	_, err = layoutplan.CheckMigration(ringflake.Layout{}, tw, cutoverAt)
	require.ErrorIs(t, err, ringflake.ErrInvalidLayout)
	_, err = layoutplan.CheckMigration(tw, ringflake.Layout{}, cutoverAt)
	require.ErrorIs(t, err, ringflake.ErrInvalidLayout)
}

// tickIDs returns the smallest and largest ID of ts's tick, saturating
// outside the layout: Layout.Bounds, whose ends saturate, of one tick.
func tickIDs(t testing.TB, l ringflake.Layout, ts time.Time) (lo, hi ringflake.ID) {
	t.Helper()
	from, to := ts, ts
	if from.After(l.Last()) {
		from = l.Last()
	}
	if to.Before(l.Spec().Epoch) {
		to = l.Spec().Epoch
	}
	lo, hi, err := l.Bounds(from, to)
	require.NoError(t, err)
	return lo, hi
}
