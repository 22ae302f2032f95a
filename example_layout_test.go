package ringflake_test

import (
	"fmt"
	"time"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/simclock"
)

// A team moving a Sonyflake fleet to ringflake reads an ID it already
// has, then issues new IDs on the same machine id above it — Sonyflake's
// bits, ringflake's rollback handling. WithExistingID (here the newest ID
// of the table, MAX(id)) makes New refuse to start below it.
func Example_fromSonyflake() {
	l := ringflake.SonyflakeLayout()
	existing := ringflake.ID(601766190104641587) // from the table: SELECT max(id) ...
	p, err := l.Decompose(existing)
	if err != nil {
		panic(err)
	}
	fmt.Println("existing:", p.Time.Format(time.RFC3339Nano), "machine", p.Node, "sequence", p.Sequence)

	clk := simclock.New(time.Date(2026, 1, 12, 9, 30, 0, 0, time.UTC)) // leave WithClock out in production
	gen, err := ringflake.New(p.Node, ringflake.WithLayout(l), ringflake.WithClock(clk), ringflake.WithExistingID(existing))
	if err != nil {
		panic(err)
	}
	for range 2 {
		id, err := gen.Next()
		if err != nil {
			panic(err)
		}
		fmt.Println(id, id > existing, "machine", id.Node(l), "sequence", id.Sequence(l))
	}
	// Output:
	// existing: 2026-01-12T09:29:59.99Z machine 51 sequence 7
	// 601766190120960051 true machine 51 sequence 0
	// 601766190121025587 true machine 51 sequence 1
}

// MinID and MaxID bound the IDs of a time range for WHERE id BETWEEN.
func ExampleLayout_Bounds() {
	l := ringflake.TwitterLayout()
	lo, hi, err := l.Bounds(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 31, 23, 59, 59, 999e6, time.UTC))
	if err != nil {
		panic(err)
	}
	fmt.Printf("SELECT * FROM orders WHERE id BETWEEN %d AND %d\n", lo, hi)
	// Output: SELECT * FROM orders WHERE id BETWEEN 2006515713438646272 AND 2017749737272246271
}
