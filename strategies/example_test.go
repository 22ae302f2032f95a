package strategies_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/ringflake/ringflake/strategies"
)

// A strategy usually comes from configuration: Parse reads the same
// strings the CLI's -strategy flag takes, and String gives them back.
func ExampleParse() {
	s, err := strategies.Parse("ring, wait:5ms, error")
	if err != nil {
		panic(err)
	}
	p, _ := strategies.PromiseOf(s)
	fmt.Println(s)
	fmt.Println(p)

	_, err = strategies.Parse("ring,wait:soon")
	var se *strategies.StrategyError
	fmt.Println(errors.Is(err, strategies.ErrInvalidStrategy), errors.As(err, &se) && se.Index == 2)
	fmt.Println(err)
	// Output:
	// ring,wait:5ms,error
	// unique, stalls ≤ 5ms, reuses up to the newest ID
	// true true
	// ringflake: invalid strategy "ring,wait:soon": part 2 "wait:soon": "soon" is not a duration such as 5ms or 1s
}

// waitLonger is a strategy of your own: it waits out rollbacks of up to
// a limit that depends on the time of day — longer at night, when the
// service is idle and a stall hurts nobody — and passes on longer ones.
type waitLonger struct{ day, night time.Duration }

func (w waitLonger) Decide(s strategies.Situation) strategies.Plan {
	if !s.IsBehind() {
		return strategies.Pass() // a used-up tick: the generator waits for the next
	}
	limit := w.day
	if h := time.Unix(0, 0).Add(s.Elapsed).UTC().Hour(); h < 6 {
		limit = w.night
	}
	if d := s.Behind(); s.Waited+d <= limit {
		return strategies.Sleep(d)
	}
	return strategies.Pass()
}

func (w waitLonger) String() string { return "wait-longer" }

// Promise states what the strategy keeps, so that replays check it and
// leases may bound it: it never runs ahead of the clock.
func (w waitLonger) Promise() strategies.Promise {
	return strategies.Promise{Monotonic: true, MaxStall: max(w.day, w.night)}
}

// A strategy of your own only returns plans; the generator carries them
// out, so it cannot make the generator issue an ID twice. Chain it with
// the built-ins like any other.
func ExampleStrategy() {
	s := strategies.Chain(strategies.Ring(), waitLonger{day: 5 * time.Millisecond, night: 50 * time.Millisecond}, strategies.Error())
	fmt.Println(s)

	// Twelve milliseconds behind, at noon (Elapsed counts from the epoch
	// of the layout; this one's epoch is midnight): the ring has no room,
	// so the generator asks the next step.
	noon := strategies.Situation{Elapsed: 12*time.Hour + 88*time.Millisecond, Unit: time.Millisecond, Newest: 12*3600*1000 + 100}
	fmt.Println(waitLonger{day: 5 * time.Millisecond, night: 50 * time.Millisecond}.Decide(noon))
	night := noon
	night.Elapsed -= 10 * time.Hour
	night.Newest -= 10 * 3600 * 1000
	fmt.Println(waitLonger{day: 5 * time.Millisecond, night: 50 * time.Millisecond}.Decide(night))
	p, ok := strategies.PromiseOf(s)
	fmt.Println(p, ok)
	// Output:
	// ring,wait-longer,error
	// pass
	// sleep 12ms
	// unique, stalls ≤ 50ms, reuses up to the newest ID true
}
