package sqltest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"math"
	"os"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
)

// These tests pin what pgx v5 does with ringflake's types natively, not
// through database/sql: ringflake.ID goes in and out of BIGINT through
// its driver.Valuer and sql.Scanner (or its int64 kind), NullID through
// the same for NULL and not, and []ringflake.ID to and from BIGINT[]
// (int8[]) as pgx handles any slice of a type it can encode — in every
// query mode, through *pgx.Conn and *pgxpool.Pool alike.
//
// One exception: in the modes that send parameters without asking the
// server for their types (QueryExecModeExec and
// QueryExecModeSimpleProtocol), pgx must be told which PostgreSQL type a
// []ringflake.ID is, with registerTypes; the other modes need nothing.

// querier is what *pgx.Conn and *pgxpool.Pool have in common.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error)
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// pgxDSN returns the test server's address, failing t when it is unset.
func pgxDSN(t *testing.T) string {
	t.Helper()
	dsn := os.Getenv(dsnEnv)
	if dsn == "" {
		t.Fatalf("%s is not set. These tests need a PostgreSQL server:\n"+
			"  run ./scripts/test.sh, which starts a throwaway one, or\n"+
			"  export %s='postgres://USER@127.0.0.1:PORT/DB?sslmode=disable' for a server of yours.", dsnEnv, dsnEnv)
	}
	return dsn
}

// forEachPgx runs test through a *pgx.Conn and a *pgxpool.Pool, each in
// every query mode pgx has, with the name of a table of its own (dropped
// when the test ends: a pool's connections do not share TEMP tables).
func forEachPgx(t *testing.T, test func(t *testing.T, q querier, table string)) {
	modes := []pgx.QueryExecMode{
		pgx.QueryExecModeCacheStatement, pgx.QueryExecModeCacheDescribe,
		pgx.QueryExecModeDescribeExec, pgx.QueryExecModeExec, pgx.QueryExecModeSimpleProtocol,
	}
	ctx := context.Background()
	for _, mode := range modes {
		t.Run("Conn/"+mode.String(), func(t *testing.T) {
			cfg, err := pgx.ParseConfig(pgxDSN(t))
			require.NoError(t, err)
			cfg.DefaultQueryExecMode = mode
			conn, err := pgx.ConnectConfig(ctx, cfg)
			require.NoError(t, err, "connecting to %s", dsnEnv)
			t.Cleanup(func() { _ = conn.Close(ctx) })
			if !describes(mode) {
				registerTypes(conn.TypeMap())
			}
			test(t, conn, newTable(t, conn))
		})
		t.Run("Pool/"+mode.String(), func(t *testing.T) {
			cfg, err := pgxpool.ParseConfig(pgxDSN(t))
			require.NoError(t, err)
			cfg.ConnConfig.DefaultQueryExecMode = mode
			if !describes(mode) {
				cfg.AfterConnect = func(_ context.Context, c *pgx.Conn) error {
					registerTypes(c.TypeMap())
					return nil
				}
			}
			pool, err := pgxpool.NewWithConfig(ctx, cfg)
			require.NoError(t, err)
			t.Cleanup(pool.Close)
			test(t, pool, newTable(t, pool))
		})
	}
}

// describes reports whether pgx asks the server for the parameter types
// of a statement in mode before it sends the parameters.
func describes(mode pgx.QueryExecMode) bool {
	return mode != pgx.QueryExecModeExec && mode != pgx.QueryExecModeSimpleProtocol
}

// registerTypes tells pgx which PostgreSQL types ringflake's Go types are,
// for the query modes that do not ask the server: BIGINT (int8) for ID and
// NullID, BIGINT[] (_int8) for []ID.
func registerTypes(m *pgtype.Map) {
	m.RegisterDefaultPgType(ringflake.ID(0), "int8")
	m.RegisterDefaultPgType(ringflake.NullID{}, "int8")
	m.RegisterDefaultPgType([]ringflake.ID(nil), "_int8")
}

