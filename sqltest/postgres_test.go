package sqltest

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"math"
	"os"
	"slices"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx"
	_ "github.com/lib/pq"              // registers "postgres"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/encodings"
	"github.com/ringflake/ringflake/simclock"
	"github.com/ringflake/ringflake/strategies"
)

const dsnEnv = "RINGFLAKE_TEST_POSTGRES_DSN"

// drivers are the database/sql driver names every test runs against.
var drivers = []string{"pgx", "postgres"}

// conn returns one session of a fresh connection to the test server, so
// that TEMP tables stay visible, closed when the test ends.
func conn(t *testing.T, driver string) *sql.Conn {
	t.Helper()
	dsn := os.Getenv(dsnEnv)
	if dsn == "" {
		t.Fatalf("%s is not set. These tests need a PostgreSQL server:\n"+
			"  run ./scripts/test.sh, which starts a throwaway one, or\n"+
			"  export %s='postgres://USER@127.0.0.1:PORT/DB?sslmode=disable' for a server of yours\n"+
			"  (the tests only create TEMP tables).", dsnEnv, dsnEnv)
	}
	db, err := sql.Open(driver, dsn)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	ctx := context.Background()
	c, err := db.Conn(ctx)
	require.NoError(t, err, "connecting to %s with %s", dsnEnv, driver)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// forEachDriver runs test once per driver.
func forEachDriver(t *testing.T, test func(t *testing.T, c *sql.Conn)) {
	for _, driver := range drivers {
		t.Run(driver, func(t *testing.T) { test(t, conn(t, driver)) })
	}
}

// testIDs returns IDs as a service issues them: 500 from a generator
// whose clock steps back halfway (so the ring reuses earlier ticks and
// issue order is not numeric order), the largest ID of every preset
// layout, and the edges 0, 1, 2^53-1 and 2^53.
func testIDs(t *testing.T) []ringflake.ID {
	t.Helper()
	clk := simclock.New(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	gen, err := ringflake.New(5, ringflake.WithClock(clk), ringflake.WithStrategy(strategies.Ring()))
	require.NoError(t, err)
	var ids []ringflake.ID
	for i := range 500 {
		if i == 250 {
			clk.Step(-20 * time.Millisecond)
		}
		if i%10 == 0 {
			clk.Add(time.Millisecond)
		}
		id, err := gen.Next()
		require.NoError(t, err)
		ids = append(ids, id)
	}
	require.False(t, slices.IsSorted(ids), "the rollback should reorder issue order")
	for _, l := range []ringflake.Layout{ringflake.TwitterLayout(), ringflake.SonyflakeLayout(), ringflake.JSSafeLayout()} {
		largest, err := l.Compose(l.Last(), l.MaxNode(), l.MaxSequence())
		require.NoError(t, err)
		ids = append(ids, largest)
	}
	ids = append(ids, 0, 1, 1<<53-1, 1<<53)
	slices.Sort(ids)
	ids = slices.Compact(ids) // the largest Twitter and Sonyflake IDs are both 2^63-1
	require.Equal(t, ringflake.ID(math.MaxInt64), ids[len(ids)-1])
	slices.SortFunc(ids, func(a, b ringflake.ID) int { return cmp.Compare(mix(a), mix(b)) })
	return ids
}

// mix scrambles an ID's bits (splitmix64's finaliser) to shuffle IDs into
// an order that is neither numeric nor random.
func mix(id ringflake.ID) uint64 {
	z := uint64(id) + 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// fill creates the TEMP table ids and inserts every ID: into a BIGINT
// column and a TEXT column through ID's driver.Valuer, as base32, base62
// and hex text, and, for every third ID, as the nullable parent columns.
func fill(t *testing.T, c *sql.Conn, ids []ringflake.ID) {
	t.Helper()
	ctx := context.Background()
	_, err := c.ExecContext(ctx, `CREATE TEMP TABLE ids (
		id          BIGINT PRIMARY KEY,
		dec         TEXT NOT NULL,
		b32         TEXT NOT NULL,
		b62         TEXT NOT NULL,
		hex         TEXT NOT NULL,
		parent      BIGINT,
		parent_text TEXT
	)`)
	require.NoError(t, err)
	for i, id := range ids {
		parent := ringflake.NullID{ID: id, Valid: i%3 == 0}
		_, err := c.ExecContext(ctx, `INSERT INTO ids VALUES ($1, $2, $3, $4, $5, $6, $7)`,
			id, id.String(), encodings.Base32().Format(id), encodings.Base62().Format(id),
			encodings.Hex().Format(id), parent, nullText(parent))
		require.NoError(t, err, "inserting %d", id)
	}
}

// nullText is a NullID's decimal form for a TEXT column, or NULL.
func nullText(n ringflake.NullID) sql.NullString {
	return sql.NullString{String: n.ID.String(), Valid: n.Valid}
}

// queryIDs scans the single column of every row of query into IDs.
func queryIDs(t *testing.T, c *sql.Conn, query string, args ...any) []ringflake.ID {
	t.Helper()
	rows, err := c.QueryContext(context.Background(), query, args...)
	require.NoError(t, err)
	defer rows.Close()
	var got []ringflake.ID
	for rows.Next() {
		var id ringflake.ID
		require.NoError(t, rows.Scan(&id))
		got = append(got, id)
	}
	require.NoError(t, rows.Err())
	return got
}

func TestBigintAndTextColumns(t *testing.T) {
	ids := testIDs(t)
	sorted := slices.Sorted(slices.Values(ids))
	forEachDriver(t, func(t *testing.T, c *sql.Conn) {
		fill(t, c, ids)
		assert.Equal(t, sorted, queryIDs(t, c, `SELECT id FROM ids ORDER BY id`), "BIGINT, ORDER BY")
		assert.Equal(t, sorted, queryIDs(t, c, `SELECT dec FROM ids ORDER BY id`), "TEXT scanned into ID")
		assert.Equal(t, sorted, queryIDs(t, c, `SELECT dec::bigint FROM ids ORDER BY dec::bigint`))
		assert.Equal(t, []ringflake.ID{math.MaxInt64}, queryIDs(t, c, `SELECT max(id) FROM ids`))
		assert.Equal(t, []ringflake.ID{math.MaxInt64}, queryIDs(t, c, `SELECT id FROM ids WHERE id = $1`, ringflake.ID(math.MaxInt64)))
		assert.Equal(t, []ringflake.ID{math.MaxInt64}, queryIDs(t, c, `SELECT id FROM ids WHERE dec = $1`, ringflake.ID(math.MaxInt64).String()))
		assert.Equal(t, sorted[len(sorted)-3:], queryIDs(t, c, `SELECT id FROM ids WHERE id >= $1 ORDER BY id`, sorted[len(sorted)-3]))
	})
}

// Each ID straight through the server and back: as a BIGINT parameter,
// read as BIGINT and as its TEXT cast.
func TestEveryIDRoundTrips(t *testing.T) {
	ids := testIDs(t)
	forEachDriver(t, func(t *testing.T, c *sql.Conn) {
		ctx := context.Background()
		for _, id := range ids {
			var asBigint, asText ringflake.ID
			require.NoError(t, c.QueryRowContext(ctx, `SELECT $1::bigint, $1::bigint::text`, id).Scan(&asBigint, &asText))
			assert.Equal(t, id, asBigint)
			assert.Equal(t, id, asText)
		}
	})
}

// A text column whose encoding is sortable orders rows as the IDs, under
// the byte-wise "C" collation.
func TestSortableTextOrdersLikeIDs(t *testing.T) {
	ids := testIDs(t)
	sorted := slices.Sorted(slices.Values(ids))
	forEachDriver(t, func(t *testing.T, c *sql.Conn) {
		fill(t, c, ids)
		for _, tc := range []struct {
			column string
			enc    encodings.Encoding
		}{{"b32", encodings.Base32()}, {"b62", encodings.Base62()}, {"hex", encodings.Hex()}} {
			t.Run(tc.column, func(t *testing.T) {
				require.True(t, tc.enc.Sortable())
				rows, err := c.QueryContext(context.Background(), `SELECT `+tc.column+` FROM ids ORDER BY `+tc.column+` COLLATE "C"`)
				require.NoError(t, err)
				defer rows.Close()
				var got []ringflake.ID
				for rows.Next() {
					var s string
					require.NoError(t, rows.Scan(&s))
					id, err := tc.enc.Parse(s)
					require.NoError(t, err)
					got = append(got, id)
				}
				require.NoError(t, rows.Err())
				assert.Equal(t, sorted, got)
			})
		}
	})
}

func TestNullID(t *testing.T) {
	ids := testIDs(t)
	forEachDriver(t, func(t *testing.T, c *sql.Conn) {
		fill(t, c, ids)
		rows, err := c.QueryContext(context.Background(), `SELECT id, parent, parent_text FROM ids`)
		require.NoError(t, err)
		defer rows.Close()
		nulls, valid := 0, 0
		for rows.Next() {
			var id ringflake.ID
			var parent, parentText ringflake.NullID
			require.NoError(t, rows.Scan(&id, &parent, &parentText))
			assert.Equal(t, parent, parentText, "BIGINT and TEXT agree")
			if parent.Valid {
				valid++
				assert.Equal(t, id, parent.ID)
			} else {
				nulls++
				assert.Equal(t, ringflake.NullID{}, parent)
			}
		}
		require.NoError(t, rows.Err())
		assert.Equal(t, len(ids), nulls+valid)
		assert.Equal(t, (len(ids)+2)/3, valid)

		var id ringflake.ID
		err = c.QueryRowContext(context.Background(), `SELECT parent FROM ids WHERE parent IS NULL LIMIT 1`).Scan(&id)
		require.ErrorIs(t, err, ringflake.ErrInvalidID, "NULL into a plain ID")
	})
}

// PostgreSQL's JSON writes a BIGINT as a number and NULL as null; NullID
// reads both, all 63 bits exact. NullID's own JSON (a string or null) goes
// back through the server's jsonb to the same BIGINT or NULL.
func TestNullIDJSONThroughPostgres(t *testing.T) {
	ids := testIDs(t)
	type row struct {
		ID     ringflake.ID     `json:"id"`
		Parent ringflake.NullID `json:"parent"`
	}
	want := make([]row, len(ids))
	for i, id := range ids {
		want[i] = row{ID: id}
		if i%3 == 0 { // as fill inserts them
			want[i].Parent = ringflake.NullID{ID: id, Valid: true}
		}
	}
	slices.SortFunc(want, func(a, b row) int { return cmp.Compare(a.ID, b.ID) })
	forEachDriver(t, func(t *testing.T, c *sql.Conn) {
		fill(t, c, ids)
		ctx := context.Background()

		var fromServer []byte
		require.NoError(t, c.QueryRowContext(ctx,
			`SELECT json_agg(json_build_object('id', id, 'parent', parent) ORDER BY id) FROM ids`).Scan(&fromServer))
		var got []row
		require.NoError(t, json.Unmarshal(fromServer, &got))
		assert.Equal(t, want, got)

		toServer, err := json.Marshal(want)
		require.NoError(t, err)
		rows, err := c.QueryContext(ctx,
			`SELECT (r->>'id')::bigint, (r->>'parent')::bigint FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS a(r, ord) ORDER BY ord`,
			string(toServer))
		require.NoError(t, err)
		defer rows.Close()
		var back []row
		for rows.Next() {
			var r row
			require.NoError(t, rows.Scan(&r.ID, &r.Parent))
			back = append(back, r)
		}
		require.NoError(t, rows.Err())
		assert.Equal(t, want, back)
	})
}

func TestRejects(t *testing.T) {
	forEachDriver(t, func(t *testing.T, c *sql.Conn) {
		ctx := context.Background()
		for _, tc := range []struct {
			name, query string
		}{
			{"negative BIGINT", `SELECT -1::bigint`},
			{"smallest BIGINT", `SELECT (-9223372036854775807 - 1)::bigint`},
			{"malformed text", `SELECT '12x'::text`},
			{"negative text", `SELECT '-5'::text`},
			{"text above 2^63-1", `SELECT '9223372036854775808'::text`},
			{"NULL", `SELECT NULL::bigint`},
		} {
			t.Run(tc.name, func(t *testing.T) {
				id := ringflake.ID(42)
				err := c.QueryRowContext(ctx, tc.query).Scan(&id)
				require.ErrorIs(t, err, ringflake.ErrInvalidID)
				assert.Equal(t, ringflake.ID(42), id)
			})
		}
		t.Run("negative ID as a parameter", func(t *testing.T) {
			_, err := c.ExecContext(ctx, `SELECT $1::bigint`, ringflake.ID(-1))
			require.ErrorIs(t, err, ringflake.ErrInvalidID)
		})
	})
}

// lib/pq sends every parameter as text, so an ID's driver.Valuer fills a
// TEXT column as well. pgx sends an int64 as a typed BIGINT and refuses it
// for TEXT; fill passes id.String() there, which works with any driver.
func TestTextColumnThroughValuerWithLibPQ(t *testing.T) {
	ids := testIDs(t)
	c := conn(t, "postgres")
	ctx := context.Background()
	_, err := c.ExecContext(ctx, `CREATE TEMP TABLE texts (id TEXT NOT NULL)`)
	require.NoError(t, err)
	for _, id := range ids {
		_, err := c.ExecContext(ctx, `INSERT INTO texts VALUES ($1)`, id)
		require.NoError(t, err)
	}
	assert.Equal(t, slices.Sorted(slices.Values(ids)), queryIDs(t, c, `SELECT id FROM texts ORDER BY id::bigint`))
}
