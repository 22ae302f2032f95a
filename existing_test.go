package ringflake_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
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

// WithExistingID lets a generator start when its first tick is not
// before MAX(id)'s, and every ID it issues is above MAX(id); it refuses one
// whose first tick comes before MAX(id)'s.
func TestWithExistingID(t *testing.T) {
	old := ringflake.TwitterLayout()
	existing, err := old.Compose(cutoverAt.Add(time.Millisecond), 5, 17) // MAX(id): node 5's last ID
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

	// In MAX(id)'s tick node 1 sorts below node 5 (time,node,seq): its
	// first ID is in the next tick.
	clk.Add(time.Millisecond)
	g, err := ringflake.New(1, ringflake.WithClock(clk), ringflake.WithExistingID(existing))
	require.NoError(t, err)
	id, err := g.Next()
	require.NoError(t, err)
	assert.Greater(t, id, existing)
	assert.True(t, id.Time(old).Equal(cutoverAt.Add(2*time.Millisecond)), "the next tick: %v", id.Time(old))

	// A tick later every node's IDs are above.
	clk.Add(time.Millisecond)
	g, err = ringflake.New(1, ringflake.WithClock(clk), ringflake.WithExistingID(existing))
	require.NoError(t, err)
	id, err = g.Next()
	require.NoError(t, err)
	assert.Greater(t, id, existing)

	// A later epoch makes a generator whose IDs would sort below.
	_, err = ringflake.New(1, ringflake.WithClock(clk), ringflake.WithExistingID(existing),
		ringflake.WithLayout(mustLayout(t, "twitter,epoch=2020-01-01T00:00:00Z")))
	require.ErrorIs(t, err, ringflake.ErrBelowExisting)

	_, err = ringflake.New(1, ringflake.WithClock(clk), ringflake.WithExistingID(-1))
	require.ErrorIs(t, err, ringflake.ErrInvalidOption)
}

// TestWithExistingIDEqualToTheFirstID: MAX(id) may be the very ID the
// generator would issue first — the same node, tick and sequence 0, or
// sequence 17 — in either field order: New accepts it, and every ID, from
// Next, NextN or goroutines racing, sorts strictly above it.
func TestWithExistingIDEqualToTheFirstID(t *testing.T) {
	ctx := context.Background()
	for _, l := range []ringflake.Layout{ringflake.TwitterLayout(), ringflake.SonyflakeLayout()} {
		for _, seq := range []int64{0, 17, l.MaxSequence()} {
			t.Run(fmt.Sprintf("%s/seq=%d", l, seq), func(t *testing.T) {
				clk := simclock.New(cutoverAt)
				existing, err := l.Compose(cutoverAt, 3, seq)
				require.NoError(t, err)
				g, err := ringflake.New(3, ringflake.WithClock(clk), ringflake.WithLayout(l), ringflake.WithExistingID(existing))
				require.NoError(t, err, "an existing ID equal to the generator's first")
				first, err := g.Next()
				require.NoError(t, err)
				assert.Greater(t, first, existing)
				var want ringflake.ID
				if seq < l.MaxSequence() {
					want, err = l.Compose(cutoverAt, 3, seq+1)
				} else {
					want, err = l.Compose(cutoverAt.Add(l.Spec().Unit), 3, 0)
				}
				require.NoError(t, err)
				assert.Equal(t, want, first, "the first ID right above it")

				var wg sync.WaitGroup
				errs := make(chan error, 4)
				for range 4 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						ids := make([]ringflake.ID, 64)
						n, err := g.NextN(ctx, ids)
						for _, id := range ids[:n] {
							if id <= existing {
								errs <- fmt.Errorf("%d at or below the existing %d", id, existing)
								return
							}
						}
						errs <- err
					}()
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					require.NoError(t, err)
				}
				require.NoError(t, g.Close(ctx))
			})
		}
	}
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
		{existing + 1<<22, true},  // (mark+1 ms, node 1, 4095): its tick is the first, which is skipped
		{existing + 2<<22, false}, // (mark+2 ms, node 1, 4095): after the first tick
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
