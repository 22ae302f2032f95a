package segment_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/segment"
)

// TestServerCrash: the server crashes while an allocator is in use, and
// comes back. While it is down, calls are served until the buffers are
// empty — exactly the numbers they held —, then fail with ErrUnavailable;
// after the restart the allocator recovers on its next retry. No number
// comes twice, and every number the row gave out is issued or still in
// the buffers.
//
// The server runs with synchronous_commit off and its WAL writer asleep
// for 10 s, the worst a server can be set up to be: a commit it reported
// is lost in the crash unless its transaction turned synchronous_commit
// on, as the allocator's does. Without that, the range taken just before
// the crash would be taken again after it.
func TestServerCrash(t *testing.T) {
	c := startCluster(t, "fsync=off", "synchronous_commit=off", "wal_writer_delay=10000", "full_page_writes=off")
	db := openDB(t, c.dsn())
	clk := clock.NewMock()
	ctx := context.Background()
	a := newAllocator(t, db, "orders", segment.WithStep(1000), segment.WithMaxStep(1000), segment.WithClock(clk))
	_, err := db.ExecContext(ctx, "CHECKPOINT") // the table and the first range are on disk: only what follows is at risk
	require.NoError(t, err)
	before := take(t, a, 101) // offset 100: the prefetch
	require.Eventually(t, func() bool { s := a.Stats(); return s.NextReady && !s.Loading }, 10*time.Second, time.Millisecond)
	left := a.Stats().Left
	require.Equal(t, int64(1899), left)

	c.crash(t)
	const goroutines = 4
	during := make([][]int64, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			during[g] = drain(t, a)
		}()
	}
	wg.Wait()
	var served int64
	for _, nums := range during {
		requireStrictlyIncreasing(t, nums)
		served += int64(len(nums))
	}
	require.Equal(t, left, served, "calls are served while the buffers last")
	s := a.Stats()
	require.True(t, s.Failing)
	require.GreaterOrEqual(t, s.Unavailable, uint64(goroutines))

	c.start(t)
	after := append([]int64{recoverNext(t, a, clk)}, take(t, a, 2500)...)
	requireStrictlyIncreasing(t, after)

	all := slices.Concat(before, slices.Concat(during...), after)
	slices.Sort(all)
	requireRun(t, all[:2000], 1, 2001, "before and during the crash: the two ranges held")
	requireRun(t, all[2000:], 2001, int64(len(all))+1, "after: the next ranges, none twice")
	require.Eventually(t, func() bool { return !a.Stats().Loading }, 10*time.Second, time.Millisecond)
	maxID, _ := row(t, db, "orders")
	require.Equal(t, int64(len(all))+a.Stats().Left, maxID-1, "numbers issued and left in the buffers")
}
