package pglease_test

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/lease/leasetest"
	"github.com/ringflake/ringflake/pglease"
)

// The tests run against real servers, never a fake: the PostgreSQL of
// leasetest.PostgresDSNEnv and the PgBouncer of leasetest.PgBouncerDSNEnv
// in front of it, which the tests share (each under a prefix of its own),
// and clusters and PgBouncers of their own (leasetest.StartPostgres,
// leasetest.StartPgBouncer).

// driver runs the conformance suite on pglease, directly against
// PostgreSQL or through a PgBouncer in transaction pooling mode.
type driver struct{ bouncer bool }

func (d driver) Connect(t *testing.T) leasetest.Conn {
	t.Helper()
	env := leasetest.PostgresDSNEnv
	if d.bouncer {
		env = leasetest.PgBouncerDSNEnv
	}
	dsn := leasetest.RequireEnv(t, env)
	p := newPool(t, dsn)
	require.NoError(t, p.Ping(context.Background()), "the server at %s=%s does not answer", env, dsn)
	migrate(t, p)
	return newConn(p)
}

// ConnectDelayed returns a pool of the shared server (or PgBouncer)
// through a leasetest.Proxy.
func (d driver) ConnectDelayed(t *testing.T) (leasetest.Conn, leasetest.Delay) {
	t.Helper()
	env := leasetest.PostgresDSNEnv
	if d.bouncer {
		env = leasetest.PgBouncerDSNEnv
	}
	cfg, err := pgxpool.ParseConfig(leasetest.RequireEnv(t, env))
	require.NoError(t, err)
	p := leasetest.StartProxy(t, net.JoinHostPort(cfg.ConnConfig.Host, strconv.Itoa(int(cfg.ConnConfig.Port))), false)
	host, port, err := net.SplitHostPort(p.Addr)
	require.NoError(t, err)
	n, err := strconv.ParseUint(port, 10, 16)
	require.NoError(t, err)
	cfg.ConnConfig.Host, cfg.ConnConfig.Port = host, uint16(n)
	cfg.ConnConfig.Fallbacks = nil
	pool := newPoolConfig(t, cfg)
	migrate(t, pool)
	return newConn(pool), p
}

// Unreachable returns a pool of a loopback port nothing listens on; a
// pool dials on demand.
func (driver) Unreachable(t *testing.T) leasetest.Conn {
	return newConn(newPool(t, fmt.Sprintf("postgres://nobody@127.0.0.1:%d/none?sslmode=disable&connect_timeout=1", leasetest.FreePort(t))))
}

// DetectsRestart: PostgreSQL loses no committed write in a restart (the
// functions commit with synchronous_commit on); the module notices only a
// new system identifier or WAL timeline (a failover, a restore), which a
// restart does not make.
func (driver) DetectsRestart() bool { return false }

func (driver) TTLUnit() time.Duration { return time.Millisecond }

// StartServer starts a cluster of the test's own, with the schema, and
// for the PgBouncer driver a PgBouncer in front of it: the suite's server
// operations act on the database server, its clients go through the
// PgBouncer.
func (d driver) StartServer(t *testing.T) leasetest.Server {
	s := leasetest.StartPostgres(t)
	s.OnStart = func(t *testing.T) { migrate(t, newPool(t, s.DSN)) } // a server rebuilt empty gets the schema again
	s.OnStart(t)
	srv := server{PostgresServer: s, dsn: s.DSN}
	if d.bouncer {
		srv.dsn = leasetest.StartPgBouncer(t, s.Port).DSN
	}
	return srv
}

// server is a cluster of the test's own.
type server struct {
	*leasetest.PostgresServer
	dsn string // where clients connect: the cluster or its PgBouncer
}

// Connect returns a pool of the server. A patient one waits up to a
// minute for a query (the lease's own Timeout ends requests first).
func (s server) Connect(t *testing.T, patient bool) leasetest.Conn {
	return newConn(newPool(t, s.dsn))
}

// newPool returns a pool of dsn, closed when the test ends, that uses
// the extended protocol with prepared statements by default (the leases
// choose the simple protocol themselves).
func newPool(t *testing.T, dsn string) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(dsn)
	require.NoError(t, err)
	return newPoolConfig(t, cfg)
}

