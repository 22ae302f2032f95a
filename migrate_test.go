package ringflake_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/simclock"
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
	m, err := ringflake.CheckMigration(l, l, cutoverAt)
	require.NoError(t, err)
	assert.True(t, m.OK)
	assert.Equal(t, l.MinID(cutoverAt), m.First)
	assert.Equal(t, l.MaxID(cutoverAt.Add(-time.Millisecond)), m.Last)
	assert.Equal(t, m.First-1, m.Last, "the ticks meet")
	assert.Equal(t, cutoverAt, m.Cutover)
	assert.Equal(t, cutoverAt, m.CatchUp)

	// Within a tick: the old layout's IDs of the cut-over's tick count as
	// issued before it, and the new layout's first ID is in that same tick.
	mid := cutoverAt.Add(time.Millisecond / 2)
	m, err = ringflake.CheckMigration(l, l, mid)
	require.NoError(t, err)
	assert.False(t, m.OK, "a cut-over inside a tick shares the tick")
	assert.Equal(t, cutoverAt.Add(time.Millisecond), m.Cutover)
}

// A later epoch makes every new ID smaller than the old ones of the same
// time: ORDER BY id breaks at the cut-over, and no cut-over time mends it.
func TestCheckMigrationLaterEpochBreaks(t *testing.T) {
	from := ringflake.TwitterLayout()
	to := mustLayout(t, "twitter,epoch=2020-01-01T00:00:00Z")
	m, err := ringflake.CheckMigration(from, to, cutoverAt)
	require.NoError(t, err)
	assert.False(t, m.OK)
	assert.Equal(t, cutoverAt, m.At)
	assert.Equal(t, to.MinID(cutoverAt), m.First)
	assert.Equal(t, from.MaxID(cutoverAt.Add(-time.Millisecond)), m.Last)
	assert.Less(t, m.First, m.Last)
	assert.True(t, m.Cutover.IsZero(), "no cut-over works: %v", m.Cutover)
	// The new IDs pass the old ones when the new layout has counted as
	// far as the old one had: the epochs' distance later.
	want := cutoverAt.Add(to.Epoch().Sub(from.Epoch()))
	assert.Equal(t, "2035-02-27T22:17:05.343Z", want.Format(time.RFC3339Nano))
	assert.True(t, m.CatchUp.Equal(want), "%v", m.CatchUp)
}

// sonyflake → sonyflake-v2 (v2's default start 2025-01-01): the same bits
// counted from a later start.
func TestCheckMigrationSonyflakeToV2(t *testing.T) {
	m, err := ringflake.CheckMigration(ringflake.SonyflakeLayout(), ringflake.SonyflakeV2Layout(), cutoverAt)
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
	assert.Greater(t, v2.MinID(m.CatchUp), m.Last)
	assert.LessOrEqual(t, v2.MinID(m.CatchUp.Add(-v2.Unit())), m.Last)
}

