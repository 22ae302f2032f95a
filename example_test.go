package ringflake_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/hostlocal"
	"github.com/ringflake/ringflake/layoutplan"
	"github.com/ringflake/ringflake/simclock"
	"github.com/ringflake/ringflake/strategies"
)

func Example() {
	// A simulated clock makes the example deterministic; in production
	// leave WithClock out to use the system clock.
	clk := simclock.New(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	gen, err := ringflake.New(7, ringflake.WithClock(clk))
	if err != nil {
		panic(err)
	}
	for range 3 {
		id, err := gen.Next()
		if err != nil {
			panic(err)
		}
		fmt.Println(id)
	}
	// Output:
	// 2124472963691474944
	// 2124472963691474945
	// 2124472963691474946
}

func ExampleLayout_Decompose() {
	l := ringflake.TwitterLayout()
	p, err := l.Decompose(1541815603606036480)
	if err != nil {
		panic(err)
	}
	fmt.Println(p.Time.Format(time.RFC3339Nano), p.Datacenter, p.Worker, p.Sequence)
	// Output: 2022-06-28T16:07:40.105Z 11 26 0
}

func ExampleLayout_Compose() {
	l := ringflake.TwitterLayout()
	node, _ := l.NodeID(3, 17)
	id, err := l.Compose(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), node, 5)
	if err != nil {
		panic(err)
	}
	fmt.Println(id, id.Node(l), id.Sequence(l))
	// Output: 2006515713439109125 113 5
}

func ExampleParseLayout() {
	l, err := ringflake.ParseLayout("sonyflake,epoch=2024-01-01T00:00:00Z")
	if err != nil {
		panic(err)
	}
	fmt.Println(l.Spec().Unit, l.MaxNode(), layoutplan.Capacity(l), l.Last().Format(time.DateOnly))

	_, err = ringflake.ParseLayout("twitter,seq=13")
	fmt.Println(errors.Is(err, ringflake.ErrInvalidLayout))
	// Output:
	// 10ms 65535 25600 2198-03-18
	// true
}

// The ring keeps a generator available through a step back: the IDs it
// issues meanwhile reuse sequence numbers recent ticks left unused.
func ExampleGenerator_Next_rollback() {
	clk := simclock.New(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	gen, _ := ringflake.New(0, ringflake.WithClock(clk), ringflake.WithStrategy(strategies.Ring()))
	l := gen.Layout()
	show := func(id ringflake.ID) {
		fmt.Println(id.Time(l).Format("15:04:05.000"), id.Sequence(l))
	}
	for range 3 {
		id, _ := gen.Next()
		show(id)
		clk.Add(time.Millisecond)
	}
	clk.Step(-2 * time.Millisecond) // NTP steps the clock back
	clk.Add(time.Millisecond)       // seen from the next tick on
	id, _ := gen.Next()
	show(id)
	// Output:
	// 12:00:00.000 0
	// 12:00:00.001 0
	// 12:00:00.002 0
	// 12:00:00.002 1
}

// The error strategy refuses to issue while the clock is behind and says
// by how much.
func ExampleGenerator_Next_error() {
	clk := simclock.New(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	gen, _ := ringflake.New(0, ringflake.WithClock(clk), ringflake.WithStrategy(strategies.Error()))
	_, _ = gen.Next()
	clk.Step(-5 * time.Millisecond)
	clk.Add(time.Millisecond)
	_, err := gen.Next()
	var re *strategies.RollbackError
	fmt.Println(errors.Is(err, ringflake.ErrClockRollback), errors.As(err, &re), re.Behind)
	// Output: true true 4ms
}

// Stats counts what a generator did; here a rollback the ring absorbed.
func ExampleGenerator_Stats() {
	clk := simclock.New(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	gen, _ := ringflake.New(0, ringflake.WithClock(clk))
	for range 3 {
		_, _ = gen.Next()
		clk.Add(time.Millisecond)
	}
	clk.Step(-3 * time.Millisecond) // back to the tick of the second ID
	clk.Add(time.Millisecond)
	_, _ = gen.Next()

	s := gen.Stats()
	fmt.Println("issued", s.Issued, "rollbacks", s.Rollbacks, "largest", s.LargestRollback, "ring reuses", s.RingReuses)
	// Output: issued 4 rollbacks 1 largest 3ms ring reuses 1
}

// A hook hears of each rollback once, with the strategy step that handled
// it and how the call ended; WithLogger does the same through log/slog.
func ExampleWithRollbackHook() {
	clk := simclock.New(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	hook := func(e ringflake.RollbackEvent) {
		outcome := "issued"
		if e.Err != nil {
			outcome = "failed"
		}
		fmt.Printf("clock %v behind, %s answered, call %s after waiting %v\n", e.Behind, e.Strategy, outcome, e.Waited)
	}
	gen, _ := ringflake.New(0, ringflake.WithClock(clk), ringflake.WithRollbackHook(hook),
		ringflake.WithStrategy(strategies.Wait(5*time.Millisecond)))
	_, _ = gen.Next()
	clk.Step(-4 * time.Millisecond)
	clk.Add(time.Millisecond)
	for range 3 {
		_, _ = gen.Next() // one event, not three
	}
	// Output: clock 3ms behind, wait:5ms answered, call issued after waiting 3ms
}

// A generator with a mark store is restart-safe: it saves a high-water
// mark ahead of what it issues and never issues at or below the mark of
// a previous run, whatever the clock says. Close it on shutdown: it saves
// the exact mark, so that a clean restart need not wait out the lead a
// crash would leave. (A hostlocal.MarkFile keeps the mark in a file.)
func ExampleWithMarkStore() {
	dir, err := os.MkdirTemp("", "ringflake-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "node7.mark")
	clk := simclock.New(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	ctx := context.Background()

	first, err := ringflake.New(7, ringflake.WithClock(clk), ringflake.WithMarkStore(hostlocal.NewMarkFile(path)))
	if err != nil {
		panic(err)
	}
	id, _ := first.Next()
	fmt.Println("first run: ", id)
	if err := first.Close(ctx); err != nil { // saves the exact mark: the newest ID's time
		panic(err)
	}

	clk.Step(-time.Second) // the host's clock steps back a second before the restart
	second, err := ringflake.New(7, ringflake.WithClock(clk), ringflake.WithMarkStore(hostlocal.NewMarkFile(path)),
		ringflake.WithStrategy(strategies.Logical(2*time.Second)))
	if err != nil {
		panic(err)
	}
	defer second.Close(ctx)
	id2, _ := second.Next()
	fmt.Println("second run:", id2, id2 > id)
	// Output:
	// first run:  2124472963691474944
	// second run: 2124472963695669248 true
}
