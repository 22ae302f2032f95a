package main

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/lease/leasetest"
	"github.com/ringflake/ringflake/pglease"
)

// pgBackend returns the PostgreSQL (or PgBouncer) at dsn, a
// postgres://…?sslmode=… URL, with the lease tables made.
func pgBackend(t *testing.T, dsn string) backend {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pool, err := pgxpool.New(ctx, dsn)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	require.NoError(t, pglease.Migrate(ctx, pool))
	exec := func(t *testing.T, sql string, args ...any) int64 {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		tag, err := pool.Exec(ctx, sql, append([]any{pgx.QueryExecModeSimpleProtocol}, args...)...)
		require.NoError(t, err, sql)
		return tag.RowsAffected()
	}
	return backend{
		name: "postgres",
		url: func(prefix string, q url.Values) string {
			u, err := url.Parse(dsn)
			require.NoError(t, err)
			all := u.Query()
			for k, v := range q {
				all[k] = v
			}
			all.Set("prefix", prefix)
			u.RawQuery = all.Encode()
			return u.String()
		},
		settle: func(t *testing.T, prefix string) {
			exec(t, `INSERT INTO ringflake_node_epochs (prefix, epoch, server, quiet_until, fence)
				VALUES ($1, 'settled', ringflake_node_server(), '-infinity', 0)`, prefix)
		},
		steal: func(t *testing.T, prefix string, node int64) {
			n := exec(t, `UPDATE ringflake_node_leases SET fence = -1, holder = '', expires_at = clock_timestamp() + interval '1 minute'
				WHERE prefix = $1 AND node = $2`, prefix, node)
			require.Equal(t, int64(1), n, "no row of node %d", node)
		},
		exists: func(t *testing.T, prefix string, node int64) bool {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var live bool
			err := pool.QueryRow(ctx, `SELECT coalesce(bool_or(expires_at > clock_timestamp()), false) FROM ringflake_node_leases WHERE prefix = $1 AND node = $2`,
				pgx.QueryExecModeSimpleProtocol, prefix, node).Scan(&live)
			require.NoError(t, err)
			return live
		},
	}
}

// pgBackends returns the shared PostgreSQL and the PgBouncer in front of
// it (scripts/test.sh starts them); a test without them fails.
func pgBackends(t *testing.T) []backend {
	t.Helper()
	direct := pgBackend(t, leasetest.RequireEnv(t, leasetest.PostgresDSNEnv))
	bouncer := pgBackend(t, leasetest.RequireEnv(t, leasetest.PgBouncerDSNEnv))
	bouncer.name = "pgbouncer"
	return []backend{direct, bouncer}
}

// TestGenPostgresLease: with a PostgreSQL lease, gen takes the lowest free
// node id of the prefix, keeps the mark with it, and gives it back when
// done; a second run gets the id again and starts above the first's IDs.
// The prefix is new, so the first lease waits out a quiet period of TTL +
// Margin + MaxLead (about 3 s here) before it issues.
func TestGenPostgresLease(t *testing.T) {
	l := ringflake.TwitterLayout()
	for _, b := range pgBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			spec := b.url(newPrefix(), url.Values{"ttl": {"2s"}})
			ids := genIDs(t, "-n", "5", "-node", spec)
			for _, id := range ids {
				assert.Equal(t, int64(0), id.Node(l))
			}
			again := genIDs(t, "-n", "5", "-node", spec)
			assert.Equal(t, int64(0), again[0].Node(l), "node 0 was given back and taken again")
			assert.Greater(t, again[0], ids[len(ids)-1], "the lease carried the mark to the next run")
		})
	}
}

