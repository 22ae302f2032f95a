package entexample_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/ringflakeent"
	"github.com/ringflake/ringflake/ringflakeent/internal/entexample/ent"
	"github.com/ringflake/ringflake/ringflakeent/internal/entexample/ent/post"
	"github.com/ringflake/ringflake/ringflakeent/internal/entexample/ent/user"
	"github.com/ringflake/ringflake/simclock"
	"github.com/ringflake/ringflake/strategies"
)

const dsnEnv = "RINGFLAKE_TEST_POSTGRES_DSN"

// newSchema creates a PostgreSQL schema of its own for t, dropped when t
// ends, and returns a database on it (search_path set to it).
func newSchema(t *testing.T) *sql.DB {
	t.Helper()
	dsn := os.Getenv(dsnEnv)
	if dsn == "" {
		t.Fatalf("%s is not set. These tests need a PostgreSQL server:\n"+
			"  run ./scripts/test.sh, which starts a throwaway one, or\n"+
			"  export %s='postgres://USER@127.0.0.1:PORT/DB?sslmode=disable' for a server of yours\n"+
			"  (each test creates a schema of its own and drops it).", dsnEnv, dsnEnv)
	}
	admin, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { _ = admin.Close() })
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "ringflakeent_" + hex.EncodeToString(b)
	_, err = admin.Exec("CREATE SCHEMA " + name)
	require.NoError(t, err, "connecting to %s", dsnEnv)
	t.Cleanup(func() { _, _ = admin.Exec("DROP SCHEMA " + name + " CASCADE") })

	u, err := url.Parse(dsn)
	require.NoError(t, err, "%s must be a URL (postgres://…)", dsnEnv)
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	db, err := sql.Open("pgx", u.String())
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// countingSource records how many IDs each NextN call asked for.
type countingSource struct {
	src   ringflakeent.Source
	mu    sync.Mutex
	calls []int
}

func (c *countingSource) NextN(ctx context.Context, ids []ringflake.ID) (int, error) {
	c.mu.Lock()
	c.calls = append(c.calls, len(ids))
	c.mu.Unlock()
	return c.src.NextN(ctx, ids)
}

func (c *countingSource) Calls() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.calls)
}

// switchLease is a ringflake.Lease the test takes away.
type switchLease struct {
	node int64
	lost atomic.Bool
}

func (l *switchLease) Node() int64 { return l.node }
func (l *switchLease) Held() bool  { return !l.lost.Load() }

// newClient returns an ent client on a schema of t's own, migrated, with
// the hook on src installed.
func newClient(t *testing.T, src ringflakeent.Source) *ent.Client {
	t.Helper()
	client := ent.NewClient(ent.Driver(entsql.OpenDB(dialect.Postgres, newSchema(t))))
	require.NoError(t, client.Schema.Create(context.Background()))
	client.Use(ringflakeent.Hook(src))
	return client
}

// newGen returns a generator for node on a simulated clock.
func newGen(t *testing.T, node int64, opts ...ringflake.Option) (*ringflake.Generator, *simclock.Clock) {
	t.Helper()
	clk := simclock.New(time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC))
	gen, err := ringflake.New(node, append([]ringflake.Option{ringflake.WithClock(clk)}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = gen.Close(context.Background()) })
	return gen, clk
}

func TestCreateAndQuery(t *testing.T) {
	gen, _ := newGen(t, 9)
	src := &countingSource{src: gen}
	client := newClient(t, src)
	ctx := context.Background()

	ada, err := client.User.Create().SetName("Ada").SetEmail("ada@example.com").Save(ctx)
	require.NoError(t, err)
	require.NotZero(t, ada.ID)
	assert.Equal(t, int64(9), ada.ID.Node(gen.Layout()))

	titles := []string{"one", "two", "three"}
	builders := make([]*ent.PostCreate, len(titles))
	for i, title := range titles {
		builders[i] = client.Post.Create().SetTitle(title).SetAuthor(ada)
	}
	posts, err := client.Post.CreateBulk(builders...).Save(ctx)
	require.NoError(t, err)
	ids := []ringflake.ID{ada.ID}
	for _, p := range posts {
		ids = append(ids, p.ID)
		assert.Equal(t, ada.ID, p.AuthorID)
	}
	assert.True(t, slices.IsSorted(ids), "keys increase in create order: %v", ids)
	assert.Len(t, slices.Compact(slices.Clone(ids)), 4)
	assert.Equal(t, 4, src.Calls(), "one ID per entity")

	// Queried back: by key, through the edge, and eagerly loaded.
	got, err := client.User.Get(ctx, ada.ID)
	require.NoError(t, err)
	assert.Equal(t, "ada@example.com", got.Email)
	byEdge, err := got.QueryPosts().Order(post.ByID()).All(ctx)
	require.NoError(t, err)
	require.Len(t, byEdge, 3)
	for i, p := range byEdge {
		assert.Equal(t, posts[i].ID, p.ID)
		assert.Equal(t, titles[i], p.Title)
	}
	loaded, err := client.User.Query().Where(user.ID(ada.ID)).WithPosts().Only(ctx)
	require.NoError(t, err)
	assert.Len(t, loaded.Edges.Posts, 3)
	n, err := client.Post.Query().Where(post.IDIn(posts[1].ID, posts[2].ID), post.AuthorID(ada.ID)).Count(ctx)
	require.NoError(t, err)
	assert.Equal(t, 2, n)

	// An optional ringflake.ID field, NULL and not.
	bob, err := client.User.Create().SetName("Bob").SetEmail("bob@example.com").SetInvitedBy(ada.ID).Save(ctx)
	require.NoError(t, err)
	invited, err := client.User.Query().Where(user.InvitedByEQ(ada.ID)).OnlyID(ctx)
	require.NoError(t, err)
	assert.Equal(t, bob.ID, invited)
	none, err := client.User.Query().Where(user.InvitedByIsNil()).OnlyID(ctx)
	require.NoError(t, err)
	assert.Equal(t, ada.ID, none)

	// Updates and deletes pass through the hook untouched.
	calls := src.Calls()
	require.NoError(t, client.User.UpdateOne(bob).SetName("Robert").Exec(ctx))
	_, err = client.Post.Delete().Where(post.ID(posts[0].ID)).Exec(ctx)
	require.NoError(t, err)
	assert.Equal(t, calls, src.Calls())
}