// newPoolConfig returns a pool as newPool does, of cfg.
func newPoolConfig(t *testing.T, cfg *pgxpool.Config) *pgxpool.Pool {
	t.Helper()
	cfg.MaxConns = 4
	p, err := pgxpool.NewWithConfig(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(p.Close)
	return p
}

func migrate(t *testing.T, p *pgxpool.Pool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, pglease.Migrate(ctx, p))
}

// conn is a pool of a server, for the suite: the module's calls through
// it, and what the tests do to the rows behind a lease's back.
type conn struct {
	leasetest.Calls[pglease.DB, *pglease.Lease]
	p *pgxpool.Pool
}

func newConn(p *pgxpool.Pool) conn {
	return conn{leasetest.Calls[pglease.DB, *pglease.Lease]{Client: p, Acquirer: pglease.Acquire, Claimer: pglease.Claim, Lister: pglease.List}, p}
}

// exec runs one statement with the simple protocol (PgBouncer in
// transaction mode has no prepared statements) and returns the rows it
// changed.
func (c conn) exec(t *testing.T, sql string, args ...any) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tag, err := c.p.Exec(ctx, sql, append([]any{pgx.QueryExecModeSimpleProtocol}, args...)...)
	require.NoError(t, err, sql)
	return tag.RowsAffected()
}

// Expire makes the row's lease expire now, on the database's clock, as
// its TTL running out does.
func (c conn) Expire(t *testing.T, prefix string, node int64) {
	t.Helper()
	n := c.exec(t, `UPDATE ringflake_node_leases SET expires_at = clock_timestamp() WHERE prefix = $1 AND node = $2 AND expires_at IS NOT NULL`, prefix, node)
	require.Equal(t, int64(1), n, "no lease of node %d", node)
}

// Delete deletes the id's row, as an operator might.
func (c conn) Delete(t *testing.T, prefix string, node int64) {
	t.Helper()
	c.exec(t, `DELETE FROM ringflake_node_leases WHERE prefix = $1 AND node = $2`, prefix, node)
}

// Put writes a lease of a minute with a fencing token no lease has, and no
// holder, into the id's row, as someone else's lease would.
func (c conn) Put(t *testing.T, prefix string, node int64, value string) bool {
	t.Helper()
	c.exec(t, `INSERT INTO ringflake_node_leases (prefix, node, fence, holder, expires_at)
		VALUES ($1, $2, -1, '', clock_timestamp() + interval '1 minute')
		ON CONFLICT (prefix, node) DO UPDATE SET fence = -1, holder = '', expires_at = excluded.expires_at`, prefix, node)
	return true
}

func (c conn) Key(t *testing.T, prefix string, node int64) (exists, expires bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var live bool
	err := c.p.QueryRow(ctx, `SELECT coalesce(expires_at > clock_timestamp(), false) FROM ringflake_node_leases WHERE prefix = $1 AND node = $2`,
		pgx.QueryExecModeSimpleProtocol, prefix, node).Scan(&live)
	if err == pgx.ErrNoRows {
		return false, false
	}
	require.NoError(t, err)
	return live, live // a live row always expires
}

func (c conn) CorruptMark(t *testing.T, prefix string, node int64) string {
	t.Helper()
	c.exec(t, `UPDATE ringflake_node_leases SET mark = 'yesterday' WHERE prefix = $1 AND node = $2`, prefix, node)
	return fmt.Sprintf("prefix %q node %d", prefix, node)
}

// Settle writes the prefix's epoch row as Acquire does, without a quiet
// period.
func (c conn) Settle(t *testing.T, prefix string) {
	t.Helper()
	c.exec(t, `INSERT INTO ringflake_node_epochs (prefix, epoch, server, quiet_until, fence)
		VALUES ($1, 'settled', ringflake_node_server(), '-infinity', 0)`, prefix)
}

// WaitConnected waits until a query succeeds again after a server
// restart; polling, with a bound.
func (c conn) WaitConnected(t *testing.T) {
	t.Helper()
	require.Eventually(t, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := c.p.Exec(ctx, "SELECT 1", pgx.QueryExecModeSimpleProtocol)
		return err == nil
	}, 30*time.Second, 10*time.Millisecond, "the pool did not reconnect")
}

// TestConformance runs the lease modules' shared suite against
// PostgreSQL directly.
func TestConformance(t *testing.T) { leasetest.Run(t, driver{}) }

// TestConformancePgBouncer runs the suite through PgBouncer in
// transaction pooling mode.
func TestConformancePgBouncer(t *testing.T) { leasetest.Run(t, driver{bouncer: true}) }
