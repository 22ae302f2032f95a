package ringflake_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/hostlocal"
	"github.com/ringflake/ringflake/simclock"
)

var cutoverAt = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func mustLayout(t testing.TB, s string) ringflake.Layout {
	t.Helper()
	l, err := ringflake.ParseLayout(s)
	require.NoError(t, err)
	return l
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
	lo, _ := tickBounds(t, old, cutoverAt)
	assert.Equal(t, lo|1<<12, ee.First, "node 1, sequence 0, at the clock's tick")
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
		store := hostlocal.NewMarkFile(filepath.Join(t.TempDir(), "mark"))
		require.NoError(t, store.SaveMark(context.Background(), ringflake.Mark{Limit: mark, Since: mark}))
		_, err = ringflake.New(1, ringflake.WithClock(clk), ringflake.WithExistingID(tc.existing), ringflake.WithMarkStore(store))
		if tc.ok {
			require.NoError(t, err, "the first ID comes after the mark's tick")
		} else {
			require.ErrorIs(t, err, ringflake.ErrBelowExisting)
		}
	}
}
