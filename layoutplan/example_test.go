package layoutplan_test

import (
	"fmt"
	"time"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/layoutplan"
)

// Fits finds the layouts that fit a fleet: here 500 nodes issuing up to
// 100,000 IDs per second each for 50 years.
func ExampleFits() {
	fits, err := layoutplan.Fits(layoutplan.Demand{Nodes: 500, Rate: 100_000, Years: 50,
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
	m, err := layoutplan.CheckMigration(ringflake.SonyflakeLayout(), ringflake.SonyflakeV2Layout(), at)
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
