package segment

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"sync/atomic"
)

// Schema is the SQL that [Migrate] runs: the table every allocator takes
// its ranges from, one row per business tag. Run it with your own
// migration tool if you prefer; it is idempotent.
//
// max_id is the first number no range has covered yet: a range of n
// numbers taken from a row is [max_id, max_id+n), and max_id becomes
// max_id+n in the same statement. step is the smallest range an
// allocator takes for the tag ([WithStep] sets it for a new row; change it
// with UPDATE at any time). description is yours.
const Schema = `CREATE TABLE IF NOT EXISTS ringflake_segments (
	biz_tag     TEXT        PRIMARY KEY CHECK (octet_length(biz_tag) BETWEEN 1 AND 128),
	max_id      BIGINT      NOT NULL CHECK (max_id >= 0),
	step        BIGINT      NOT NULL CHECK (step >= 1),
	description TEXT        NOT NULL DEFAULT '',
	updated_at  TIMESTAMPTZ NOT NULL DEFAULT now()
)`

// takeSQL takes one range in one statement. $2 is the range's size, NULL
// for the row's step. The statement is its own transaction, so the range
// is either taken or not: an allocator uses a range only after it has
// read it back, and a reply lost after the commit only burns the range.
//
// The FROM clause turns synchronous_commit on for this transaction
// (set_config's third argument: local to it), so the commit waits for its
// WAL to be flushed even on a server or session where it is off: a server
// that crashed would otherwise come back without a range it had already
// handed out, and give it out again. The WHERE clause refuses a range that
// would pass 2^63-1 or an empty one; see classify.
const takeSQL = `UPDATE ringflake_segments AS s
SET max_id = s.max_id + COALESCE($2::bigint, s.step), updated_at = now()
FROM (SELECT set_config('synchronous_commit', 'on', true)) AS durable
WHERE s.biz_tag = $1
	AND COALESCE($2::bigint, s.step) >= 1
	AND s.max_id <= 9223372036854775807 - COALESCE($2::bigint, s.step)
RETURNING s.max_id, s.step`

const readSQL = `SELECT max_id, step FROM ringflake_segments WHERE biz_tag = $1`

const createSQL = `INSERT INTO ringflake_segments (biz_tag, max_id, step) VALUES ($1, $2, $3)
ON CONFLICT (biz_tag) DO NOTHING`

// An Execer runs a statement: *sql.DB, *sql.Conn and *sql.Tx are Execers.
type Execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// Migrate creates the table ringflake_segments ([Schema]) if it does not
// exist. It returns the database's error.
func Migrate(ctx context.Context, db Execer) error {
	if db == nil {
		return fmt.Errorf("%w: Migrate with a nil database", ErrInvalidOption)
	}
	_, err := db.ExecContext(ctx, Schema)
	return err
}

// A rng is a range of numbers: [first, first+size).
type rng struct {
	first, size int64
	rowStep     int64 // the row's step when the range was taken
}

// A source hands out ranges; different calls never return overlapping
// ranges, and a later call returns a range above an earlier one.
type source interface {
	// take takes a range of step numbers, or of the row's step when step
	// is 0.
	take(ctx context.Context, step int64) (rng, error)
	// roundTrips reports how many statements the source has sent.
	roundTrips() uint64
}

// pgSource takes ranges from the row of one tag.
type pgSource struct {
	db    *sql.DB
	tag   string
	trips atomic.Uint64
}

func (s *pgSource) roundTrips() uint64 { return s.trips.Load() }

func (s *pgSource) take(ctx context.Context, step int64) (rng, error) {
	var size any // NULL: the row's step
	if step > 0 {
		size = step
	}
	var end, rowStep int64
	for attempt := 1; ; attempt++ {
		s.trips.Add(1)
		err := s.db.QueryRowContext(ctx, takeSQL, s.tag, size).Scan(&end, &rowStep)
		if errors.Is(err, sql.ErrNoRows) {
			// No row changed. The row may have been made (or its step
			// changed) since the statement looked: then take again.
			if err := s.classify(ctx, step); err != nil {
				return rng{}, err
			}
			if attempt == 3 {
				return rng{}, fmt.Errorf("ringflake: segment: the row of biz tag %q changed under %d takes in a row", s.tag, attempt)
			}
			continue
		}
		if err != nil {
			return rng{}, err
		}
		break
	}
	if step == 0 {
		step = rowStep
	}
	return rng{first: end - step, size: step, rowStep: rowStep}, nil
}

// classify tells why takeSQL changed no row: the tag has no row, its step
// is below 1, or the range would pass 2^63-1. It returns nil when none of
// these holds any more — another process made the row, or changed it,
// after the statement looked — and the take may be tried again.
func (s *pgSource) classify(ctx context.Context, step int64) error {
	var maxID, rowStep int64
	s.trips.Add(1)
	err := s.db.QueryRowContext(ctx, readSQL, s.tag).Scan(&maxID, &rowStep)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return ErrTagMissing
	case err != nil:
		return err
	case step == 0 && rowStep < 1:
		return fmt.Errorf("%w: step %d of biz tag %q is below 1", ErrInvalidRow, rowStep, s.tag)
	}
	if step == 0 {
		step = rowStep
	}
	if maxID > math.MaxInt64-step {
		return ErrOverflow
	}
	return nil
}

// create inserts the tag's row unless it exists.
func (s *pgSource) create(ctx context.Context, start, step int64) error {
	s.trips.Add(1)
	_, err := s.db.ExecContext(ctx, createSQL, s.tag, start, step)
	return err
}