// newTable creates a table for one test and returns its name.
func newTable(t *testing.T, q querier) string {
	t.Helper()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "ringflake_pgx_" + hex.EncodeToString(b)
	ctx := context.Background()
	_, err := q.Exec(ctx, `CREATE TABLE `+name+` (
		id       BIGINT PRIMARY KEY,
		parent   BIGINT,
		children BIGINT[] NOT NULL
	)`)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = q.Exec(ctx, `DROP TABLE `+name) })
	return name
}

// pgxRow is a row of the table, scanned by column name.
type pgxRow struct {
	ID       ringflake.ID
	Parent   ringflake.NullID
	Children []ringflake.ID
}

// pgxRows are rows that cover the edges: the largest ID, 2^53 around,
// zero, NULL and non-NULL parents, empty and long child arrays.
func pgxRows(t *testing.T) []pgxRow {
	t.Helper()
	ids := testIDs(t)
	rows := make([]pgxRow, 0, len(ids))
	for i, id := range ids {
		r := pgxRow{ID: id, Children: []ringflake.ID{}}
		if i%3 != 0 {
			r.Parent = ringflake.NullID{ID: ids[(i+1)%len(ids)], Valid: true}
		}
		r.Children = append(r.Children, ids[i%7:i%7+i%5]...)
		rows = append(rows, r)
	}
	return rows
}

// selectAll reads the table back by column name, ordered by id.
func selectAll(t *testing.T, q querier, table string) []pgxRow {
	t.Helper()
	rows, err := q.Query(context.Background(), `SELECT id, parent, children FROM `+table+` ORDER BY id`)
	require.NoError(t, err)
	got, err := pgx.CollectRows(rows, pgx.RowToStructByName[pgxRow])
	require.NoError(t, err)
	return got
}

func sortedByID(rows []pgxRow) []pgxRow {
	rows = slices.Clone(rows)
	slices.SortFunc(rows, func(a, b pgxRow) int { return int(min(max(a.ID-b.ID, -1), 1)) })
	return rows
}

func TestPgxInsertAndSelect(t *testing.T) {
	want := pgxRows(t)
	forEachPgx(t, func(t *testing.T, q querier, table string) {
		ctx := context.Background()
		for _, r := range want {
			_, err := q.Exec(ctx, `INSERT INTO `+table+` VALUES ($1, $2, $3)`, r.ID, r.Parent, r.Children)
			require.NoError(t, err, "inserting %v", r)
		}
		assert.Equal(t, sortedByID(want), selectAll(t, q, table))

		// One row by key, scanned into variables.
		var (
			id       ringflake.ID
			parent   ringflake.NullID
			children []ringflake.ID
		)
		top := ringflake.ID(math.MaxInt64)
		require.NoError(t, q.QueryRow(ctx, `SELECT id, parent, children FROM `+table+` WHERE id = $1`, top).Scan(&id, &parent, &children))
		assert.Equal(t, top, id)

		// NULL and not, as parameters and results.
		var null, notNull ringflake.NullID
		require.NoError(t, q.QueryRow(ctx, `SELECT $1::bigint, $2::bigint`, ringflake.NullID{}, ringflake.NullID{ID: 7, Valid: true}).Scan(&null, &notNull))
		assert.Equal(t, ringflake.NullID{}, null)
		assert.Equal(t, ringflake.NullID{ID: 7, Valid: true}, notNull)
		var nulls int
		require.NoError(t, q.QueryRow(ctx, `SELECT count(*) FROM `+table+` WHERE parent IS NULL`).Scan(&nulls))
		assert.Equal(t, (len(want)+2)/3, nulls)

		// A slice as an array parameter: = ANY($1).
		keys := []ringflake.ID{want[0].ID, want[1].ID, top}
		rows, err := q.Query(ctx, `SELECT id FROM `+table+` WHERE id = ANY($1) ORDER BY id`, keys)
		require.NoError(t, err)
		got, err := pgx.CollectRows(rows, pgx.RowTo[ringflake.ID])
		require.NoError(t, err)
		assert.Equal(t, slices.Sorted(slices.Values(keys)), got)

		// An array aggregated by the server, scanned into a slice.
		var all []ringflake.ID
		require.NoError(t, q.QueryRow(ctx, `SELECT array_agg(id ORDER BY id) FROM `+table).Scan(&all))
		assert.Len(t, all, len(want))
		assert.True(t, slices.IsSorted(all))
	})
}