func TestGivenIDsAndUpsert(t *testing.T) {
	gen, _ := newGen(t, 9)
	src := &countingSource{src: gen}
	client := newClient(t, src)
	ctx := context.Background()

	imported, err := client.User.Create().SetID(42).SetName("Imported").SetEmail("old@example.com").Save(ctx)
	require.NoError(t, err)
	assert.Equal(t, ringflake.ID(42), imported.ID)
	assert.Zero(t, src.Calls())

	// An upsert that meets the existing row keeps its key.
	id, err := client.User.Create().SetName("Renamed").SetEmail("old@example.com").
		OnConflictColumns(user.FieldEmail).UpdateName().ID(ctx)
	require.NoError(t, err)
	assert.Equal(t, ringflake.ID(42), id)
	id, err = client.User.Create().SetName("New").SetEmail("new@example.com").
		OnConflictColumns(user.FieldEmail).UpdateName().ID(ctx)
	require.NoError(t, err)
	assert.Greater(t, id, ringflake.ID(42))
	assert.Equal(t, 2, src.Calls())
	names, err := client.User.Query().Order(user.ByID()).Select(user.FieldName).Strings(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"Renamed", "New"}, names)
}

func TestGeneratorFailureWritesNothing(t *testing.T) {
	creates := []struct {
		name   string
		create func(ctx context.Context, c *ent.Client) error
	}{
		{"Create", func(ctx context.Context, c *ent.Client) error {
			return c.User.Create().SetName("x").SetEmail("x@example.com").Exec(ctx)
		}},
		{"CreateBulk", func(ctx context.Context, c *ent.Client) error {
			return c.User.CreateBulk(
				c.User.Create().SetName("y").SetEmail("y@example.com"),
				c.User.Create().SetName("z").SetEmail("z@example.com"),
			).Exec(ctx)
		}},
		{"upsert", func(ctx context.Context, c *ent.Client) error {
			return c.User.Create().SetName("w").SetEmail("w@example.com").OnConflictColumns(user.FieldEmail).UpdateName().Exec(ctx)
		}},
	}
	check := func(t *testing.T, client *ent.Client, fail func(), want error) {
		ctx := context.Background()
		require.NoError(t, client.User.Create().SetName("before").SetEmail("before@example.com").Exec(ctx))
		fail()
		for _, c := range creates {
			require.ErrorIs(t, c.create(ctx, client), want, c.name)
			n, err := client.User.Query().Count(ctx)
			require.NoError(t, err)
			assert.Equal(t, 1, n, "%s wrote rows", c.name)
		}
	}
	t.Run("lease lost", func(t *testing.T) {
		lease := &switchLease{node: 3}
		gen, _ := newGen(t, 3, ringflake.WithLease(lease))
		check(t, newClient(t, gen), func() { lease.lost.Store(true) }, ringflake.ErrLeaseLost)
	})
	t.Run("rollback refused", func(t *testing.T) {
		gen, clk := newGen(t, 3, ringflake.WithStrategy(strategies.Error()))
		check(t, newClient(t, gen), func() {
			clk.Step(-time.Second)
			clk.Add(time.Millisecond) // the generator sees the step from the next tick on
		}, ringflake.ErrClockRollback)
	})
	t.Run("nil source", func(t *testing.T) {
		client := newClient(t, nil)
		err := client.User.Create().SetName("x").SetEmail("x@example.com").Exec(context.Background())
		require.ErrorIs(t, err, ringflake.ErrInvalidOption)
	})
}