// TestGenPostgresConcurrent: two gen processes that run at the same time
// on one prefix get different node ids, and every ID of both is unique.
func TestGenPostgresConcurrent(t *testing.T) {
	l := ringflake.SonyflakeLayout()
	for _, b := range pgBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			prefix := newPrefix()
			b.settle(t, prefix)
			spec := b.url(prefix, url.Values{"ttl": {"2s"}})
			first := startGen(t, "first", "-n", "1000000000", "-node", spec, "-layout", "sonyflake")
			second := startGen(t, "second", "-n", "1000000000", "-node", spec, "-layout", "sonyflake")
			require.Eventually(t, func() bool {
				a, _ := first.progress()
				b, _ := second.progress()
				return a > 0 && b > 0
			}, 30*time.Second, 10*time.Millisecond, "both processes issue")
			nodes := map[int64]string{}
			for _, c := range []*child{first, second} {
				c.mu.Lock()
				node := c.ids[0].Node(l)
				c.mu.Unlock()
				prev, taken := nodes[node]
				require.False(t, taken, "%s got node %d, which %s holds", c.name, node, prev)
				nodes[node] = c.name
			}
			_, dups := duplicates(first, second)
			assert.Zero(t, dups)
		})
	}
}

// TestGenPostgresGuard: a gen with a guarded static node id holds it in
// PostgreSQL; a second gen with the same id fails at start, naming the
// node id and the first one's holder description (HOST/PID), in one line;
// another id is free; and when the first process loses its claim it
// stops issuing and exits with an error.
func TestGenPostgresGuard(t *testing.T) {
	for _, b := range pgBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			first := checkGuard(t, b)
			assert.Contains(t, lastErrorLine(t, first), "node id lease lost")
		})
	}
}

// TestGenPostgresRejects: a PostgreSQL URL that cannot be right is a usage
// error (status 2) that names the bad part, without the password; a
// server that cannot be reached is a one-line failure (status 1).
func TestGenPostgresRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no host", []string{"-node", "postgres:///ids"}, 2, `-node "postgres:///ids": no host`},
		{"bad ttl", []string{"-node", "postgresql://db/ids?ttl=soon"}, 2, `ttl="soon" is not a positive duration`},
		{"bad sslmode, password hidden", []string{"-node", "postgres://app:secret@db/ids?sslmode=sometimes"}, 2, "app:xxxxx@db"},
		{"fragment", []string{"-node", "postgres://db/ids#x"}, 2, `fragment "#x"`},
		{"a lead past maxlead", []string{"-node", "3", "-strategy", "logical:5s", "-guard", "postgres://db/ids?maxlead=2s"}, 2, "add maxlead=5s to the -guard URL"},
		{"unreachable", []string{"-node", "postgres://nobody@127.0.0.1:1/ids?connect_timeout=2"}, 1, "-node: leasing a node id from postgres 127.0.0.1:1: "},
		{"guard unreachable", []string{"-node", "3", "-guard", "postgres://nobody@127.0.0.1:1/ids?connect_timeout=2"}, 1, "-guard: claiming node 3 from postgres 127.0.0.1:1: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(append([]string{"gen"}, tc.args...)...)
			assert.Equal(t, tc.code, code, errOut)
			assert.Empty(t, out)
			assert.Contains(t, errOut, tc.want)
			assert.NotContains(t, errOut, "secret")
			assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line: %q", errOut)
		})
	}
}

// lastErrorLine returns the one line of c's error, the last of its
// standard error, and fails the test unless every line before it is a
// note of an outage (a lease to hold its id again, a mark save to be
// retried, issuing again): a failing process ends with a one-line error.
func lastErrorLine(t *testing.T, c *child) string {
	t.Helper()
	text := c.stderr.String()
	require.True(t, strings.HasSuffix(text, "\n"), "%s: standard error ends with a line: %q", c.name, text)
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	for _, l := range lines[:len(lines)-1] {
		note := strings.HasSuffix(l, "; waiting for the lease to hold its id again") || strings.Contains(l, "; trying again, up to ") ||
			strings.HasPrefix(l, "ringflake: issuing again after ")
		require.True(t, note, "%s: a line before the error that is not a note: %q; standard error: %q", c.name, l, text)
	}
	last := lines[len(lines)-1]
	require.True(t, strings.HasPrefix(last, "ringflake: "), "%s: the error line: %q", c.name, last)
	return last
}
