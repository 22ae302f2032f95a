package segment_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/segment"
)

// The tests run against real PostgreSQL servers, never a fake:
//
//   - RINGFLAKE_TEST_POSTGRES_DSN names a server the tests share: they
//     create the table ringflake_segments there, and rows under tags of
//     their own;
//   - RINGFLAKE_TEST_POSTGRES_BINDIR names the directory of initdb and
//     pg_ctl, for the tests that crash and restart a server of their own.
//
// scripts/test.sh starts the shared server and exports both. A test
// without them fails: a database test that skips proves nothing.
const (
	dsnEnv    = "RINGFLAKE_TEST_POSTGRES_DSN"
	bindirEnv = "RINGFLAKE_TEST_POSTGRES_BINDIR"
)

// requireEnv returns the environment variable name, and fails the test
// or benchmark, saying how to provide it, when it is not set.
func requireEnv(tb testing.TB, name string) string {
	tb.Helper()
	v := os.Getenv(name)
	if v == "" {
		tb.Fatalf("%s is not set. These tests need PostgreSQL: run ./scripts/test.sh from the repository root "+
			"(it starts a throwaway server), or start one yourself and export "+
			"%s='postgres://USER@127.0.0.1:PORT/DB?sslmode=disable' (the tests create the table ringflake_segments there) "+
			"and %s=/usr/lib/postgresql/VERSION/bin", name, dsnEnv, bindirEnv)
	}
	return v
}

// openDB opens a pool of dsn with pgx's database/sql driver, closed when
// the test ends, and makes sure the table exists.
func openDB(t testing.TB, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	require.NoError(t, segment.Migrate(context.Background(), db), "creating the table at %s", dsn)
	return db
}

// sharedDB opens the shared server.
func sharedDB(t testing.TB) *sql.DB {
	t.Helper()
	return openDB(t, requireEnv(t, dsnEnv))
}

// newTag returns a business tag no other test or run uses.
func newTag(t testing.TB) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "test/" + t.Name() + "/" + hex.EncodeToString(b[:])
}

// row reads the tag's row.
func row(t testing.TB, db *sql.DB, tag string) (maxID, step int64) {
	t.Helper()
	require.NoError(t, db.QueryRowContext(context.Background(),
		`SELECT max_id, step FROM ringflake_segments WHERE biz_tag = $1`, tag).Scan(&maxID, &step))
	return maxID, step
}

// newAllocator returns an allocator closed when the test ends.
func newAllocator(t testing.TB, db *sql.DB, tag string, opts ...segment.Option) *segment.Allocator {
	t.Helper()
	a, err := segment.New(context.Background(), db, tag, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = a.Close() })
	return a
}

// take returns n numbers from a, one call each.
func take(t testing.TB, a *segment.Allocator, n int) []int64 {
	t.Helper()
	nums := make([]int64, n)
	for i := range nums {
		v, err := a.Next(context.Background())
		require.NoError(t, err)
		nums[i] = v
	}
	return nums
}

// drain takes numbers until a call fails, which must be with
// ErrUnavailable, and returns them.
func drain(t testing.TB, a *segment.Allocator) []int64 {
	t.Helper()
	var nums []int64
	for {
		v, err := a.Next(context.Background())
		if err != nil {
			require.ErrorIs(t, err, segment.ErrUnavailable)
			return nums
		}
		nums = append(nums, v)
	}
}

// recoverNext returns the first number a hands out after a failure: it
// moves clk past the longest backoff, so that a retries, until a call
// succeeds (a retry is a real round trip to a real server: wait for it,
// with a bound).
func recoverNext(t testing.TB, a *segment.Allocator, clk *clock.Mock) int64 {
	t.Helper()
	var v int64
	require.Eventually(t, func() bool {
		clk.Add(segment.DefaultMaxBackoff)
		var err error
		v, err = a.Next(context.Background())
		return err == nil
	}, time.Minute, 10*time.Millisecond, "no recovery within a minute")
	return v
}

func requireStrictlyIncreasing(t testing.TB, nums []int64) {
	t.Helper()
	for i := 1; i < len(nums); i++ {
		if nums[i] <= nums[i-1] {
			require.Failf(t, "not strictly increasing", "%d at %d after %d", nums[i], i, nums[i-1])
		}
	}
}

// requireRun fails the test unless nums are exactly from, from+1, …,
// to-1, naming the first number that is not (a diff of thousands of
// numbers helps nobody).
func requireRun(t testing.TB, nums []int64, from, to int64, msg string) {
	t.Helper()
	for i, v := range nums {
		if want := from + int64(i); v != want || want >= to {
			require.Failf(t, msg, "number %d is %d, want %d (of %d to %d)", i, v, want, from, to-1)
		}
	}
	require.Equal(t, to-from, int64(len(nums)), "%s: how many numbers", msg)
}