func TestPgxCopyFromAndBatch(t *testing.T) {
	want := pgxRows(t)
	forEachPgx(t, func(t *testing.T, q querier, table string) {
		ctx := context.Background()
		half := len(want) / 2
		n, err := q.CopyFrom(ctx, pgx.Identifier{table}, []string{"id", "parent", "children"},
			pgx.CopyFromSlice(half, func(i int) ([]any, error) {
				return []any{want[i].ID, want[i].Parent, want[i].Children}, nil
			}))
		require.NoError(t, err)
		assert.Equal(t, int64(half), n)

		b := &pgx.Batch{}
		for _, r := range want[half:] {
			b.Queue(`INSERT INTO `+table+` VALUES ($1, $2, $3)`, r.ID, r.Parent, r.Children)
		}
		require.NoError(t, q.SendBatch(ctx, b).Close())
		assert.Equal(t, sortedByID(want), selectAll(t, q, table))
	})
}

// A negative ID is refused before it reaches the server, as its
// driver.Valuer refuses it through database/sql.
func TestPgxRejectsNegativeID(t *testing.T) {
	forEachPgx(t, func(t *testing.T, q querier, table string) {
		_, err := q.Exec(context.Background(), `INSERT INTO `+table+` VALUES ($1, NULL, '{}')`, ringflake.ID(-1))
		require.ErrorIs(t, err, ringflake.ErrInvalidID)
		var id ringflake.ID
		err = q.QueryRow(context.Background(), `SELECT -1::bigint`).Scan(&id)
		require.ErrorIs(t, err, ringflake.ErrInvalidID)
	})
}

// Without registerTypes, the modes that do not ask the server for
// parameter types take an ID and a NullID (through their driver.Valuer)
// but cannot encode a []ringflake.ID; the modes that ask take all three.
func TestPgxArrayNeedsTypeInExecModes(t *testing.T) {
	ctx := context.Background()
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeExec, pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeCacheStatement} {
		t.Run(mode.String(), func(t *testing.T) {
			cfg, err := pgx.ParseConfig(pgxDSN(t))
			require.NoError(t, err)
			cfg.DefaultQueryExecMode = mode
			conn, err := pgx.ConnectConfig(ctx, cfg)
			require.NoError(t, err, "connecting to %s", dsnEnv)
			t.Cleanup(func() { _ = conn.Close(ctx) })

			var id ringflake.ID
			var parent ringflake.NullID
			require.NoError(t, conn.QueryRow(ctx, `SELECT $1::bigint, $2::bigint`, ringflake.ID(5), ringflake.NullID{ID: 6, Valid: true}).Scan(&id, &parent))
			assert.Equal(t, ringflake.ID(5), id)
			assert.Equal(t, ringflake.NullID{ID: 6, Valid: true}, parent)

			var ids []ringflake.ID
			err = conn.QueryRow(ctx, `SELECT $1::bigint[]`, []ringflake.ID{1, 2}).Scan(&ids)
			if describes(mode) {
				require.NoError(t, err)
				assert.Equal(t, []ringflake.ID{1, 2}, ids)
				return
			}
			require.Error(t, err, "pgx now encodes []ringflake.ID without its type: registerTypes and the docs can say so")
			registerTypes(conn.TypeMap())
			require.NoError(t, conn.QueryRow(ctx, `SELECT $1::bigint[]`, []ringflake.ID{1, 2}).Scan(&ids))
			assert.Equal(t, []ringflake.ID{1, 2}, ids)
		})
	}
}
