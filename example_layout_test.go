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

// Plan finds the layouts that fit a fleet: here 500 nodes issuing up to
// 100,000 IDs per second each for 50 years.
func ExamplePlan() {
	fits, err := ringflake.Plan(ringflake.Demand{Nodes: 500, Rate: 100_000, Years: 50,
		Epoch: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		panic(err)
	}
	best := fits[0]
	fmt.Println(best.Layout)
	fmt.Printf("nodes ×%.2f, rate ×%.2f, years ×%.2f\n", best.Nodes, best.Rate, best.Years)
	// Output:
	// epoch=2026-01-01T00:00:00Z,unit=1ms,time=43,node=11,seq=9
	// nodes ×4.10, rate ×5.12, years ×5.57
}

// A later epoch breaks ORDER BY id: v2's IDs count from 2025, v1's from
// 2014, so v2's stay below v1's of the same time.
func ExampleCheckMigration() {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m, err := ringflake.CheckMigration(ringflake.SonyflakeLayout(), ringflake.SonyflakeV2Layout(), at)
	if err != nil {
		panic(err)
	}
	fmt.Println("ok:", m.OK)
	fmt.Println("first new ID", m.First, "last old ID", m.Last)
	fmt.Println("earliest cut-over:", m.Cutover.IsZero())
	fmt.Println("new IDs pass the old from", m.CatchUp.Format(time.DateOnly))
	// Output:
	// ok: false
	// first new ID 52908628377600000 last old ID 600114305433599999
	// earliest cut-over: true
	// new IDs pass the old from 2036-05-03
}
