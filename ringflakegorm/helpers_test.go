package ringflakegorm_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/ringflakegorm"
	"github.com/ringflake/ringflake/simclock"
)

const dsnEnv = "RINGFLAKE_TEST_POSTGRES_DSN"

// start is where every test's simulated clock starts.
var start = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

// serverDSN returns the test server's address, failing t when it is not set.
func serverDSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv(dsnEnv)
	if dsn == "" {
		t.Fatalf("%s is not set. These tests need a PostgreSQL server:\n"+
			"  run ./scripts/test.sh, which starts a throwaway one, or\n"+
			"  export %s='postgres://USER@127.0.0.1:PORT/DB?sslmode=disable' for a server of yours\n"+
			"  (each test creates a schema of its own and drops it).", dsnEnv, dsnEnv)
	}
	return dsn
}

// inSchema returns dsn with its search_path set to schema, in URL or
// key=value form.
func inSchema(dsn, schema string) (string, error) {
	if !strings.Contains(dsn, "://") {
		return dsn + " search_path=" + schema, nil
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return "", err
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// open opens gorm on dsn, quietly.
func open(dsn string, cfg *gorm.Config) (*gorm.DB, error) {
	if cfg == nil {
		cfg = &gorm.Config{}
	}
	cfg.Logger = logger.Discard
	return gorm.Open(postgres.Open(dsn), cfg)
}

// newSchema creates a schema of its own for t on the test server, dropped
// when t ends, and returns the DSN of a connection whose search_path is
// that schema.
func newSchema(t testing.TB) string {
	t.Helper()
	dsn := serverDSN(t)
	admin, err := open(dsn, nil)
	require.NoError(t, err, "connecting to %s", dsnEnv)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "ringflakegorm_" + hex.EncodeToString(b)
	require.NoError(t, admin.Exec("CREATE SCHEMA "+name).Error)
	t.Cleanup(func() {
		_ = admin.Exec("DROP SCHEMA " + name + " CASCADE").Error
		if db, err := admin.DB(); err == nil {
			_ = db.Close()
		}
	})
	scoped, err := inSchema(dsn, name)
	require.NoError(t, err)
	return scoped
}

// openDB returns a gorm DB in a schema of t's own, with the plugin on src
// registered and the tables of models migrated.
func openDB(t testing.TB, src ringflakegorm.Source, cfg *gorm.Config, models ...any) *gorm.DB {
	t.Helper()
	db, err := open(newSchema(t), cfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		if sqlDB, err := db.DB(); err == nil {
			_ = sqlDB.Close()
		}
	})
	require.NoError(t, db.Use(ringflakegorm.New(src)))
	require.NoError(t, db.AutoMigrate(models...))
	return db
}

// newGen returns a generator for node on a simulated clock of its own.
func newGen(t testing.TB, node int64, opts ...ringflake.Option) (*ringflake.Generator, *simclock.Clock) {
	t.Helper()
	clk := simclock.New(start)
	gen, err := ringflake.New(node, append([]ringflake.Option{ringflake.WithClock(clk)}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = gen.Close(context.Background()) })
	return gen, clk
}

// countingSource records how many IDs each NextN call asked for.
type countingSource struct {
	src   ringflakegorm.Source
	mu    sync.Mutex
	calls []int
}

func (c *countingSource) NextN(ctx context.Context, ids []ringflake.ID) (int, error) {
	c.mu.Lock()
	c.calls = append(c.calls, len(ids))
	c.mu.Unlock()
	return c.src.NextN(ctx, ids)
}

func (c *countingSource) Calls() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]int(nil), c.calls...)
}

// switchLease is a ringflake.Lease the test takes away with lose, as a
// lease on a coordination service is lost when it cannot be renewed.
type switchLease struct {
	node int64
	lost atomic.Bool
}

func (l *switchLease) Node() int64 { return l.node }
func (l *switchLease) Held() bool  { return !l.lost.Load() }
func (l *switchLease) lose()       { l.lost.Store(true) }

// count returns the number of rows of model's table.
func count(t testing.TB, db *gorm.DB, model any) int64 {
	t.Helper()
	var n int64
	require.NoError(t, db.Model(model).Count(&n).Error)
	return n
}
