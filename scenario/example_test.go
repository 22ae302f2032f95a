package scenario_test

import (
	"context"
	"fmt"
	"time"

	"github.com/ringflake/ringflake/scenario"
	"github.com/ringflake/ringflake/strategies"
)

// Replay a small NTP step back against two strategies: the error strategy
// fails while the clock is behind, the ring stays available by reusing
// sequence numbers earlier ticks left spare, out of time order.
func ExampleReplay() {
	s, err := scenario.Parse("small-step.yaml", []byte(`
# chronyd steps the clock back 3 ms.
start: 2026-11-22T12:00:00Z
duration: 40ms
load: {rate: 10/ms}
events:
  - {at: 20ms, step: -3ms}
expect:
  ring: {available: true}
  error: {available: true}
`))
	if err != nil {
		panic(err)
	}
	for _, st := range []strategies.Strategy{strategies.Error(), strategies.Ring()} {
		r, err := scenario.Replay(context.Background(), s, st)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s: issued %d, errors %v, out of order %d, ok %v\n", r.Strategy, r.Issued, r.Errors, r.OutOfOrder, r.OK())
		for _, u := range r.Unmet {
			fmt.Println(" ", u)
		}
	}
	// Output:
	// error: issued 380, errors rollback=20, out of order 0, ok false
	//   small-step.yaml:10: expect.error.available: want true, got false
	// ring: issued 400, errors 0, out of order 20, ok true
}

// Replay a crash during a rollback. The new process starts after the
// high-water mark the old one saved ahead of its IDs. The clock reads
// behind the mark's Since, the newest the old process knew of when it
// saved the mark: that part is a rollback, and the error strategy fails
// until the clock passes Since. The rest is the reservation the old
// process saved ahead, which the error strategy waits out and the logical
// strategy borrows across.
func ExampleReplay_restart() {
	s, err := scenario.Parse("crash.yaml", []byte(`
# The process crashes 5 ms after chronyd steps the clock back 100 ms.
start: 2026-11-22T12:00:00Z
duration: 350ms
mark_ahead: 100ms
load: {rate: 10/ms}
events:
  - {at: 200ms, step: -100ms}
  - {at: 205ms, restart: crash}
`))
	if err != nil {
		panic(err)
	}
	for _, st := range []strategies.Strategy{strategies.Error(), strategies.Logical(time.Second)} {
		r, err := scenario.Replay(context.Background(), s, st)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s: issued %d, errors %v, duplicates %d, out of order %d, max lead %v\n",
			r.Strategy, r.Issued, r.Errors, r.Duplicates, r.OutOfOrder, r.MaxLead)
		fmt.Println(" ", r.Restarts[0])
	}
	// Output:
	// error: issued 2970, errors rollback=530, duplicates 0, out of order 0, max lead 0s
	//   at 205ms: crash, 148ms behind the mark (rollback 48ms, reservation 100ms), 480 failed, max stall 101ms, reservation wait 101ms
	// logical:1s: issued 3500, errors 0, duplicates 0, out of order 0, max lead 149ms
	//   at 205ms: crash, 148ms behind the mark (rollback 48ms, reservation 100ms), 0 failed, max stall 0s, reservation wait 0s
}

// A Recorder turns samples of a host's wall and monotonic clocks into
// scenario events.
func ExampleRecorder() {
	var r scenario.Recorder
	wall := recStart
	for i := range 100 { // samples every 10 ms; the wall clock steps back 3 ms after 0.5 s
		mono := time.Duration(i) * 10 * time.Millisecond
		if i == 50 {
			wall = wall.Add(-3 * time.Millisecond)
		}
		r.Observe(wall.Add(mono), mono)
	}
	for _, ev := range r.Events() {
		fmt.Println(ev)
	}
	// Output: at 500ms: step -3ms
}
