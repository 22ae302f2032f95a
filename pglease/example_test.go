package pglease_test

import (
	"context"
	"errors"
	"log"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/lease"
	"github.com/ringflake/ringflake/pglease"
)

// A service leases its node id from PostgreSQL — directly or through
// PgBouncer in transaction pooling mode — issues IDs under it, logs the
// lease's events with slog, and restarts with a new lease when it loses
// this one. (No Output: it needs a PostgreSQL server.)
func Example() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, "postgres://app@127.0.0.1:6432/app?sslmode=disable")
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	if err := pglease.Migrate(ctx, pool); err != nil { // once per database; idempotent
		log.Fatal(err)
	}

	l, err := pglease.Acquire(ctx, pool, pglease.Options{
		Prefix: "orders",         // the fleet sharing the ids
		TTL:    10 * time.Second, // a crashed holder's id is free again after 10 s
		OnEvent: func(e lease.Event) { // renewals, failures, expiry, retakes, loss
			level := slog.LevelDebug
			if e.Kind != lease.Renewed {
				level = slog.LevelWarn
			}
			slog.Log(ctx, level, "node id lease", "event", e.Kind.String(), "node", e.Node, "valid_until", e.ValidUntil, "err", e.Err)
		},
	})
	if errors.Is(err, ringflake.ErrNodeUnavailable) {
		log.Fatal("every node id is in use: ", err)
	} else if err != nil {
		log.Fatal(err)
	}
	// The first lease under a prefix, or the first after the tables lost
	// the prefix's data or the server failed over, waits out a quiet
	// period (TTL + Margin + MaxLead) before it holds its id; normally
	// this returns at once.
	if err := l.WaitHeld(ctx); err != nil {
		log.Fatal(err)
	}
	gen, err := ringflake.New(l.Node(), ringflake.WithLease(l)) // the mark is kept in the id's row
	if err != nil {
		log.Fatal(err)
	}
	go func() {
		<-l.Done() // lost for good (or closed): acquire a new lease, start a new generator
		log.Print(l.Err())
	}()

	id, err := gen.Next()
	if errors.Is(err, ringflake.ErrLeaseLost) {
		// PostgreSQL unreachable for longer than the lease can be valid:
		// nothing is issued until a renewal succeeds.
	}
	log.Print(id)

	// Generator first: its Close saves the exact mark through the lease.
	_ = gen.Close(ctx)
	_ = l.Close(ctx)
}
