package simclock_test

import (
	"fmt"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/ringflake/ringflake/simclock"
)

// The wall clock can be set back; the monotonic clock cannot.
func Example() {
	start := time.Date(2024, time.March, 1, 12, 0, 0, 0, time.UTC)
	c := simclock.New(start)

	c.Sleep(2 * time.Second) // returns at once
	c.Step(-5 * time.Second) // an NTP step back
	c.Add(time.Second)

	fmt.Println("wall:", c.Now().Format(time.TimeOnly))
	fmt.Println("monotonic:", c.Monotonic())
	// Output:
	// wall: 11:59:58
	// monotonic: 3s
}

// A rollback: the wall clock reads earlier than a reading taken before it,
// while the monotonic reading is unchanged.
func ExampleClock_Step() {
	c := simclock.New(time.Date(2024, time.March, 1, 12, 0, 0, 0, time.UTC))
	c.Add(time.Second)
	before, mono := c.Now(), c.Monotonic()

	c.Step(-300 * time.Millisecond)

	fmt.Println("wall moved:", c.Now().Sub(before))
	fmt.Println("monotonic moved:", c.Monotonic()-mono)
	// Output:
	// wall moved: -300ms
	// monotonic moved: 0s
}

// Adding a negative duration steps the wall clock back: true time cannot go
// back.
func ExampleClock_Add() {
	start := time.Date(2024, time.March, 1, 12, 0, 0, 0, time.UTC)
	c := simclock.New(start)
	c.Add(10 * time.Second)
	c.Add(-4 * time.Second)
	fmt.Println(c.Since(start), c.Monotonic())
	// Output: 6s 10s
}

// A scripted scenario: a step back at 1s, a freeze at 3s and a slow clock
// from 5s, replayed by letting time pass.
func ExampleClock_Schedule() {
	start := time.Date(2024, time.March, 1, 12, 0, 0, 0, time.UTC)
	c := simclock.New(start)
	err := c.Schedule(
		simclock.Event{At: 1 * time.Second, Kind: simclock.Step, D: -1500 * time.Millisecond},
		simclock.Event{At: 3 * time.Second, Kind: simclock.Freeze, D: time.Second},
		simclock.Event{At: 5 * time.Second, Kind: simclock.Drift, Rate: -0.5},
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	for range 7 {
		c.Sleep(time.Second)
		fmt.Printf("monotonic %v  wall %v\n", c.Monotonic(), c.Since(start))
	}
	// Output:
	// monotonic 1s  wall -500ms
	// monotonic 2s  wall 500ms
	// monotonic 3s  wall 1.5s
	// monotonic 4s  wall 1.5s
	// monotonic 5s  wall 2.5s
	// monotonic 6s  wall 3s
	// monotonic 7s  wall 3.5s
}

// Schedule rejects a bad script as a whole and tells which event is wrong.
func ExampleClock_Schedule_invalid() {
	c := simclock.New(time.Date(2024, time.March, 1, 12, 0, 0, 0, time.UTC))
	err := c.Schedule(
		simclock.Event{At: time.Second, Kind: simclock.Step, D: -time.Millisecond},
		simclock.Event{At: 2 * time.Second, Kind: simclock.Freeze},
	)
	fmt.Println(err)
	fmt.Println(len(c.Pending()), "events scheduled")
	// Output:
	// simclock: invalid event 1 (at 2s: freeze 0s): D: a freeze of 0s must be > 0
	// 0 events scheduled
}

// While frozen the wall clock stands still; afterwards it is behind by the
// length of the freeze.
func ExampleClock_Freeze() {
	start := time.Date(2024, time.March, 1, 12, 0, 0, 0, time.UTC)
	c := simclock.New(start)
	c.Freeze(2 * time.Second)
	for range 3 {
		c.Add(time.Second)
		fmt.Println(c.Since(start), c.Monotonic())
	}
	// Output:
	// 0s 1s
	// 0s 2s
	// 1s 3s
}

// A clock that runs 0.5 % slow loses exactly 18 seconds an hour.
func ExampleClock_SetDrift() {
	start := time.Date(2024, time.March, 1, 12, 0, 0, 0, time.UTC)
	c := simclock.New(start)
	if err := c.SetDrift(-0.005); err != nil {
		fmt.Println(err)
		return
	}
	c.Add(time.Hour)
	fmt.Println(c.Since(start))
	// Output: 59m42s
}

// After lets the time pass at once; the channel already holds the reading.
func ExampleClock_After() {
	start := time.Date(2024, time.March, 1, 12, 0, 0, 0, time.UTC)
	c := simclock.New(start)
	t := <-c.After(5 * time.Millisecond)
	fmt.Println(t.Sub(start), c.Monotonic())
	// Output: 5ms 5ms
}

// Wrap lays steps and scripts over another clock, here a *clock.Mock.
func ExampleWrap() {
	mock := clock.NewMock()
	c := simclock.Wrap(mock)
	start := c.Now()
	if err := c.Schedule(simclock.Event{At: time.Second, Kind: simclock.Step, D: -time.Minute}); err != nil {
		fmt.Println(err)
		return
	}

	mock.Add(2 * time.Second) // time passes on the base clock only

	fmt.Println(c.Since(start), c.Monotonic())
	// Output: -58s 2s
}
