package segment_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/segment"
)

// TestFaultsDuringATake: the statement that takes a range fails in the
// middle — canceled, its connection terminated, or its reply lost after
// the commit. The allocator serves the rest of its buffer, then fails with
// ErrUnavailable, then takes a new range on the retry: never a number
// twice, and the only numbers lost are those of a range whose commit
// happened without the allocator hearing of it.
//
// To fail the statement at a known point, another session holds the
// tag's row locked, so that the prefetch's UPDATE waits for the lock,
// and the fault happens while it waits.
func TestFaultsDuringATake(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fault  func(t *testing.T, db *sql.DB, p *proxy, waiting int, lock *sql.Tx)
		burned int64
	}{
		{"statement canceled", func(t *testing.T, db *sql.DB, _ *proxy, waiting int, lock *sql.Tx) {
			requireTrue(t, db, `SELECT pg_cancel_backend($1)`, waiting)
			require.NoError(t, lock.Rollback())
		}, 0},
		{"connection terminated", func(t *testing.T, db *sql.DB, _ *proxy, waiting int, lock *sql.Tx) {
			requireTrue(t, db, `SELECT pg_terminate_backend($1)`, waiting)
			require.NoError(t, lock.Rollback())
		}, 0},
		{"reply lost after the commit", func(t *testing.T, _ *sql.DB, p *proxy, _ int, lock *sql.Tx) {
			p.loseNextReply()
			require.NoError(t, lock.Commit()) // the UPDATE goes on, commits, and its reply is lost
			require.Eventually(t, func() bool { return p.lost() == 1 }, 10*time.Second, time.Millisecond)
		}, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			db := sharedDB(t)
			p, viaProxy := startProxy(t, requireEnv(t, dsnEnv))
			tag := newTag(t)
			clk := clock.NewMock()
			a := newAllocator(t, viaProxy, tag, segment.WithStep(100), segment.WithMaxStep(100), segment.WithClock(clk))
			got := take(t, a, 10)

			lock, err := db.BeginTx(ctx, nil)
			require.NoError(t, err)
			t.Cleanup(func() { _ = lock.Rollback() })
			var locker int
			require.NoError(t, lock.QueryRowContext(ctx,
				`SELECT pg_backend_pid() FROM ringflake_segments WHERE biz_tag = $1 FOR UPDATE`, tag).Scan(&locker))
			got = append(got, take(t, a, 1)...) // offset 10: the prefetch, which waits for the lock
			var waiting int
			require.Eventually(t, func() bool {
				err := db.QueryRowContext(ctx, `SELECT pid FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))`, locker).Scan(&waiting)
				return err == nil
			}, 10*time.Second, time.Millisecond, "the prefetch's UPDATE does not wait for the lock")

			tc.fault(t, db, p, waiting, lock)
			require.Eventually(t, func() bool { return a.Stats().Failing }, 10*time.Second, time.Millisecond)
			rest := drain(t, a)
			require.Len(t, rest, 89, "the rest of the first range")
			got = append(got, rest...)

			got = append(got, recoverNext(t, a, clk))
			got = append(got, take(t, a, 99)...)
			requireStrictlyIncreasing(t, got)
			requireRun(t, got[:100], 1, 101, "the first range")
			requireRun(t, got[100:], 101+tc.burned, 201+tc.burned, "the range taken on the retry")

			require.Eventually(t, func() bool { return !a.Stats().Loading }, 10*time.Second, time.Millisecond, "the prefetch of the third range")
			s := a.Stats()
			require.Equal(t, uint64(1), s.Errors)
			maxID, _ := row(t, db, tag)
			require.Equal(t, int64(len(got))+s.Left+tc.burned, maxID-1, "numbers issued, left in the buffers, burned")
		})
	}
}

func requireTrue(t *testing.T, db *sql.DB, query string, args ...any) {
	t.Helper()
	var ok bool
	require.NoError(t, db.QueryRowContext(context.Background(), query, args...).Scan(&ok))
	require.True(t, ok, query)
}
