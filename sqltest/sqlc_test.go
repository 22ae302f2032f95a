package sqltest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/simclock"
	"github.com/ringflake/ringflake/sqltest/internal/sqlcexample"
	"github.com/ringflake/ringflake/sqltest/internal/sqlcexample/bytype"
)

// sqlcConn returns a pgx connection whose search_path is a schema of its
// own, holding the tables of sqlcexample/schema.sql; the schema is
// dropped when t ends.
func sqlcConn(t *testing.T) *pgx.Conn {
	t.Helper()
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, pgxDSN(t))
	require.NoError(t, err, "connecting to %s", dsnEnv)
	t.Cleanup(func() { _ = admin.Close(ctx) })
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "ringflake_sqlc_" + hex.EncodeToString(b)
	_, err = admin.Exec(ctx, "CREATE SCHEMA "+name)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = admin.Exec(ctx, "DROP SCHEMA "+name+" CASCADE") })

	cfg, err := pgx.ParseConfig(pgxDSN(t))
	require.NoError(t, err)
	cfg.RuntimeParams["search_path"] = name
	conn, err := pgx.ConnectConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close(ctx) })
	schema, err := os.ReadFile("internal/sqlcexample/schema.sql")
	require.NoError(t, err)
	_, err = conn.Exec(ctx, string(schema))
	require.NoError(t, err)
	return conn
}

// The package sqlc generated with the overrides of sqlcexample/sqlc.yaml
// takes and returns ringflake IDs; keys come from a generator.
func TestSqlcGeneratedQueries(t *testing.T) {
	ctx := context.Background()
	q := sqlcexample.New(sqlcConn(t))
	gen, err := ringflake.New(11, ringflake.WithClock(simclock.New(time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC))))
	require.NoError(t, err)
	defer gen.Close(ctx)

	rootID, err := gen.Next()
	require.NoError(t, err)
	root, err := q.CreateOrder(ctx, sqlcexample.CreateOrderParams{ID: rootID, Customer: "ada", Amount: 100})
	require.NoError(t, err)
	assert.Equal(t, sqlcexample.Order{ID: rootID, Customer: "ada", Amount: 100}, root, "NULL parent: a NullID that is not Valid")

	var children []sqlcexample.Order
	for i := range 3 {
		id, err := gen.Next()
		require.NoError(t, err)
		o, err := q.CreateOrder(ctx, sqlcexample.CreateOrderParams{
			ID: id, ParentID: ringflake.NullID{ID: rootID, Valid: true}, Customer: "ada", Amount: int64(i),
		})
		require.NoError(t, err)
		children = append(children, o)
	}

	got, err := q.GetOrder(ctx, children[1].ID)
	require.NoError(t, err)
	assert.Equal(t, children[1], got)
	assert.Equal(t, int64(11), got.ID.Node(gen.Layout()))

	listed, err := q.ListChildren(ctx, ringflake.NullID{ID: rootID, Valid: true})
	require.NoError(t, err)
	assert.Equal(t, children, listed)

	roots, err := q.ListRoots(ctx)
	require.NoError(t, err)
	assert.Equal(t, []sqlcexample.ListRootsRow{{ID: rootID, Customer: "ada"}}, roots)

	after, err := q.ListAfter(ctx, sqlcexample.ListAfterParams{After: children[0].ID, MaxRows: 10})
	require.NoError(t, err)
	assert.Equal(t, []ringflake.ID{children[1].ID, children[2].ID}, after)

	_, err = q.GetOrder(ctx, ringflake.ID(1))
	require.ErrorIs(t, err, pgx.ErrNoRows)
}

// The package generated with the db_type overrides maps every BIGINT,
// the amount too, to ringflake.ID: it compiles and runs, and shows why
// the docs prefer naming columns.
func TestSqlcGeneratedByType(t *testing.T) {
	ctx := context.Background()
	q := bytype.New(sqlcConn(t))
	o, err := q.CreateOrder(ctx, bytype.CreateOrderParams{ID: 5, Customer: "bob", Amount: ringflake.ID(250)})
	require.NoError(t, err)
	assert.Equal(t, bytype.Order{ID: 5, Customer: "bob", Amount: 250}, o)
	after, err := q.ListAfter(ctx, bytype.ListAfterParams{After: 4, MaxRows: 1})
	require.NoError(t, err)
	assert.Equal(t, []ringflake.ID{5}, after)
}
