package ringflake_test

import (
	"context"
	"fmt"
	"time"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/simclock"
)

// NextN fills a slice. A batch larger than a tick's 4,096 sequence numbers
// waits for the next tick for the rest; on the simulated clock that wait
// takes no real time.
func ExampleGenerator_NextN() {
	clk := simclock.New(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	gen, err := ringflake.New(7, ringflake.WithClock(clk))
	if err != nil {
		panic(err)
	}
	ids := make([]ringflake.ID, 5000)
	n, err := gen.NextN(context.Background(), ids)
	if err != nil {
		panic(err)
	}
	l := gen.Layout()
	show := func(id ringflake.ID) {
		fmt.Println(id.Time(l).Format("15:04:05.000"), id.Node(l), id.Sequence(l))
	}
	increasing := true
	for i := 1; i < n; i++ {
		increasing = increasing && ids[i] > ids[i-1]
	}
	fmt.Println(n, "IDs, strictly increasing:", increasing)
	show(ids[0])
	show(ids[n-1])
	// Output:
	// 5000 IDs, strictly increasing: true
	// 12:00:00.000 7 0
	// 12:00:00.001 7 903
}

// At one ID per tick every ID has sequence 0, so id % 16 is always 0 in
// the Twitter layout, whose low bits are the sequence. WithSequenceOffset
// starts each tick at a random sequence number, and the IDs spread over
// all 16 shards. In Sonyflake's layout the low bits are the node: shard by
// the sequence there.
func ExampleWithSequenceOffset() {
	shards := func(layout ringflake.Layout, offset int, shard func(ringflake.ID) int64) int {
		clk := simclock.New(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
		gen, err := ringflake.New(7, ringflake.WithClock(clk), ringflake.WithLayout(layout),
			ringflake.WithSequenceOffset(offset))
		if err != nil {
			panic(err)
		}
		seen := map[int64]bool{}
		for range 1000 {
			id, err := gen.Next()
			if err != nil {
				panic(err)
			}
			seen[shard(id)] = true
			clk.Add(layout.Spec().Unit) // one ID per tick
		}
		return len(seen)
	}
	mod16 := func(id ringflake.ID) int64 { return int64(id) % 16 }
	twitter, sonyflake := ringflake.TwitterLayout(), ringflake.SonyflakeLayout()
	seq16 := func(id ringflake.ID) int64 { return id.Sequence(sonyflake) % 16 }

	fmt.Println("twitter, id % 16:", shards(twitter, 0, mod16), "->", shards(twitter, 4096, mod16))
	fmt.Println("sonyflake, id % 16:", shards(sonyflake, 0, mod16), "->", shards(sonyflake, 256, mod16))
	fmt.Println("sonyflake, sequence % 16:", shards(sonyflake, 0, seq16), "->", shards(sonyflake, 256, seq16))
	// Output:
	// twitter, id % 16: 1 -> 16
	// sonyflake, id % 16: 1 -> 1
	// sonyflake, sequence % 16: 1 -> 16
}
