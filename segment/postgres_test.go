package segment_test

import (
	"context"
	"database/sql"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/segment"
)

// TestNewCreatesTheRow: the first allocator of a tag creates its row with
// the first number and step of the options; later ones ignore them and
// take the row's next range.
func TestNewCreatesTheRow(t *testing.T) {
	db := sharedDB(t)
	tag := newTag(t)
	a := newAllocator(t, db, tag, segment.WithStart(1000), segment.WithStep(50))
	requireRun(t, take(t, a, 3), 1000, 1003, "the first numbers")
	maxID, step := row(t, db, tag)
	require.Equal(t, int64(1050), maxID)
	require.Equal(t, int64(50), step)
	s := a.Stats()
	require.Equal(t, int64(47), s.Left)
	require.Equal(t, int64(50), s.Step)
	require.Equal(t, uint64(4), s.RoundTrips, "a take that found no row, the look that tells why, the insert, the take")

	b := newAllocator(t, db, tag, segment.WithStart(1), segment.WithStep(7))
	requireRun(t, take(t, b, 2), 1050, 1052, "the second allocator's")
	_, step = row(t, db, tag)
	require.Equal(t, int64(50), step)
	require.Equal(t, uint64(1), b.Stats().RoundTrips)
}

// TestNewRejects: bad arguments are errors naming what is wrong, found
// before any round trip.
func TestNewRejects(t *testing.T) {
	db, err := sql.Open("pgx", "postgres://nobody@127.0.0.1:1/none?connect_timeout=1")
	require.NoError(t, err)
	defer db.Close()
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		db   *sql.DB
		tag  string
		opts []segment.Option
		want error
	}{
		{"nil db", nil, "orders", nil, segment.ErrInvalidOption},
		{"empty tag", db, "", nil, segment.ErrInvalidTag},
		{"long tag", db, strings.Repeat("x", 129), nil, segment.ErrInvalidTag},
		{"tag not UTF-8", db, "orders\xff", nil, segment.ErrInvalidTag},
		{"tag with NUL", db, "ord\x00ers", nil, segment.ErrInvalidTag},
		{"nil clock", db, "orders", []segment.Option{segment.WithClock(nil)}, segment.ErrInvalidOption},
		{"step 0", db, "orders", []segment.Option{segment.WithStep(0)}, segment.ErrInvalidOption},
		{"huge step", db, "orders", []segment.Option{segment.WithStep(math.MaxInt64)}, segment.ErrInvalidOption},
		{"max step 0", db, "orders", []segment.Option{segment.WithMaxStep(0)}, segment.ErrInvalidOption},
		{"target 0", db, "orders", []segment.Option{segment.WithTargetDuration(0)}, segment.ErrInvalidOption},
		{"prefetch at 1", db, "orders", []segment.Option{segment.WithPrefetchAt(1)}, segment.ErrInvalidOption},
		{"prefetch at -0.1", db, "orders", []segment.Option{segment.WithPrefetchAt(-0.1)}, segment.ErrInvalidOption},
		{"prefetch at NaN", db, "orders", []segment.Option{segment.WithPrefetchAt(math.NaN())}, segment.ErrInvalidOption},
		{"negative start", db, "orders", []segment.Option{segment.WithStart(-1)}, segment.ErrInvalidOption},
		{"backoff 0", db, "orders", []segment.Option{segment.WithBackoff(0, time.Second)}, segment.ErrInvalidOption},
		{"backoff max below min", db, "orders", []segment.Option{segment.WithBackoff(time.Second, time.Millisecond)}, segment.ErrInvalidOption},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := segment.New(ctx, tc.db, tc.tag, tc.opts...)
			require.ErrorIs(t, err, tc.want)
			require.Nil(t, a)
		})
	}
	require.ErrorIs(t, segment.Migrate(ctx, nil), segment.ErrInvalidOption)
}

