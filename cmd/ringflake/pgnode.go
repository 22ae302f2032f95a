package main

import (
	"context"
	"errors"
	"net"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ringflake/ringflake/lease"
	"github.com/ringflake/ringflake/pglease"
)

// isPostgres reports whether a -node or -guard value names PostgreSQL.
func isPostgres(spec string) bool {
	return strings.HasPrefix(spec, "postgres://") || strings.HasPrefix(spec, "postgresql://")
}

// parsePostgres parses a postgres:// or postgresql:// URL: the lease
// options of its query (prefix, ttl, maxlead) go to the lease, everything
// else — sslmode, connect_timeout, pool_max_conns, … — to pgx, which
// checks it.
func (s *server) parsePostgres() error {
	u, err := url.Parse(s.spec)
	if err != nil {
		return badValuef("%s %q: %v", s.flag, s.spec, err)
	}
	if u.Hostname() == "" {
		return badValuef("%s %q: no host; want %s://[USER[:PASS]@]HOST[:PORT]/DB[?…]", s.flag, s.spec, u.Scheme)
	}
	rest, err := s.leaseQuery(u.Query())
	if err != nil {
		return err
	}
	u.RawQuery = rest.Encode()
	if s.pg, err = pgxpool.ParseConfig(u.String()); err != nil {
		return badValuef("%s %q: %v", s.flag, u.Redacted(), err)
	}
	s.where = "postgres " + net.JoinHostPort(u.Hostname(), defaultPort(u.Port()))
	return nil
}

// defaultPort returns port, or PostgreSQL's default port when it is
// empty.
func defaultPort(port string) string {
	if port == "" {
		return "5432"
	}
	return port
}

// takePostgres opens a pool of the server, and acquires a node id (id < 0)
// or claims id. When the lease tables do not exist yet, it creates them
// (pglease.Migrate) and tries once more. It returns how to close the pool,
// also when it fails.
func (s *server) takePostgres(ctx context.Context, opts lease.Options, id int64) (heldLease, func() error, error) {
	pool, err := pgxpool.NewWithConfig(ctx, s.pg)
	if err != nil {
		return nil, func() error { return nil }, err
	}
	closePool := func() error { pool.Close(); return nil }
	take := func() (*pglease.Lease, error) {
		if id < 0 {
			return pglease.Acquire(ctx, pool, opts)
		}
		return pglease.Claim(ctx, pool, id, opts)
	}
	l, err := take()
	if errors.Is(err, pglease.ErrNoSchema) {
		if err = pglease.Migrate(ctx, pool); err == nil {
			l, err = take()
		}
	}
	if err != nil {
		return nil, closePool, err
	}
	return l, closePool, nil
}
