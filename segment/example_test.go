package segment_test

import (
	"context"
	"database/sql"
	"fmt"
	"log"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the driver "pgx"

	"github.com/ringflake/ringflake/segment"
)

// An order-number service: the table is created once, each process makes
// one allocator per tag at start, and every request takes a number. (The
// example needs a PostgreSQL server, so it has no // Output: comment: go
// test compiles it but does not run it. The tests run the same calls
// against a real server.)
func Example() {
	ctx := context.Background()
	db, err := sql.Open("pgx", "postgres://app@127.0.0.1:5432/app?sslmode=disable")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	if err := segment.Migrate(ctx, db); err != nil {
		log.Fatal(err)
	}
	// Orders were numbered by a SERIAL up to 1,204,331: go on from there.
	orders, err := segment.New(ctx, db, "orders", segment.WithStart(1_204_332))
	if err != nil {
		log.Fatal(err)
	}
	defer orders.Close()

	n, err := orders.Next(ctx)
	if err != nil {
		log.Fatal(err) // segment.ErrUnavailable: the database is down and the buffers are empty
	}
	fmt.Printf("order %d\n", n)
}