// TestNewFailsWithoutTheDatabase: New takes the first range, so it fails
// with ErrUnavailable, wrapping the cause, when there is no server or no
// table.
func TestNewFailsWithoutTheDatabase(t *testing.T) {
	ctx := context.Background()
	noServer, err := sql.Open("pgx", "postgres://nobody@127.0.0.1:1/none?connect_timeout=5")
	require.NoError(t, err)
	defer noServer.Close()
	_, err = segment.New(ctx, noServer, "orders")
	require.ErrorIs(t, err, segment.ErrUnavailable)

	dsn := requireEnv(t, dsnEnv)
	sharedDB(t) // the table exists, but not in the schema of this pool
	noTable, err := sql.Open("pgx", dsn+"&search_path=no_such_schema")
	require.NoError(t, err)
	defer noTable.Close()
	_, err = segment.New(ctx, noTable, newTag(t))
	require.ErrorIs(t, err, segment.ErrUnavailable)
	var ue *segment.UnavailableError
	require.ErrorAs(t, err, &ue)
	require.Contains(t, ue.Err.Error(), "ringflake_segments", "PostgreSQL names the missing table")
}

// TestOverflow: numbers never pass 2^63-1. A step that no longer fits is
// retried with the row's step; when that does not fit either, calls fail
// with ErrUnavailable wrapping ErrOverflow once the buffers are empty.
func TestOverflow(t *testing.T) {
	db := sharedDB(t)
	tag := newTag(t)
	clk := clock.NewMock()
	start := int64(math.MaxInt64 - 2500)
	a := newAllocator(t, db, tag, segment.WithStart(start), segment.WithStep(1000), segment.WithMaxStep(4000), segment.WithClock(clk))
	got := take(t, a, 1000) // the prefetch asks for 2000: too many
	require.Eventually(t, func() bool { return a.Stats().Failing }, 10*time.Second, time.Millisecond)
	_, err := a.Next(context.Background())
	require.ErrorIs(t, err, segment.ErrOverflow)
	require.ErrorIs(t, err, segment.ErrUnavailable)

	require.Eventually(t, func() bool { // the retry asks for the row's 1000
		clk.Add(segment.DefaultMaxBackoff)
		return a.Stats().NextReady
	}, 10*time.Second, time.Millisecond)
	got = append(got, drain(t, a)...)
	requireRun(t, got, start, math.MaxInt64-500, "up to the last range that fits")
	_, err = a.Next(context.Background())
	require.ErrorIs(t, err, segment.ErrOverflow)
	maxID, _ := row(t, db, tag)
	require.Equal(t, int64(math.MaxInt64-500), maxID)
}

// TestInvalidRow: a row whose step is 0 (in a table made without the
// CHECK constraints) is an error naming the step, not an endless loop of
// empty ranges.
func TestInvalidRow(t *testing.T) {
	db := sharedDB(t)
	db.SetMaxOpenConns(1) // one session, which sees its TEMP table before the real one
	ctx := context.Background()
	_, err := db.ExecContext(ctx, `CREATE TEMP TABLE ringflake_segments (
		biz_tag TEXT PRIMARY KEY, max_id BIGINT NOT NULL, step BIGINT NOT NULL, updated_at TIMESTAMPTZ)`)
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, `INSERT INTO ringflake_segments VALUES ('orders', 1, 0, now())`)
	require.NoError(t, err)
	_, err = segment.New(ctx, db, "orders")
	require.ErrorIs(t, err, segment.ErrUnavailable)
	require.ErrorIs(t, err, segment.ErrInvalidRow)
	require.ErrorContains(t, err, "step 0")
}

// TestCloseLosesTheTail: the numbers left in an allocator's buffers when
// it closes are the only numbers nobody hands out; the next allocator
// starts where the row says.
func TestCloseLosesTheTail(t *testing.T) {
	db := sharedDB(t)
	tag := newTag(t)
	a, err := segment.New(context.Background(), db, tag, segment.WithStep(100), segment.WithMaxStep(100))
	require.NoError(t, err)
	got := take(t, a, 150)
	require.Eventually(t, func() bool { s := a.Stats(); return s.NextReady && !s.Loading }, 10*time.Second, time.Millisecond)
	left := a.Stats().Left
	require.Equal(t, int64(150), left, "50 of the second range and all of the third")
	require.NoError(t, a.Close())
	_, err = a.Next(context.Background())
	require.ErrorIs(t, err, segment.ErrClosed)

	b := newAllocator(t, db, tag)
	v, err := b.Next(context.Background())
	require.NoError(t, err)
	require.Equal(t, got[len(got)-1]+1+left, v)
	require.Equal(t, int64(301), v)
}