// A layout whose IDs grow faster catches up with the old one: the
// earliest cut-over is later than the one asked for.
func TestCheckMigrationEarliestCutover(t *testing.T) {
	from := ringflake.SonyflakeLayout() // 2^24 per 10 ms
	to := mustLayout(t, "twitter,epoch=2026-01-01T00:00:00Z")
	at := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	m, err := ringflake.CheckMigration(from, to, at)
	require.NoError(t, err)
	assert.False(t, m.OK)
	require.False(t, m.Cutover.IsZero())
	assert.True(t, m.Cutover.After(at))

	ok, err := ringflake.CheckMigration(from, to, m.Cutover)
	require.NoError(t, err)
	assert.True(t, ok.OK, "switching at the cut-over keeps the order")
	// No earlier time does: the last nanosecond before it and a spread of
	// times since the one asked for.
	for _, c := range []time.Time{m.Cutover.Add(-time.Nanosecond), m.Cutover.Add(-time.Millisecond), at} {
		early, err := ringflake.CheckMigration(from, to, c)
		require.NoError(t, err)
		assert.False(t, early.OK, "%v", c)
	}
	span := m.Cutover.Sub(at)
	for i := range 1000 {
		c := at.Add(span / 1000 * time.Duration(i))
		early, err := ringflake.CheckMigration(from, to, c)
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
	m, err := ringflake.CheckMigration(v2, tw, time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	assert.True(t, m.OK)
	assert.Equal(t, ringflake.ID(-1), m.Last)

	// Before the new layout's epoch, its first ID is its very first.
	m, err = ringflake.CheckMigration(tw, v2, time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	assert.False(t, m.OK)
	assert.Equal(t, ringflake.ID(0), m.First)

	// A cut-over past the old layout's end: its largest ID is the bound.
	js := ringflake.JSSafeLayout()
	m, err = ringflake.CheckMigration(js, ringflake.SonyflakeLayout(), js.Last().Add(time.Hour))
	require.NoError(t, err)
	assert.True(t, m.OK)
	assert.Equal(t, ringflake.ID(1<<53-1), m.Last)

	_, err = ringflake.CheckMigration(tw, tw, tw.Last().Add(time.Millisecond))
	require.ErrorIs(t, err, ringflake.ErrLayoutExpired)
	_, err = ringflake.CheckMigration(ringflake.Layout{}, tw, cutoverAt)
	require.ErrorIs(t, err, ringflake.ErrInvalidLayout)
	_, err = ringflake.CheckMigration(tw, ringflake.Layout{}, cutoverAt)
	require.ErrorIs(t, err, ringflake.ErrInvalidLayout)
}

// WithExistingID refuses a generator whose first ID could sort at or
// below MAX(id) of the table, and lets one above it start.
func TestWithExistingID(t *testing.T) {
	old := ringflake.TwitterLayout()
	existing, err := old.Compose(cutoverAt, 5, 17) // MAX(id): node 5's last ID
	require.NoError(t, err)

	clk := simclock.New(cutoverAt)
	_, err = ringflake.New(1, ringflake.WithClock(clk), ringflake.WithExistingID(existing))
	require.ErrorIs(t, err, ringflake.ErrBelowExisting)
	var ee *ringflake.ExistingIDError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, existing, ee.Existing)
	assert.Equal(t, old.MinID(cutoverAt)|1<<12, ee.First, "node 1, sequence 0, at the clock's tick")
	assert.True(t, ee.At.Equal(cutoverAt))

	// A tick later every node's IDs are above.
	clk.Add(time.Millisecond)
	g, err := ringflake.New(1, ringflake.WithClock(clk), ringflake.WithExistingID(existing))
	require.NoError(t, err)
	id, err := g.Next()
	require.NoError(t, err)
	assert.Greater(t, id, existing)

	// A later epoch makes a generator whose IDs would sort below.
	_, err = ringflake.New(1, ringflake.WithClock(clk), ringflake.WithExistingID(existing),
		ringflake.WithLayout(mustLayout(t, "twitter,epoch=2020-01-01T00:00:00Z")))
	require.ErrorIs(t, err, ringflake.ErrBelowExisting)

	_, err = ringflake.New(1, ringflake.WithClock(clk), ringflake.WithExistingID(-1))
	require.ErrorIs(t, err, ringflake.ErrInvalidOption)
}

// The first ID comes after a loaded high-water mark: a restart right after
// a crash whose IDs ran ahead of the clock is not refused.
func TestWithExistingIDAfterMark(t *testing.T) {
	clk := simclock.New(cutoverAt)
	mark := cutoverAt.Add(time.Second)
	existing, err := ringflake.TwitterLayout().Compose(mark, 1, 4095) // issued ahead of the clock, up to the mark
	require.NoError(t, err)
	for _, tc := range []struct {
		existing ringflake.ID
		ok       bool
	}{
		{existing, true},          // the first ID, (mark+1 ms, node 1, 0), is above
		{existing + 1<<22, false}, // (mark+1 ms, node 1, 4095) is not
	} {
		store := ringflake.NewFileMarkStore(filepath.Join(t.TempDir(), "mark"))
		require.NoError(t, store.SaveMark(context.Background(), mark))
		_, err = ringflake.New(1, ringflake.WithClock(clk), ringflake.WithExistingID(tc.existing), ringflake.WithMarkStore(store))
		if tc.ok {
			require.NoError(t, err, "the first ID comes after the mark's tick")
		} else {
			require.ErrorIs(t, err, ringflake.ErrBelowExisting)
		}
	}
}
